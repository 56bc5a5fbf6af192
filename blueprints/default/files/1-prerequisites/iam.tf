# Extra permissions for the kops instance roles (control plane and nodes, and so
# Karpenter's nodes, which use the nodes role). kops attaches them through
# spec.externalPolicies in 2-kops/cluster-template.yaml.
#
# ec2:DescribeTags: kops' own policies only allow autoscaling:DescribeTags, and
# boot scripts that read the instance's EC2 tags then fail or wait, which makes
# nodes join slowly (tags propagate late on some instances).
# The action supports no resource-level permissions, hence Resource "*".
resource "aws_iam_policy" "node_extras" {
  name        = "${local.name_prefix}-node-extras"
  description = "Extra permissions for the kops instance roles of ${var.cluster_name}"

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "ReadInstanceTags"
      Effect   = "Allow"
      Action   = ["ec2:DescribeTags"]
      Resource = "*"
    }]
  })
}

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  name_prefix = "${var.name}-${var.environment}"
  account_id  = data.aws_caller_identity.current.account_id
  partition   = data.aws_partition.current.partition
  # amazonaws.com, or amazonaws.com.cn in aws-cn: service principals and
  # kms:ViaService names end in it; com.amazonaws (cn.com.amazonaws) prefixes
  # VPC endpoint service names.
  dns_suffix         = data.aws_partition.current.dns_suffix
  reverse_dns_prefix = data.aws_partition.current.reverse_dns_prefix

  # S3 bucket names are global and at most 63 characters: a shortened prefix,
  # a purpose and the account id keep them unique and short enough.
  bucket_base = trimsuffix(substr(local.name_prefix, 0, 38), "-")

  # tags.yaml's extraTags first: the platform's own tags win a clash.
  extra_tags = { for k, v in yamldecode(file("${path.module}/tags.yaml")).extraTags : k => tostring(v) }
  tags = merge(local.extra_tags, {
    "platform"    = var.name
    "environment" = var.environment
    "managed-by"  = "terraform"
  })

  # What kops needs on the subnets it uses but does not own (with
  # --target=terraform kops never tags shared subnets itself).
  cluster_tag = "kubernetes.io/cluster/${var.cluster_name}"
  # kops' tag for the subnets of a Karpenter-managed instance group (karpenter-nodes).
  karpenter_subnet_tag = "kops.k8s.io/instance-group/karpenter-nodes"
}

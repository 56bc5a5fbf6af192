data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  # Unique per environment by construction (blueprint.yaml aws_names: shortened with a
  # hash, never cut).
  name_prefix = var.name_prefix
  account_id  = data.aws_caller_identity.current.account_id
  partition   = data.aws_partition.current.partition
  # amazonaws.com, or amazonaws.com.cn in aws-cn: service principals and
  # kms:ViaService names end in it; com.amazonaws (cn.com.amazonaws) prefixes
  # VPC endpoint service names.
  dns_suffix         = data.aws_partition.current.dns_suffix
  reverse_dns_prefix = data.aws_partition.current.reverse_dns_prefix

  # S3 bucket names are global and at most 63 characters: the environment's
  # bucket prefix (at most 38), a purpose and the account id keep them unique.
  bucket_base = var.bucket_prefix

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

# What the two other roots know, read from their applied state in the S3 bucket
# of ../terraform-backend.hcl (the Makefile passes its bucket as var.state_bucket).
data "terraform_remote_state" "prerequisites" {
  backend = "s3"

  config = {
    bucket = var.state_bucket
    key    = "1-prerequisites/terraform.tfstate"
    region = var.state_region
  }
}

data "terraform_remote_state" "kops" {
  backend = "s3"

  config = {
    bucket = var.state_bucket
    key    = "2-kops/terraform.tfstate"
    region = var.state_region
  }
}

locals {
  prerequisites = data.terraform_remote_state.prerequisites.outputs
  kops          = data.terraform_remote_state.kops.outputs

  cluster_name   = local.prerequisites.cluster_name
  region         = local.prerequisites.region
  account_id     = local.prerequisites.account_id
  vpc_id         = local.prerequisites.vpc_id
  dns_zone       = local.prerequisites.dns_zone    # "" without DNS
  hosted_zone_id = local.prerequisites.dns_zone_id # "" without DNS

  # The API endpoint kops wrote into the kubeconfig for this cluster.
  cluster_api_endpoint = one([
    for cluster in yamldecode(file(var.kubeconfig_path)).clusters : cluster.cluster.server
    if cluster.name == var.kube_context
  ])

  # IRSA role ARN by "<namespace>_<serviceaccount>" ('-' written '_'), taken
  # from kops' <namespace>-<serviceaccount>_role_arn outputs: kops truncates
  # and hashes long role names, so an ARN is never built from a convention.
  irsa_role_arns = {
    for name, arn in local.kops.irsa_role_arns :
    replace(trimsuffix(name, "_role_arn"), "-", "_") => arn
  }

  # Karpenter's nodes are kops' instance group karpenter-nodes: kops' node
  # instance profile (nodes.<cluster>) and security group, the image kops runs
  # on the `nodes` group, and the group's nodeup script, all from the applied
  # state of 2-kops (never from files in a work tree).
  karpenter_node_instance_profile = local.kops.nodes_instance_profile_name
  karpenter_node_image_id         = local.kops.nodes_image_id
  node_security_group_id          = local.kops.node_security_group_ids[0]
  # A JSON string, so that `userData: ${KARPENTER_NODE_USER_DATA}` in the
  # EC2NodeClass becomes a valid double-quoted YAML scalar after substitution.
  karpenter_node_user_data = jsonencode(local.kops.karpenter_nodes_user_data)
}

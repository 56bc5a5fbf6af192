# What the two other roots know, read from their (local) state. With a remote
# backend, switch both to backend "s3" and the same bucket/key as those roots.
data "terraform_remote_state" "prerequisites" {
  backend = "local"

  config = {
    path = "${path.module}/../1-prerequisites/terraform.tfstate"
  }
}

data "terraform_remote_state" "kops" {
  backend = "local"

  config = {
    path = "${path.module}/../2-kops/terraform.tfstate"
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

  # Karpenter's nodes are kops nodes of the `nodes` group: same IAM role, same
  # security group, same nodeup bootstrap script (the launch template user data
  # kops wrote for that group).
  karpenter_node_role    = local.kops.nodes_role_name
  node_security_group_id = local.kops.node_security_group_ids[0]
  # A JSON string, so that `userData: ${KARPENTER_NODE_USER_DATA}` in the
  # EC2NodeClass becomes a valid double-quoted YAML scalar after substitution.
  karpenter_node_user_data = jsonencode(file("${path.module}/../2-kops/kops-tf/data/aws_launch_template_nodes.${local.cluster_name}_user_data"))
}

# What 3-bridge reads from this root (through terraform_remote_state): kops
# output names, re-exported.

output "cluster_name" {
  description = "kops cluster name."
  value       = module.kops.cluster_name
}

output "nodes_role_name" {
  description = "IAM role of the nodes group; Karpenter's EC2NodeClass uses it too."
  value       = module.kops.nodes_role_name
}

output "nodes_role_arn" {
  description = "ARN of the nodes IAM role."
  value       = module.kops.nodes_role_arn
}

output "node_security_group_ids" {
  description = "Security groups of the nodes group; Karpenter's nodes join them."
  value       = module.kops.node_security_group_ids
}

output "iam_openid_connect_provider_arn" {
  description = "IAM OIDC provider of the cluster's service-account issuer."
  value       = module.kops.iam_openid_connect_provider_arn
}

# kops outputs one <namespace>-<serviceaccount>_role_arn per IRSA role
# (iam.serviceAccountExternalPermissions) besides the instance roles' ARNs.
# The role names are truncated and hashed when long, so the ARNs are always
# taken from these outputs, never built from a naming convention.
output "irsa_role_arns" {
  description = "IRSA role ARN by kops output name (<namespace>-<serviceaccount>_role_arn)."
  value = {
    for name, value in module.kops : name => value
    if endswith(name, "_role_arn") && !contains(["masters_role_arn", "nodes_role_arn", "bastions_role_arn", "apiservers_role_arn"], name)
  }
}

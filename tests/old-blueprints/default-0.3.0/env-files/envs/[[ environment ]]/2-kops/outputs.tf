# What 3-bridge reads from this root (through terraform_remote_state): kops
# output names, re-exported.

output "cluster_name" {
  description = "kops cluster name."
  value       = module.kops.cluster_name
}

output "nodes_role_name" {
  description = "IAM role of the nodes groups (nodes and karpenter-nodes)."
  value       = module.kops.nodes_role_name
}

output "nodes_role_arn" {
  description = "ARN of the nodes IAM role."
  value       = module.kops.nodes_role_arn
}

output "node_security_group_ids" {
  description = "Security groups of the node groups; Karpenter's nodes join them."
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

# Karpenter's nodes (kops-tf/scaffold.tf, from kops-module.tf.tmpl): recorded in
# this root's state by the same apply that uploads the nodeup config, so the
# bridge never publishes user data that does not match it.
output "karpenter_nodes_user_data" {
  description = "nodeup script of the instance group karpenter-nodes (EC2NodeClass userData)."
  value       = module.kops.karpenter_nodes_user_data
}

output "nodes_image_id" {
  description = "AMI kops resolved for the nodes group; Karpenter's nodes run the same image."
  value       = module.kops.nodes_image_id
}

output "nodes_instance_profile_name" {
  description = "kops' node instance profile (nodes.<cluster>); the EC2NodeClass uses it."
  value       = module.kops.nodes_instance_profile_name
}

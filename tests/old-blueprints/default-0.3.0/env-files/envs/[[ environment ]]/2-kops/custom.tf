# Your own resources next to the cluster (extra IAM roles, queues, databases,
# certificates...). They may use the cluster's outputs, for example
# module.kops.nodes_role_name or module.kops.node_security_group_ids.
# kops regenerates kops-tf/ but never touches this file.

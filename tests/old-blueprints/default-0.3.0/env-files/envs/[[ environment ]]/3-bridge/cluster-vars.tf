# flux-system/cluster-vars: the variables every Flux Kustomization substitutes
# (postBuild.substituteFrom). Keys are UPPER_SNAKE: any other key breaks
# substitution for the whole Kustomization.
#
# Several writers share this ConfigMap: the keys below, and the role ARN key
# of every addon with IAM (e.g. KARPENTER_ROLE_ARN, in addon-karpenter.tf). Each writes its
# own keys with server-side apply (kubernetes_config_map_v1_data, one field
# manager each), so adding or removing an addon never rewrites the others.
# The ConfigMap itself only carries the metadata, and ignores its data.
resource "kubernetes_config_map_v1" "cluster_vars" {
  metadata {
    name      = "cluster-vars"
    namespace = "flux-system"
    labels = {
      # Flux reconciles the Kustomizations using it when it changes.
      "reconcile.fluxcd.io/watch"    = "Enabled"
      "app.kubernetes.io/managed-by" = "terraform"
    }
  }

  lifecycle {
    ignore_changes = [data, binary_data]
  }
}

resource "kubernetes_config_map_v1_data" "cluster_vars" {
  metadata {
    name      = "cluster-vars"
    namespace = "flux-system"
  }

  field_manager = "scaffold-bridge"
  force         = true

  data = {
    CLUSTER_NAME                     = local.cluster_name
    AWS_REGION                       = local.region
    AWS_ACCOUNT_ID                   = local.account_id
    VPC_ID                           = local.vpc_id
    CLUSTER_DOMAIN                   = local.dns_zone
    HOSTED_ZONE_ID                   = local.hosted_zone_id
    CLUSTER_API_ENDPOINT             = local.cluster_api_endpoint
    KARPENTER_NODE_INSTANCE_PROFILE  = local.karpenter_node_instance_profile
    KARPENTER_NODE_IMAGE_ID          = local.karpenter_node_image_id
    KARPENTER_NODE_SECURITY_GROUP_ID = local.node_security_group_id
    KARPENTER_NODE_USER_DATA         = local.karpenter_node_user_data
  }

  lifecycle {
    precondition {
      condition     = local.cluster_api_endpoint != null
      error_message = "${var.kubeconfig_path} has no cluster named ${var.kube_context}: run make kubeconfig in ../2-kops."
    }
  }

  depends_on = [kubernetes_config_map_v1.cluster_vars]
}

variable "kubeconfig_path" {
  description = "kubeconfig with an admin context for the cluster."
  type        = string
  default     = "../2-kops/kubeconfig"
}

variable "kube_context" {
  description = "kubeconfig context of the cluster (kops names it after the cluster)."
  type        = string
}

variable "kubeconfig_path" {
  description = "kubeconfig with an admin context for the cluster."
  type        = string
  default     = "../2-kops/kubeconfig"
}

variable "kube_context" {
  description = "kubeconfig context of the cluster (kops names it after the cluster)."
  type        = string
}

variable "state_bucket" {
  description = "S3 bucket of the Terraform states (bucket in ../terraform-backend.hcl; the Makefile sets TF_VAR_state_bucket)."
  type        = string
}

variable "state_region" {
  description = "Region of the Terraform state bucket."
  type        = string
}

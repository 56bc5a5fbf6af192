variable "region" {
  description = "AWS region of the cluster."
  type        = string
}

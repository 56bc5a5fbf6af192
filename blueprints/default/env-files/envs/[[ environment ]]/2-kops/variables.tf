variable "region" {
  description = "AWS region of the cluster."
  type        = string
}

variable "aws_account_id" {
  description = "The AWS account of this environment (12 digits); empty: any account."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^([0-9]{12})?$", var.aws_account_id))
    error_message = "aws_account_id must be 12 digits, or empty."
  }
}

# Terraform root 1 of 3: everything kops needs before a cluster can exist.
# State stays local (terraform.tfstate, git-ignored): 3-bridge reads it with
# terraform_remote_state. To share it, add a backend "s3" block here and in the
# bridge's data.tf point the remote state at the same bucket and key.
terraform {
  required_version = "~> 1.9"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 6.0"
    }
  }
}

# Terraform root 2 of 3: the cluster, as kops writes it to ./kops-tf
# (`make cluster-update`), used as a module, plus your own resources (custom.tf).
# State stays local (terraform.tfstate, git-ignored); 3-bridge reads it.
terraform {
  required_version = "~> 1.9"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 6.0" # kops' output needs >= 5.0.0
    }
  }
}

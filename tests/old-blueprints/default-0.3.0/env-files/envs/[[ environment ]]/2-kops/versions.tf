# Terraform root 2 of 3: the cluster, as kops writes it to ./kops-tf
# (`make cluster-update`, or `make cluster-render` on a fresh clone), used as a
# module, plus your own resources (custom.tf). State in S3 (see
# ../1-prerequisites/versions.tf); 3-bridge reads it from there.
terraform {
  required_version = "~> 1.11"

  backend "s3" {
    key          = "2-kops/terraform.tfstate"
    encrypt      = true
    use_lockfile = true
  }

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 6.0" # kops' output needs >= 5.0.0
    }
  }
}

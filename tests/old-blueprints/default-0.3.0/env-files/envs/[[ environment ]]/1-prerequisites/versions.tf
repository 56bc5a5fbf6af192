# Terraform root 1 of 3: everything kops needs before a cluster can exist.
#
# State lives in S3 (the bucket in terraform-state-bucket.tf, which this root
# creates itself): `make state-bootstrap` applies that bucket once with local
# state, writes ../terraform-backend.hcl (bucket, region, KMS key; committed), moves
# the state into it with `terraform init -migrate-state`. Every root then runs
# `terraform init -backend-config=../terraform-backend.hcl`. use_lockfile locks
# the state with an S3 object (Terraform >= 1.10), so no DynamoDB table is needed;
# 1.11 for write-only arguments (secret_string_wo: generated secrets stay out of
# the state).
terraform {
  required_version = "~> 1.11"

  backend "s3" {
    key          = "1-prerequisites/terraform.tfstate"
    encrypt      = true
    use_lockfile = true
  }

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 6.0"
    }
  }
}

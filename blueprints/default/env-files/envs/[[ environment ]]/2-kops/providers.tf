# kops' Terraform uses two AWS provider configurations: the default one, and
# aws.files for the S3 objects it writes to the state and discovery stores.
# `make cluster-update` strips the provider blocks kops generates, so both are
# configured here and passed to the module in main.tf.
provider "aws" {
  region = var.region

  # The environment's account (aws_account_id): Terraform refuses any other.
  allowed_account_ids = var.aws_account_id == "" ? null : [var.aws_account_id]
}

provider "aws" {
  alias  = "files"
  region = var.region

  # The environment's account (aws_account_id): Terraform refuses any other.
  allowed_account_ids = var.aws_account_id == "" ? null : [var.aws_account_id]
}

provider "aws" {
  region = var.region

  # The environment's account (aws_account_id): Terraform refuses any other.
  allowed_account_ids = var.aws_account_id == "" ? null : [var.aws_account_id]

  # Every resource this root creates carries these tags (aws_ec2_tag excepted:
  # it adds single tags to subnets this root does not own).
  default_tags {
    tags = local.tags
  }
}

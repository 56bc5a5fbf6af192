provider "aws" {
  region = var.region

  # Every resource this root creates carries these tags (aws_ec2_tag excepted:
  # it adds single tags to subnets this root does not own).
  default_tags {
    tags = local.tags
  }
}

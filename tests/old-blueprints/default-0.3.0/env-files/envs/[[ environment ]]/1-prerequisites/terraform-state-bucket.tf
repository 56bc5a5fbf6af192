# The Terraform state of all three roots (keys 1-prerequisites/, 2-kops/,
# 3-bridge/): private, versioned, KMS-encrypted, TLS only. `make state-bootstrap`
# creates it before any state exists (see versions.tf); `make destroy` moves this
# root's state back to a local file first.
resource "aws_s3_bucket" "terraform_state" {
  #checkov:skip=CKV_AWS_18:Server access logs need a central log bucket this repo does not own; use CloudTrail S3 data events or point logging at your organization's log bucket.
  #checkov:skip=CKV_AWS_144:Cross-region replication is a disaster-recovery decision per organization; versioning keeps every earlier state.
  #checkov:skip=CKV2_AWS_62:Nothing consumes S3 event notifications of the state bucket.
  bucket = "${local.bucket_base}-tfstate-${local.account_id}"

  # Teardown's `make destroy` lifts this for one run (destroy_override.tf).
  lifecycle {
    prevent_destroy = true
  }
}

resource "aws_s3_bucket_ownership_controls" "terraform_state" {
  bucket = aws_s3_bucket.terraform_state.id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_public_access_block" "terraform_state" {
  bucket = aws_s3_bucket.terraform_state.id

  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_versioning" "terraform_state" {
  bucket = aws_s3_bucket.terraform_state.id

  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "terraform_state" {
  bucket = aws_s3_bucket.terraform_state.id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.platform.arn
    }
    bucket_key_enabled = true
  }
}

# Earlier states are kept 90 days (the undo window of a bad apply).
resource "aws_s3_bucket_lifecycle_configuration" "terraform_state" {
  bucket = aws_s3_bucket.terraform_state.id

  rule {
    id     = "expire-noncurrent-versions"
    status = "Enabled"

    filter {}

    noncurrent_version_expiration {
      noncurrent_days = 90
    }

    abort_incomplete_multipart_upload {
      days_after_initiation = 7
    }
  }

  depends_on = [aws_s3_bucket_versioning.terraform_state]
}

resource "aws_s3_bucket_policy" "terraform_state" {
  bucket = aws_s3_bucket.terraform_state.id

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "DenyInsecureTransport"
      Effect    = "Deny"
      Principal = "*"
      Action    = "s3:*"
      Resource  = [aws_s3_bucket.terraform_state.arn, "${aws_s3_bucket.terraform_state.arn}/*"]
      Condition = {
        Bool = { "aws:SecureTransport" = "false" }
      }
    }]
  })

  depends_on = [aws_s3_bucket_public_access_block.terraform_state]
}

# One customer-managed key for what this root encrypts at rest: the kops state
# store (cluster secrets, etcd backups), the Terraform state, the VPC flow logs
# and addon buckets such as Velero's. The key policy delegates to IAM: operators
# get it through their IAM permissions, an addon's IRSA policy grants it only
# through S3 (kms:ViaService, e.g. Velero's). kops' control-plane policy grants
# kms:Decrypt/Encrypt/GenerateDataKey* on "*" without a ViaService condition
# (kops v1.34.0 pkg/model/iam/iam_builder.go, AddKMSPermissions), so the control
# plane can use any key that delegates to IAM in this account.
resource "aws_kms_key" "platform" {
  description             = "${local.name_prefix}: kops state store and VPC flow logs"
  enable_key_rotation     = true
  deletion_window_in_days = 30

  # It encrypts every Terraform state, the kops secrets and the etcd backups: a
  # plain `terraform destroy` here must not schedule its deletion. Teardown's
  # `make destroy` lifts this for one run (destroy_override.tf).
  lifecycle {
    prevent_destroy = true
  }

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "AccountAdministersThroughIAM"
        Effect    = "Allow"
        Principal = { AWS = "arn:${local.partition}:iam::${local.account_id}:root" }
        Action    = "kms:*"
        Resource  = "*"
      },
      {
        Sid       = "CloudWatchLogsOfThisAccount"
        Effect    = "Allow"
        Principal = { Service = "logs.${var.region}.${local.dns_suffix}" }
        Action    = ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"]
        Resource  = "*"
        Condition = {
          ArnLike = {
            "kms:EncryptionContext:aws:logs:arn" = "arn:${local.partition}:logs:${var.region}:${local.account_id}:log-group:*"
          }
        }
      },
    ]
  })
}

resource "aws_kms_alias" "platform" {
  name          = "alias/${local.name_prefix}"
  target_key_id = aws_kms_key.platform.key_id
}

# Terraform root 3 of 3: the bridge from Terraform to Flux. Applied once the
# cluster answers and Flux is bootstrapped (the flux-system namespace must
# exist), it writes what only Terraform knows into ConfigMaps Flux reads:
#   flux-system/cluster-vars          postBuild.substituteFrom: ${CLUSTER_NAME}, ...
#   <namespace>/<addon>-tf-values     HelmRelease valuesFrom, one per addon
#
# State in S3 (see ../1-prerequisites/versions.tf), like the two other roots,
# whose states it reads with terraform_remote_state (data.tf).
terraform {
  required_version = "~> 1.11"

  backend "s3" {
    key          = "3-bridge/terraform.tfstate"
    encrypt      = true
    use_lockfile = true
  }

  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "~> 3.2"
    }
  }
}

# Terraform root 3 of 3: the bridge from Terraform to Flux. Applied once the
# cluster answers and Flux is bootstrapped (the flux-system namespace must
# exist), it writes what only Terraform knows into ConfigMaps Flux reads:
#   flux-system/cluster-vars          postBuild.substituteFrom: ${CLUSTER_NAME}, ...
#   <namespace>/<addon>-tf-values     HelmRelease valuesFrom, one per addon
terraform {
  required_version = "~> 1.9"

  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "~> 3.2"
    }
  }
}

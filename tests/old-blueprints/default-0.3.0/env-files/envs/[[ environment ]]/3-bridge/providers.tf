# The admin kubeconfig `make -C ../2-kops kubeconfig` writes. The API load
# balancer is internal: run this from inside the VPC or over a VPN.
provider "kubernetes" {
  config_path    = var.kubeconfig_path
  config_context = var.kube_context
}

#!/bin/sh
# Re-vendors the values data of every catalog chart (schemas/charts) from git snapshots of
# the charts' source repositories: MIRRORS holds one bare repository per source, named
# owner+name (as the lead's mirror tool lays them out). Each line: chart source, tag, path,
# and the published chart version (the catalog pin) where Chart.yaml at the tag differs.
# Run from the repo root; then update schemas/charts/SOURCES.md if a pin moved.
set -eu
MIRRORS=${MIRRORS:-/work/.mirror}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while read -r repo ref path version; do
  case "$repo" in ''|'#'*) continue ;; esac
  git_dir="$MIRRORS/$(echo "$repo" | tr / +)/repo"
  [ -d "$git_dir/.git" ] && git_dir="$git_dir/.git"
  out="$tmp/$(echo "$repo-$ref-$path" | tr '/' '_')"
  mkdir -p "$out"
  git --git-dir="$git_dir" archive "$ref" "$path" | tar -x -C "$out"
  python3 scripts/vendor-chart-values.py "$out/$path" "github.com/$repo $ref $path" ${version:+"$version"}
done <<'LIST'
cert-manager/cert-manager v1.21.1 deploy/charts/cert-manager v1.21.1
kubernetes-sigs/external-dns external-dns-helm-chart-1.21.1 charts/external-dns
aws/eks-charts 5239609 stable/aws-load-balancer-controller
aws/karpenter-provider-aws v1.14.1 charts/karpenter 1.14.1
aws/karpenter-provider-aws v1.14.1 charts/karpenter-crd 1.14.1
external-secrets/external-secrets helm-chart-2.9.0 deploy/charts/external-secrets
prometheus-community/helm-charts kube-prometheus-stack-88.5.3 charts/kube-prometheus-stack
prometheus-community/helm-charts prometheus-operator-crds-31.0.1 charts/prometheus-operator-crds
kubernetes-sigs/metrics-server metrics-server-helm-chart-3.13.1 charts/metrics-server
stakater/Reloader chart-v2.2.16 deployments/kubernetes/chart/reloader
vmware-tanzu/helm-charts velero-12.1.0 charts/velero
kubernetes-sigs/headlamp headlamp-helm-0.45.0 charts/headlamp
goauthentik/helm authentik-2026.8.0 charts/authentik
istio/istio 1.30.3 manifests/charts/base 1.30.3
istio/istio 1.30.3 manifests/charts/istio-control/istio-discovery 1.30.3
stefanprodan/podinfo 6.14.1 charts/podinfo
stefanprodan/podinfo 6.9.0 charts/podinfo
LIST

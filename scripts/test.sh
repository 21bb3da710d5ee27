#!/usr/bin/env bash
# scripts/test.sh — the whole test suite, on a fresh machine or a warm one.
# Installs what the tests need (tmux, openssl, curl, ss, prometheus + promtool), builds the real
# kube-apiserver + etcd (+ kubectl) from the Go module proxy into a cache
# keyed by their go.mod (about 5 min cold on 2 cores, nothing when cached),
# then runs go vet, golangci-lint's formatters (.golangci.yml: gofmt,
# goimports with the module as local prefix, gci; the pinned version is
# installed once into GOBIN), its linters and the race-enabled tests. Extra arguments go
# to go test.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

missing=()
command -v tmux >/dev/null || missing+=(tmux)
command -v openssl >/dev/null || missing+=(openssl)
command -v curl >/dev/null || missing+=(curl)
command -v ss >/dev/null || missing+=(iproute2)
# promtool (alert rule tests) and the Prometheus server (end-to-end scrape test).
{ command -v promtool >/dev/null && command -v prometheus >/dev/null; } || missing+=(prometheus)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test.sh: installing ${missing[*]}"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

export SANDSCOPE_TESTCLUSTER_BIN=${SANDSCOPE_TESTCLUSTER_BIN:-$HOME/.cache/sandscope/testcluster/bin}
t0=$(date +%s)
WITH_KUBECTL=1 tools/testcluster/build.sh "$SANDSCOPE_TESTCLUSTER_BIN"
echo "test.sh: test cluster binaries ready in $(( $(date +%s) - t0 )) s ($SANDSCOPE_TESTCLUSTER_BIN)"

go vet ./...
GOLANGCI_LINT_VERSION=v2.15.0
LINT=$(go env GOPATH)/bin/golangci-lint
[ -n "$(go env GOBIN)" ] && LINT=$(go env GOBIN)/golangci-lint
if ! "$LINT" version 2>/dev/null | grep -q "version ${GOLANGCI_LINT_VERSION#v} "; then
  t0=$(date +%s)
  go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"
  echo "test.sh: golangci-lint $GOLANGCI_LINT_VERSION installed in $(( $(date +%s) - t0 )) s"
fi
t0=$(date +%s)
# The formatters first: they need no type-checking and fail fast.
"$LINT" fmt --diff ./...
echo "test.sh: golangci-lint fmt clean in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
# Then the linters of .golangci.yml, a gate like the tests.
"$LINT" run --timeout 30m ./...
echo "test.sh: golangci-lint run clean in $(( $(date +%s) - t0 )) s"
go test -race -timeout 20m "$@" ./...

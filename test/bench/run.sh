#!/usr/bin/env bash
# Scale benchmarks of sandscope against a real kube-apiserver + etcd
# (internal/testcluster; binaries from $SANDSCOPE_TESTCLUSTER_BIN or
# ~/.cache/sandscope/testcluster/bin). Each size gets a fresh cluster.
# Usage: test/bench/run.sh [SIZE ...]   (default: 10000 50000)
# Extra flags for go test via BENCH_FLAGS, e.g. BENCH_FLAGS="-idle 60s".
# SANDSCOPE_BENCH_NET=RTT:RATE[,...] (e.g. 40ms:50mbit,40ms:10mbit) runs
# BenchmarkNetScale instead: the same server behind a shaped link (root, tc).
set -euo pipefail
cd "$(dirname "$0")/../.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 50000)
bench=(-bench '^BenchmarkScale$')
if [ -n "${SANDSCOPE_BENCH_NET:-}" ]; then
  bench=(-bench '^BenchmarkNetScale$' -net-links "$SANDSCOPE_BENCH_NET")
fi
for n in "${sizes[@]}"; do
  echo "=== sandscope scale benchmark, N=$n ($(nproc) CPUs, $(free -g | awk '/Mem:/{print $2}') GiB RAM) ==="
  # shellcheck disable=SC2086
  go test ./test/bench -run '^$' "${bench[@]}" -benchtime 1x -timeout 90m \
    -scale "$n" ${BENCH_FLAGS:-} 2>&1 | grep -v -e '^I[0-9]\{4\} ' -e 'warnings.go'
done

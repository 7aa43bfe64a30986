#!/usr/bin/env bash
# Prints where a benchmark's results go: bench/results/<benchmark>-<level>-<machine>.json, the one
# file per benchmark, ISA level and machine that the repository keeps (older runs live in git
# history). The scripts that write results (bench-peers.sh, bench-image-pipeline.sh,
# bench/server-load.sh) call it; the benchmarks run by hand take the path it prints as --json.
#
#   scripts/bench-result-path.sh BENCHMARK [LEVEL]
#
# LEVEL: the ISA level the run used; default DL4CPP_MAX_CPU_ISA when set, else the highest level
# this machine has (scripts/cpu-isa-levels.sh). The machine's name is BENCH_MACHINE (the files in
# the repository use xeon, zen3 and zen5); unset, a name made from the CPU's model name.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ $# -lt 1 || $# -gt 2 || -z "$1" ]]; then
  echo "usage: $0 BENCHMARK [LEVEL]" >&2
  exit 2
fi
benchmark="$1"
# Whole outputs first: `| head -1` under pipefail fails when head exits before the writer is done.
levels="$(scripts/cpu-isa-levels.sh)"
level="${2:-${DL4CPP_MAX_CPU_ISA:-${levels%%$'\n'*}}}"
machine="${BENCH_MACHINE:-}"
if [[ -z "$machine" ]]; then
  model="$(sed -n 's/^model name[[:space:]]*: *//p;T;q' /proc/cpuinfo 2>/dev/null || true)"
  machine="$(tr '[:upper:]' '[:lower:]' <<<"${model:-unknown}" |
    sed -e 's/([^)]*)//g' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')"
fi
echo "bench/results/$benchmark-$level-${machine:-unknown}.json"

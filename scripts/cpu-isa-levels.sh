#!/usr/bin/env bash
# Prints the CPU ISA levels (DL4CPP_MAX_CPU_ISA's values) this machine can run, highest first, as
# dl4cpp::nativeCpuIsa() decides them: avx512 needs AVX-512 F, BW, VL and DQ; avx2 needs AVX2 and
# FMA; baseline runs everywhere. --below-native leaves out the highest (the uncapped run).
#
#   scripts/cpu-isa-levels.sh [--below-native]
set -euo pipefail

flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has() { for f in "$@"; do [[ "$flags" == *" $f "* ]] || return 1; done; }

levels=()
has avx512f avx512bw avx512vl avx512dq && levels+=(avx512)
has avx2 fma && levels+=(avx2)
levels+=(baseline)

case "${1:-}" in
  --below-native) printf '%s\n' "${levels[@]:1}" ;;
  "") printf '%s\n' "${levels[@]}" ;;
  *) echo "usage: $0 [--below-native]" >&2; exit 2 ;;
esac

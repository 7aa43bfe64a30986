#!/usr/bin/env bash
# dl4cpp against libtorch on the same cores, in one run: LeNet on MNIST, one epoch, batch 128,
# under the protocol of bench/peers/PeerProtocol.h.
#
#   scripts/bench-peers.sh [RUNS]      (default 5)
#   PEER_NETWORK=batchnorm|vgg|resnet|resnet50|charlstm PEER_ISA=avx512|avx2 scripts/bench-peers.sh [RUNS]
#
# PEER_NETWORK=batchnorm compares the conv-BN-ReLU network of samples/BatchNormConfiguration.h on
# Fashion-MNIST instead, PEER_NETWORK=vgg the VGG-style network of samples/VggConfiguration.h (3x3
# pad-1 convolutions, 32 and 64 channels) on Fashion-MNIST, PEER_NETWORK=resnet the residual
# ComputationGraph of samples/ResidualConfiguration.h on Fashion-MNIST, PEER_NETWORK=resnet50 the
# zoo's ResNet-50 at 224x224, batch 16, on synthetic data (a warm-up step, then 4 timed steps;
# PEER_TRAIN_EXAMPLES=N times N / 16), PEER_NETWORK=charlstm the character LSTM of
# samples/CharLstmConfiguration.h (one LSTM layer of 128, sequences of 64, batch 16) on the text of
# fortunes-min (bench/peers/CharCorpus.h). Results go to
# bench/results/peers-<network>-<level>-<machine>.json by default (scripts/bench-result-path.sh:
# the level is PEER_ISA, or the machine's own when unset; BENCH_MACHINE names the machine).
#
# PEER_TRAIN_EXAMPLES=N trains on the first N training examples (the epoch order is the same
# shuffle, cut short); the default is all 60,000, except for vgg and resnet: 12,800 (100
# batches; a full epoch of vgg takes about a minute per run on one core).
#
# PEER_ISA caps both libraries to one CPU ISA level, so that an AVX-512 machine runs what an AVX2
# one would (issue 17): dl4cpp through DL4CPP_MAX_CPU_ISA (its own kernels and its oneDNN);
# libtorch's oneDNN through ONEDNN_MAX_CPU_ISA (Debian's libtorch links the system libdnnl) and,
# at avx2, its ATen kernels through ATEN_CPU_CAPABILITY=avx2 and its OpenBLAS through
# OPENBLAS_CORETYPE=Haswell. (Debian's libtorch 1.13 already picks AVX2 for its ATen kernels on an
# AVX-512 machine, and OpenBLAS 0.3.21 picks its Haswell kernels on Zen 5, so on this project's
# machines the caps change only oneDNN.) Unset, each library runs at what the processor has.
#
# Needs scripts/install-deps.sh and scripts/install-peers.sh (libtorch, OpenBLAS-openmp, python3).
# Builds dl4cpp_lenet and libtorch_lenet (Release, in build/), fetches MNIST, then for each thread
# count in $PEER_THREADS (default "1 2") runs the two programs alternately, RUNS times each; the
# program that goes first alternates from run to run so neither always meets the machine in the
# same state. The dl4cpp/libtorch ratio is taken pair by pair (the two runs of the same round) and
# its median reported. Prints the table and writes the JSON above (override with PEER_JSON=FILE;
# every program's own JSON line is kept in it). For LeNet, when the JSON went to its usual place
# and bench/results holds a ParallelWrapper run of the same level and machine
# (bench_parallel_lenet), it redraws docs/images/throughput.png from the two (scripts/plot-bench.py).
#
# Run it on a quiet machine: the load average before and after the run is recorded in the JSON.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs="${1:-5}"
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [RUNS]   (RUNS: a positive integer, default 5)" >&2
  exit 2
fi
threads_list="${PEER_THREADS:-1 2}"
network="${PEER_NETWORK:-lenet}"
if [[ "$network" != lenet && "$network" != batchnorm && "$network" != vgg && "$network" != resnet &&
  "$network" != resnet50 && "$network" != charlstm ]]; then
  echo "error: PEER_NETWORK must be lenet, batchnorm, vgg, resnet, resnet50 or charlstm, not '$network'" >&2
  exit 2
fi
isa="${PEER_ISA:-}"
case "$isa" in
  "") ;;
  avx512) export DL4CPP_MAX_CPU_ISA=avx512 ONEDNN_MAX_CPU_ISA=AVX512_CORE ;;
  avx2)
    export DL4CPP_MAX_CPU_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 \
      OPENBLAS_CORETYPE=Haswell
    ;;
  *)
    echo "error: PEER_ISA must be avx512 or avx2 (or unset), not '$isa'" >&2
    exit 2
    ;;
esac
train_examples="${PEER_TRAIN_EXAMPLES:-}"
[[ -z "$train_examples" && ("$network" == vgg || "$network" == resnet) ]] && train_examples=12800
if ! [[ "${train_examples:-0}" =~ ^[0-9]+$ ]]; then
  echo "error: PEER_TRAIN_EXAMPLES must be a non-negative integer, not '$train_examples'" >&2
  exit 2
fi
default_json="$(scripts/bench-result-path.sh "peers-$network" ${isa:+"$isa"})"
json_out="${PEER_JSON:-$default_json}"
build_dir="${PEER_BUILD_DIR:-build}"

command -v python3 >/dev/null 2>&1 || {
  echo "error: python3 is needed to summarise the runs: run scripts/install-peers.sh" >&2
  exit 1
}

# The BLAS libtorch will call (Debian's libtorch goes through the libblas.so.3 alternative).
multiarch="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)"
blas="$(update-alternatives --query "libblas.so.3-$multiarch" 2>/dev/null | sed -n 's/^Value: //p')"
echo "bench-peers: libblas.so.3 -> ${blas:-unknown}"
if [[ "$blas" != */openblas-openmp/* ]]; then
  echo "bench-peers: WARNING: libtorch will not use OpenBLAS-openmp; run scripts/install-peers.sh" >&2
fi

cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DDL4CPP_BUILD_BENCH=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target dl4cpp_lenet
if ! cmake --build "$build_dir" -j"$(nproc)" --target libtorch_lenet; then
  echo "error: libtorch_lenet was not built: libtorch not found (run scripts/install-peers.sh," \
       "then re-run this script)" >&2
  exit 1
fi
scripts/get-mnist.sh

programs=(dl4cpp "$build_dir/bench/peers/dl4cpp_lenet" libtorch "$build_dir/bench/peers/libtorch_lenet")
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
lines="$work/runs.jsonl"
: >"$lines"

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench-peers: $runs run(s) per program and thread count; network $network;" \
  "ISA cap: ${isa:-none}; training examples: ${train_examples:-all}; load average before: $load_before"
for t in $threads_list; do
  for ((r = 1; r <= runs; r++)); do
    # Odd rounds: dl4cpp first; even rounds: libtorch first.
    order=(0 2)
    ((r % 2 == 0)) && order=(2 0)
    for i in "${order[@]}"; do
      name="${programs[i]}" program="${programs[i + 1]}"
      if ! line="$("$program" --threads "$t" --network "$network" \
        --train-examples "${train_examples:-0}" 2>"$work/stderr")"; then
        echo "error: $name (--threads $t, round $r) failed:" >&2
        cat "$work/stderr" >&2
        exit 1
      fi
      echo "  threads $t round $r: $line"
      python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["round"]=int(sys.argv[2]); print(json.dumps(d))' \
        "$line" "$r" >>"$lines"
    done
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

mkdir -p "$(dirname "$json_out")"
python3 scripts/summarize-peers.py "$lines" "$json_out" \
  --cpu "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" --cores "$(nproc)" \
  --blas "${blas:-unknown}" --load-before "$load_before" --load-after "$load_after" \
  --network "$network" --isa "${isa:-native}"

# Redraw docs/images/throughput.png when LeNet's results went to their usual place and the
# ParallelWrapper run of the same level and machine is there to go beside them.
parallel_json="${default_json/\/peers-lenet-//parallel-lenet-}"
if [[ "$network" == lenet && "$json_out" == "$default_json" && -f "$parallel_json" ]]; then
  if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    scripts/plot-bench.py --peers "$json_out" --parallel "$parallel_json"
  else
    echo "bench-peers: python3-matplotlib missing, docs/images/throughput.png not redrawn (scripts/install-peers.sh)"
  fi
fi

#!/usr/bin/env bash
# Which k, which mode, over which link: two ranks in network namespaces joined by a veth pair (as
# scripts/test-cluster-netns.sh sets them up), the veth throttled with tc's tbf to each --rates
# rate (and, where the kernel has the netem qdisc, delayed by each --delays delay), training
# parallel_lenet_mnist's batch-norm network (or, with --network resnet, the residual
# ComputationGraph of parallel_resnet_fashion) on Fashion-MNIST, one worker per rank, in each mode:
#   sg-plain        SHARED_GRADIENTS, gradients all-reduced whole
#   sg-compressed   SHARED_GRADIENTS, threshold-encoded (AdaptiveThresholdAlgorithm started at
#                   1e-3, aiming at 0.1-5% of the elements)
#   avg-kK          AVERAGING every K iterations
#   outer-kK        AVERAGING every K iterations with the outer Nesterovs(0.7, 0.9) (DiLoCo)
# For each: the training time until the test accuracy first reaches --target (evaluated every
# --eval-every iterations on --test-examples examples, evaluation time left out), the accuracy
# after --epochs epochs of --train-examples examples, the wall time, and the bytes the veth
# carried. Results go to the JSON that scripts/bench-result-path.sh names (slow-links, or
# slow-links-resnet).
#
#   scripts/bench-slow-links.sh [--build DIR] [--network batchnorm|resnet]
#       [--rates "1gbit 100mbit"] [--delays "1ms 20ms"]
#       [--modes "sg-plain sg-compressed avg-k1 ..."] [--train-examples 12800]
#       [--test-examples 1000] [--epochs 1] [--batch 64] [--eval-every 20] [--target 0.78]
#
# Needs root (namespaces), ip, unshare, tc, mpirun and an MPI build of the samples. Exits 77
# (skipped) where the namespaces or tbf cannot be made.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=build
network=batchnorm
rates="1gbit 100mbit"
delays="1ms 20ms"
modes="sg-plain sg-compressed avg-k1 avg-k4 avg-k16 avg-k64 outer-k1 outer-k4 outer-k16 outer-k64"
train_examples=12800
test_examples=1000
epochs=1
batch=64
eval_every=20
target=0.78
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --network) network="$2"; shift 2 ;;
    --rates) rates="$2"; shift 2 ;;
    --delays) delays="$2"; shift 2 ;;
    --modes) modes="$2"; shift 2 ;;
    --train-examples) train_examples="$2"; shift 2 ;;
    --test-examples) test_examples="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --eval-every) eval_every="$2"; shift 2 ;;
    --target) target="$2"; shift 2 ;;
    *) echo "bench-slow-links: unknown option $1" >&2; exit 1 ;;
  esac
done
[[ "$network" == batchnorm || "$network" == resnet ]] || {
  echo "bench-slow-links: --network must be batchnorm or resnet, not '$network'" >&2
  exit 1
}
sample="$build/samples/parallel_lenet_mnist"
[[ -x "$sample" ]] || { echo "bench-slow-links: $sample not found: build the samples" >&2; exit 1; }
sample="$(realpath "$sample")"
result="$(scripts/bench-result-path.sh "slow-links$([[ $network == resnet ]] && echo -resnet)")"

skip() {
  echo "skipped: $*"
  exit 77
}
[[ "$(id -u)" -eq 0 ]] || skip "network namespaces need root"
for tool in ip unshare tc mpirun timeout python3; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done

ns_a="dl4cpp-a-$$"
ns_b="dl4cpp-b-$$"
veth_a="dl4a-$$"
veth_b="dl4b-$$"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/dl4cpp-links.XXXXXX")"
cleanup() {
  for ns in "$ns_a" "$ns_b"; do
    if ip netns list | grep -qw "$ns"; then
      ip netns pids "$ns" | xargs -r kill -9 2>/dev/null || true
      ip netns del "$ns" || true
    fi
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

ip netns add "$ns_a" 2>"$tmp/err" || skip "cannot create a network namespace: $(cat "$tmp/err")"
ip netns add "$ns_b" 2>"$tmp/err" || skip "cannot create a network namespace: $(cat "$tmp/err")"
ip link add "$veth_a" type veth peer name "$veth_b" 2>"$tmp/err" ||
  skip "cannot create a veth pair: $(cat "$tmp/err")"
ip link set "$veth_a" netns "$ns_a"
ip link set "$veth_b" netns "$ns_b"
ip -n "$ns_a" addr add 10.77.0.1/24 dev "$veth_a"
ip -n "$ns_b" addr add 10.77.0.2/24 dev "$veth_b"
for side in "$ns_a $veth_a" "$ns_b $veth_b"; do
  read -r ns veth <<<"$side"
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "$veth" up
done

# netem: delay where the kernel has it; otherwise the links are rate-limited only.
if tc -n "$ns_a" qdisc add dev "$veth_a" root netem delay 1ms 2>/dev/null; then
  tc -n "$ns_a" qdisc del dev "$veth_a" root
  netem=1
else
  netem=0
  delays="none"
fi
tc -n "$ns_a" qdisc add dev "$veth_a" root tbf rate 1gbit burst 512kb latency 100ms 2>"$tmp/err" ||
  skip "tc tbf does not work here: $(cat "$tmp/err")"
tc -n "$ns_a" qdisc del dev "$veth_a" root

# Both directions: each side shapes what it sends.
shape() {  # RATE DELAY
  local rate="$1" delay="$2" burst
  # tbf's bucket must hold at least one timer tick's worth of bytes (rate / HZ, HZ >= 100).
  burst="$(python3 -c "import re; m = re.fullmatch(r'(\d+)(k|m|g)bit', '$rate'); \
print(max(32, int(int(m.group(1)) * {'k': 1e3, 'm': 1e6, 'g': 1e9}[m.group(2)] / 8 / 100 / 1024)))")kb"
  for side in "$ns_a $veth_a" "$ns_b $veth_b"; do
    read -r ns veth <<<"$side"
    tc -n "$ns" qdisc del dev "$veth" root 2>/dev/null || true
    if [[ "$delay" != none ]]; then
      tc -n "$ns" qdisc add dev "$veth" root handle 1: netem delay "$delay"
      tc -n "$ns" qdisc add dev "$veth" parent 1: handle 2: tbf rate "$rate" burst "$burst" \
        latency 200ms
    else
      tc -n "$ns" qdisc add dev "$veth" root tbf rate "$rate" burst "$burst" latency 200ms
    fi
  done
}

printf '10.77.0.1 slots=1\n10.77.0.2 slots=1\n' >"$tmp/hosts"
cat >"$tmp/agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
shift
exec ip netns exec "$ns_b" unshare --uts sh -c 'hostname dl4cpp-netns-b && exec sh -c "\$1"' sh "\$*"
EOF
chmod +x "$tmp/agent"
job_timeout="${DL4CPP_LINKS_JOB_TIMEOUT:-600}"
run_job() {
  timeout --kill-after=10 "$job_timeout" ip netns exec "$ns_a" unshare --uts \
    sh -c 'hostname dl4cpp-netns-a && exec "$@"' sh \
    mpirun --allow-run-as-root -np 2 --hostfile "$tmp/hosts" --bind-to none \
    --mca plm_rsh_agent "$tmp/agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
    "$@"
}
veth_bytes() { ip netns exec "$ns_a" cat /sys/class/net/"$veth_a"/statistics/rx_bytes; }

flags_of() {  # MODE -> the sample's flags
  case "$1" in
    sg-plain) echo "--mode shared-gradients" ;;
    sg-compressed) echo "--mode shared-gradients --threshold-algorithm adaptive:1e-3:1e-3:5e-2" ;;
    avg-k*) echo "--mode averaging --averaging-frequency ${1#avg-k}" ;;
    outer-k*) echo "--mode averaging --averaging-frequency ${1#outer-k} --outer-updater nesterovs:0.7:0.9" ;;
    *) echo "bench-slow-links: unknown mode $1" >&2; return 1 ;;
  esac
}

: >"$tmp/runs.jsonl"
echo "bench-slow-links: netem $([[ $netem -eq 1 ]] && echo available || echo 'not available (no delay)'),"\
  "rates: $rates, delays: $delays, modes: $modes"
for rate in $rates; do
  for delay in $delays; do
    shape "$rate" "$delay"
    for mode in $modes; do
      read -r -a flags <<<"$(flags_of "$mode")"
      load_before="$(cut -d' ' -f1 /proc/loadavg)"
      before="$(veth_bytes)"
      start=$(date +%s.%N)
      status=0
      run_job "$sample" --cluster mpi --workers 1 --threads-per-worker 1 --network "$network" \
        --dataset fashion --train-examples "$train_examples" --test-examples "$test_examples" \
        --epochs "$epochs" --batch "$batch" --eval-every "$eval_every" --target-accuracy "$target" \
        "${flags[@]}" >"$tmp/out" 2>&1 || status=$?
      wall=$(python3 -c "print($(date +%s.%N) - $start)")
      moved=$(($(veth_bytes) - before))
      python3 - "$tmp/out" "$rate" "$delay" "$mode" "$status" "$wall" "$moved" "$load_before" \
        "$(cut -d' ' -f1 /proc/loadavg)" >>"$tmp/runs.jsonl" <<'PY'
import json, re, sys
out, rate, delay, mode, status, wall, moved, load0, load1 = sys.argv[1:]
text = open(out, errors="replace").read()
evals = [(int(i), float(t), float(a)) for i, t, a in
         re.findall(r"eval: iteration (\d+), training seconds ([\d.]+), accuracy ([\d.]+)", text)]
reached = re.search(r"target accuracy [\d.]+ reached: iteration (\d+), ([\d.]+) s", text)
sent = re.findall(r"sent by this rank: (\d+) bytes per round over (\d+) rounds"
                  r"(?:, density ([\d.e-]+))?", text)
print(json.dumps({
    "rate": rate, "delay": delay, "mode": mode, "exit_status": int(status),
    "wall_seconds": round(float(wall), 2), "veth_bytes_received_by_rank0": int(moved),
    "load_average_before": float(load0), "load_average_after": float(load1),
    "iterations": evals[-1][0] if evals else None,
    "training_seconds": evals[-1][1] if evals else None,
    "final_accuracy": evals[-1][2] if evals else None,
    "time_to_target_seconds": float(reached.group(2)) if reached else None,
    "iterations_to_target": int(reached.group(1)) if reached else None,
    "bytes_per_round_rank0": int(sent[-1][0]) if sent else None,
    "rounds": int(sent[-1][1]) if sent else None,
    "density": float(sent[-1][2]) if sent and sent[-1][2] else None,
    "evaluations": evals,
}))
PY
      tail -n 1 "$tmp/runs.jsonl" | python3 -c "import json,sys; r=json.load(sys.stdin); \
print(f\"{r['rate']:>7} {r['delay']:>5} {r['mode']:<14} exit {r['exit_status']} \
train {r['training_seconds']} s, to target {r['time_to_target_seconds']} s, \
accuracy {r['final_accuracy']}, {r['veth_bytes_received_by_rank0']} B over the veth\")"
      [[ $status -eq 0 ]] || tail -n 20 "$tmp/out" >&2
    done
  done
done

mkdir -p "$(dirname "$result")"
python3 - "$tmp/runs.jsonl" "$result" "$netem" "$train_examples" "$test_examples" "$epochs" \
  "$batch" "$eval_every" "$target" "$network" <<'PY'
import json, platform, sys
runs, path, netem, train, test, epochs, batch, every, target, network = sys.argv[1:]
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
json.dump({
    "benchmark": "slow-links",
    "cpu": model, "cores": __import__("os").cpu_count(), "kernel": platform.release(),
    "netem": "available" if netem == "1" else "not available",
    "network": {"batchnorm": "batchnorm (samples/BatchNormConfiguration.h), Adam(1e-3)",
                "resnet": "resnet (samples/ResidualConfiguration.h, a ComputationGraph), Adam(1e-3)"}[network],
    "data": "Fashion-MNIST", "ranks": 2, "workers_per_rank": 1, "threads_per_worker": 1,
    "train_examples": int(train), "test_examples": int(test), "epochs": int(epochs),
    "global_batch": int(batch), "eval_every_iterations": int(every), "target_accuracy": float(target),
    "runs": [json.loads(l) for l in open(runs)],
}, open(path, "w"), indent=1)
print("bench-slow-links: wrote", path)
PY

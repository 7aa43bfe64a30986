#!/usr/bin/env bash
# Runs 2-rank MPI jobs of dl4cpp across two test hosts on one machine: two network namespaces
# joined by a veth pair (10.77.0.1/24 and 10.77.0.2/24), one rank in each, talking TCP over the
# veth (Open MPI's tcp BTL only: no shared memory between them). Set up and torn down here.
#
#   scripts/test-cluster-netns.sh [--build DIR] [--bench] [SCENARIO ...]
#
# Each SCENARIO (default: collectives) is one of dl4cpp_cluster_check's (test/cluster), run from
# DIR (default: build); it must exit 0, its ranks must report the two namespaces' host names (so
# each rank ran in its own), and the veth must have carried its data. --bench then runs
# bench_cluster_allreduce the same way: the all-reduce time of LeNet's 431,080 floats over TCP,
# and of 862,160 (with Nesterovs' updater state).
# Exits 0 when every job passed, 1 on a failure, 77 (CTest: skipped) when the namespaces cannot be
# made here (not root, no `ip` or `unshare`, no permission, no veth).
#
# How the ranks land where they do: mpirun runs inside namespace A, whose address 10.77.0.1 heads
# the hostfile, so Open MPI counts A as its own node and starts rank 0 there. For 10.77.0.2 it
# starts its daemon (orted) with the "remote shell" of plm_rsh_agent: a script written here that
# drops the host name and runs the daemon's command inside namespace B instead of over ssh; the
# daemon starts rank 1 there. Each side also gets a UTS namespace with a host name of its own,
# which MpiCluster::describe() reports. Open MPI binds each node's ranks to that node's first core,
# which on one machine would put both ranks on core 0: --bind-to none.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=build
bench=0
scenarios=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --bench) bench=1; shift ;;
    -*) echo "test-cluster-netns: unknown option $1" >&2; exit 1 ;;
    *) scenarios+=("$1"); shift ;;
  esac
done
[[ ${#scenarios[@]} -gt 0 ]] || scenarios=(collectives)
check="$build/test/cluster/dl4cpp_cluster_check"
bench_program="$build/bench/bench_cluster_allreduce"
[[ -x "$check" ]] || {
  echo "test-cluster-netns: $check not found: build dl4cpp with MPI and tests first" >&2
  exit 1
}
if [[ $bench -eq 1 && ! -x "$bench_program" ]]; then
  echo "test-cluster-netns: $bench_program not found: build with DL4CPP_BUILD_BENCH=ON" >&2
  exit 1
fi
check="$(realpath "$check")"
bench_program="$(realpath -m "$bench_program")"

skip() {
  echo "skipped: $*"
  exit 77
}
[[ "$(id -u)" -eq 0 ]] || skip "network namespaces need root"
for tool in ip unshare mpirun timeout; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done

# Namespaces left by an earlier run of this script that was killed before its cleanup (the number
# is that run's process id, no longer alive).
for ns in $(ip netns list 2>/dev/null | grep -oE '^dl4cpp-[ab]-[0-9]+' || true); do
  kill -0 "${ns##*-}" 2>/dev/null || ip netns del "$ns" 2>/dev/null || true
done

# Names of this run's own (a concurrent run gets others); the addresses can repeat, each pair of
# namespaces has a network of its own.
ns_a="dl4cpp-a-$$"
ns_b="dl4cpp-b-$$"
veth_a="dl4a-$$"
veth_b="dl4b-$$"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/dl4cpp-netns.XXXXXX")"
cleanup() {
  for ns in "$ns_a" "$ns_b"; do
    if ip netns list | grep -qw "$ns"; then
      # The processes left in it (a daemon of a failed job) were started by this script.
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

printf '10.77.0.1 slots=1\n10.77.0.2 slots=1\n' >"$tmp/hosts"
# The remote shell: Open MPI calls it as `agent [options] HOST COMMAND...`, COMMAND being words for
# a remote shell to join, as ssh does.
cat >"$tmp/agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
shift
exec ip netns exec "$ns_b" unshare --uts sh -c 'hostname dl4cpp-netns-b && exec sh -c "\$1"' sh "\$*"
EOF
chmod +x "$tmp/agent"

# Each job ends within DL4CPP_NETNS_JOB_TIMEOUT seconds (default 240), well inside CTest's limit
# (test/cluster/CMakeLists.txt), so that a hang still reaches the cleanup below.
job_timeout="${DL4CPP_NETNS_JOB_TIMEOUT:-240}"
run_job() {
  timeout --kill-after=10 "$job_timeout" ip netns exec "$ns_a" unshare --uts \
    sh -c 'hostname dl4cpp-netns-a && exec "$@"' sh \
    mpirun --allow-run-as-root -np 2 --hostfile "$tmp/hosts" --bind-to none \
    --mca plm_rsh_agent "$tmp/agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
    "$@"
}
veth_bytes() { ip netns exec "$ns_a" cat /sys/class/net/"$veth_a"/statistics/rx_bytes; }

failed=0
for scenario in "${scenarios[@]}"; do
  echo "test-cluster-netns: $scenario, rank 0 in $ns_a (10.77.0.1), rank 1 in $ns_b (10.77.0.2)"
  before="$(veth_bytes)"
  status=0
  run_job "$check" "$scenario" 2>&1 | tee "$tmp/out" || status=$?
  moved=$(($(veth_bytes) - before))
  echo "test-cluster-netns: $scenario: exit status $status, $moved bytes received over the veth"
  problems=()
  [[ $status -eq 0 ]] || problems+=("the job exited $status")
  grep -q "rank 0: MPI rank 0 of 2 on host dl4cpp-netns-a" "$tmp/out" ||
    problems+=("rank 0 did not report host dl4cpp-netns-a")
  grep -q "rank 1: MPI rank 1 of 2 on host dl4cpp-netns-b" "$tmp/out" ||
    problems+=("rank 1 did not report host dl4cpp-netns-b")
  # Rank 0 receives rank 1's share of every collective, over 6 MB in `collectives`: much less
  # means the data went another way.
  [[ $moved -ge 1000000 ]] || problems+=("only $moved bytes crossed the veth")
  for problem in "${problems[@]}"; do
    echo "test-cluster-netns: FAILED: $scenario: $problem" >&2
    failed=1
  done
done

if [[ $bench -eq 1 ]]; then
  echo "test-cluster-netns: all-reduce time over TCP between the namespaces" \
    "(load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  # LeNet's parameters alone, then with Nesterovs' state: what one averaging of the sample carries.
  for floats in 431080 862160; do
    run_job "$bench_program" --floats "$floats" --repeats 200 || {
      echo "test-cluster-netns: FAILED: bench_cluster_allreduce --floats $floats" >&2
      failed=1
    }
  done
fi
[[ $failed -eq 0 ]] && echo "test-cluster-netns: OK"
exit $failed

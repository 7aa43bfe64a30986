#!/usr/bin/env bash
# Kills rank 1 of a 2-rank job of a parallel sample once the job's first checkpoint is on disk,
# checks that the job ends (every rank, within a bounded time), relaunches the same command line
# with --resume auto, and checks that the resumed run saves the very bytes an uninterrupted run
# saves. Exits 0 when it does.
#
#   cluster-sample-resume.sh SAMPLE MPIEXEC WORKDIR CHECKPOINT_EVERY [SAMPLE ARGS...]
set -euo pipefail
sample="$1" mpiexec="$2" work="$3" every="$4"
shift 4
rm -rf "$work"
mkdir -p "$work"
mpi=("$mpiexec" -np 2 --allow-run-as-root --oversubscribe --bind-to none)
common=("$@" --cluster mpi --workers 1 --checkpoint-every "$every")
fail() {
  echo "cluster-sample-resume: FAILED: $*" >&2
  exit 1
}

"${mpi[@]}" "$sample" "${common[@]}" --checkpoint-dir "$work/uninterrupted" \
  --save "$work/uninterrupted.dl4cpp" >"$work/uninterrupted.log" 2>&1 ||
  fail "the uninterrupted run failed: $(tail -5 "$work/uninterrupted.log")"

"${mpi[@]}" "$sample" "${common[@]}" --checkpoint-dir "$work/ckpt" --resume auto \
  --save "$work/resumed.dl4cpp" >"$work/killed.log" 2>&1 &
job=$!
# Rank 1: the child of mpirun whose environment says so.
rank1=""
for _ in $(seq 1 1200); do
  if compgen -G "$work/ckpt/checkpoint-*.dl4cpp" >/dev/null; then
    for pid in $(pgrep -P "$job" || true); do
      if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
        rank1="$pid"
      fi
    done
    [[ -n "$rank1" ]] && break
  fi
  kill -0 "$job" 2>/dev/null || break
  sleep 0.05
done
[[ -n "$rank1" ]] || {
  wait "$job" || true
  fail "no checkpoint appeared while rank 1 ran: $(tail -5 "$work/killed.log")"
}
kill -9 "$rank1"
start=$SECONDS
status=0
wait "$job" || status=$?
echo "cluster-sample-resume: killed rank 1 (pid $rank1); the job ended with status $status after" \
  "$((SECONDS - start)) s"
[[ $status -ne 0 ]] || fail "the job ended with status 0 after rank 1 was killed"
[[ $((SECONDS - start)) -le 60 ]] || fail "the job took more than 60 s to end"
ls "$work/ckpt"

"${mpi[@]}" "$sample" "${common[@]}" --checkpoint-dir "$work/ckpt" --resume auto \
  --save "$work/resumed.dl4cpp" >"$work/resumed.log" 2>&1 ||
  fail "the relaunched run failed: $(tail -5 "$work/resumed.log")"
grep "resuming from" "$work/resumed.log" || fail "the relaunched run did not resume"
cmp "$work/uninterrupted.dl4cpp" "$work/resumed.dl4cpp" ||
  fail "the resumed run saved another model than the uninterrupted one"
echo "cluster-sample-resume: the relaunched run resumed and saved the uninterrupted run's model"

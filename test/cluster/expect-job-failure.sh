#!/usr/bin/env bash
# Runs an MPI job that is meant to fail (a rank that never joins, a rank killed) and checks how it
# fails: the job must end within MAX seconds, exit non-zero (unless --any-status: mpirun
# --enable-recovery exits 0 even when a rank aborts), and its output (stdout and stderr together)
# must match every --expect pattern and no --reject pattern (grep -E). Exits 0 when all holds, 1
# otherwise (printing why), 77 (CTest: skipped) when the launcher cannot be run at all.
#
#   expect-job-failure.sh --max-seconds MAX [--any-status] [--expect ERE]... [--reject ERE]...
#                         -- COMMAND...
#
# MAX is a whole number of seconds.
set -uo pipefail

max=""
any_status=0
expects=()
rejects=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --max-seconds) max="$2"; shift 2 ;;
    --any-status) any_status=1; shift ;;
    --expect) expects+=("$2"); shift 2 ;;
    --reject) rejects+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "expect-job-failure: unknown option $1" >&2; exit 1 ;;
  esac
done
if [[ ! "$max" =~ ^[0-9]+$ || $# -eq 0 ]]; then
  echo "usage: $0 --max-seconds MAX [--any-status] [--expect ERE]... [--reject ERE]... -- COMMAND..." >&2
  exit 1
fi
if ! command -v "$1" >/dev/null 2>&1; then
  echo "skipped: the launcher $1 cannot be run"
  exit 77
fi

log="$(mktemp "${TMPDIR:-/tmp}/dl4cpp-job.XXXXXX")"
trap 'rm -f "$log"' EXIT
start_us=${EPOCHREALTIME/./}
# A job that outlives MAX (a hang: failed below) is stopped 10 s later, here rather than by CTest's
# timeout, so that its output is shown.
timeout --kill-after=5 "$((max + 10))" "$@" >"$log" 2>&1
status=$?
elapsed_ms=$(((${EPOCHREALTIME/./} - start_us) / 1000))
elapsed="$((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000)))"
cat "$log"
echo "expect-job-failure: exit status $status after ${elapsed} s"

failed=0
if [[ $status -eq 0 && $any_status -eq 0 ]]; then
  echo "expect-job-failure: FAILED: the job exited 0, expected a failure" >&2
  failed=1
fi
if [[ $elapsed_ms -gt $((max * 1000)) ]]; then
  echo "expect-job-failure: FAILED: the job took ${elapsed} s, more than ${max} s" >&2
  failed=1
fi
for pattern in "${expects[@]}"; do
  grep -Eq -- "$pattern" "$log" || {
    echo "expect-job-failure: FAILED: no line matches '$pattern'" >&2
    failed=1
  }
done
for pattern in "${rejects[@]}"; do
  if grep -Eq -- "$pattern" "$log"; then
    echo "expect-job-failure: FAILED: a line matches '$pattern':" >&2
    grep -E -- "$pattern" "$log" >&2
    failed=1
  fi
done
[[ $failed -eq 0 ]] && echo "expect-job-failure: OK"
exit $failed

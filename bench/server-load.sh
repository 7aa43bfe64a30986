#!/usr/bin/env bash
# Load benchmark of samples/mnist_inference_server under wrk on loopback: requests/s and p50/p99
# latency for 1 and 2 inference workers, BATCHED vs SEQUENTIAL. Each request is one real MNIST
# test image as JSON (784 grey levels). Writes a table and
# bench/results/server-load-<level>-<machine>.json (scripts/bench-result-path.sh; BENCH_MACHINE
# names the machine).
#
#   bench/server-load.sh [seconds per run, default 5] [connections, default 16] [repeats, default 3]
#
# The four configurations run in turn, `repeats` rounds of them (so drift of a noisy machine
# spreads evenly); each row is the median of its runs.
#
# Needs a build in build/ (scripts/test.sh makes one) and wrk, curl and python3 (installed here
# from Debian when missing). The model is trained once (1 epoch of LeNet) and kept in build/.
# wrk, the HTTP threads and the inference workers share this machine's cores: on a 2-core machine
# the figures measure the whole system, client included.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-5}"
connections="${2:-16}"
repeats="${3:-3}"
port=18080
build=build
out="$(scripts/bench-result-path.sh server-load)"

for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || apt-get install -y "$tool" >/dev/null
done
cmake --build "$build" -j2 --target lenet_mnist mnist_inference_server >/dev/null

model="$build/lenet-1epoch.dl4cpp"
if [[ ! -f "$model" ]]; then
  echo "training the model served (1 epoch of LeNet) -> $model"
  "$build/samples/lenet_mnist" --epochs 1 --progress 0 --save "$model" >/dev/null
fi

# The first MNIST test image (a 7), as the JSON body of every request.
body="$build/predict-body.json"
python3 - "$body" <<'PY'
import json, os, sys
path = os.path.join(os.environ.get("DL4CPP_DATA_DIR", os.path.expanduser("~/.dl4cpp/data")),
                    "MNIST", "t10k-images-idx3-ubyte")
with open(path, "rb") as f:
    f.seek(16)
    pixels = list(f.read(784))
json.dump({"pixels": pixels}, open(sys.argv[1], "w"))
PY

server_pid=""
stop_server() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null; server_pid=""; }
trap stop_server EXIT

runs="$build/server-load-runs.jsonl"
: >"$runs"
to_ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) print v/1000; else if (v ~ /ms$/) print v+0; else print v*1000 }'; }
for round in $(seq "$repeats"); do
  for workers in 1 2; do
    for mode in batched sequential; do
      "$build/samples/mnist_inference_server" --model "$model" --port "$port" --workers "$workers" \
        --mode "$mode" --queue-limit 256 >/dev/null &
      server_pid=$!
      for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
      # Warm-up, then the measured run.
      PREDICT_BODY="$body" wrk -t1 -c"$connections" -d2s -s bench/wrk/predict.lua "http://127.0.0.1:$port/predict" >/dev/null
      report="$(PREDICT_BODY="$body" wrk -t1 -c"$connections" -d"${seconds}s" --latency \
                -s bench/wrk/predict.lua "http://127.0.0.1:$port/predict")"
      stop_server
      rps="$(awk '/^Requests\/sec:/ {print $2}' <<<"$report")"
      p50="$(to_ms "$(awk '$1 == "50%" {print $2}' <<<"$report")")"
      p99="$(to_ms "$(awk '$1 == "99%" {print $2}' <<<"$report")")"
      non2xx="$(awk '/Non-2xx/ {print $NF}' <<<"$report")"; non2xx="${non2xx:-0}"
      echo "{\"round\": $round, \"workers\": $workers, \"mode\": \"$mode\", \"requests_per_s\": $rps, \"p50_ms\": $p50, \"p99_ms\": $p99, \"non_2xx\": $non2xx}" >>"$runs"
    done
  done
done

mkdir -p "$(dirname "$out")"
python3 - "$runs" "$out" "$connections" "$seconds" "$repeats" <<'PY'
import json, statistics, sys
runs_path, out, connections, seconds, repeats = sys.argv[1:]
runs = [json.loads(line) for line in open(runs_path)]
rows = []
print(f"{'workers':<8} {'mode':<11} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}   (medians of {repeats})")
for workers in (1, 2):
    for mode in ("batched", "sequential"):
        mine = [r for r in runs if r["workers"] == workers and r["mode"] == mode]
        row = {"workers": workers, "mode": mode}
        for key in ("requests_per_s", "p50_ms", "p99_ms"):
            row[key] = statistics.median(r[key] for r in mine)
        row["non_2xx"] = sum(r["non_2xx"] for r in mine)
        rows.append(row)
        print(f"{workers:<8} {mode:<11} {row['requests_per_s']:>10.0f} {row['p50_ms']:>8.2f} "
              f"{row['p99_ms']:>8.2f} {row['non_2xx']:>8}")
json.dump({"connections": int(connections), "seconds": float(seconds), "repeats": int(repeats),
           "medians": rows, "runs": runs}, open(out, "w"), indent=1)
PY
echo "wrote $out"

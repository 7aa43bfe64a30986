#!/usr/bin/env bash
# Replays the hostile clients of the hardening issues against dl4cpp's HTTP servers on loopback
# (bench/server_abuse.py):
#   - the training page of a short lenet_mnist run (--ui-port 0): bodies of 3 GiB, a POST without
#     length, a header flood, 2,000 idle connections and 16 trickling clients while it trains;
#     reported: status codes, GET /stats.json latency meanwhile, peak memory, most file
#     descriptors, training time against a run without clients, and whether --save succeeded;
#   - mnist_inference_server: chunked and oversized bodies, a gzip bomb, header floods, malformed
#     requests, slow and trickling clients, SIGTERM under them, hostile model files; reported:
#     status codes, RSS, /health latency, SIGTERM time.
# Each case runs against a fresh process; the run takes a few minutes. Writes
# build/server-abuse.json.
#
#   bench/server-abuse.sh [server binary, default build/samples/mnist_inference_server]
#
# Needs a build in build/, MNIST (as lenet_mnist finds it) and python3. The model served is a LeNet
# trained briefly (kept in build/).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
server="${1:-$build/samples/mnist_inference_server}"
[[ $# -ge 1 ]] || cmake --build "$build" -j2 --target mnist_inference_server >/dev/null
cmake --build "$build" -j2 --target lenet_mnist >/dev/null

model="$build/lenet-abuse.dl4cpp"
if [[ ! -f "$model" ]]; then
  echo "training the model served (LeNet, 4096 examples) -> $model"
  "$build/samples/lenet_mnist" --epochs 1 --train-examples 4096 --test-examples 500 --progress 0 \
    --save "$model" >/dev/null
fi
python3 bench/server_abuse.py --page-sample "$build/samples/lenet_mnist" --server "$server" \
  --model "$model" --huge-input-model test/data/server/model-input-16384x16384.dl4cpp \
  --out "$build/server-abuse.json"

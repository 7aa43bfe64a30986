#!/usr/bin/env bash
# Replays the hostile clients of the hardening issue against mnist_inference_server on loopback
# (bench/server_abuse.py: chunked and oversized bodies, a gzip bomb, header floods, malformed
# requests, slow and trickling clients, SIGTERM under them, hostile model files) and reports for
# each case the status codes, the server's memory, whether /health stayed responsive and how long
# SIGTERM took. Each case runs against a fresh server; the run takes a few minutes and at most 21
# connections at a time. Writes build/server-abuse.json.
#
#   bench/server-abuse.sh [server binary, default build/samples/mnist_inference_server]
#
# Needs a build in build/ and python3. The model served is a LeNet trained briefly (kept in build/).
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
python3 bench/server_abuse.py --server "$server" --model "$model" \
  --huge-input-model test/data/server/model-input-16384x16384.dl4cpp --out "$build/server-abuse.json"

"""CTest sample.mnist_inference_server.onnx: mnist_inference_server serves an ONNX model.

usage: python3 serve_onnx_test.py SERVER ONNX_TOOL MODEL.dl4cpp WORK_DIR

Exports MODEL.dl4cpp (a LeNet saved by lenet_mnist) with `dl4cpp-onnx export`, starts the server
on a free loopback port once with the dl4cpp model file and once with the .onnx file, sends both
the same request (a test digit's grey levels, and a pattern of all 256 levels) and checks that the
ONNX model's answer equals the dl4cpp model's: the same class, probabilities at most 1e-4 apart.
Exit status 0 when they agree, 1 otherwise.
"""
import json
import os
import re
import subprocess
import sys
import urllib.request

TOLERANCE = 1e-4


def start(server, model):
    proc = subprocess.Popen([server, "--model", model, "--port", "0", "--device", "cpu",
                             "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    match = re.search(r"on http://127\.0\.0\.1:(\d+) ", line)
    if not match:
        proc.kill()
        rest = proc.stdout.read()
        sys.exit(f"the server did not start with {model}: {line}{rest}")
    return proc, int(match.group(1))


def request(port, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as answer:
        return json.loads(answer.read())


def answers(server, model, bodies):
    proc, port = start(server, model)
    try:
        health = request(port, "/health")
        return health, [request(port, "/predict", body) for body in bodies]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main():
    server, tool, model, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    onnx_model = os.path.join(work, "lenet.onnx")
    subprocess.run([tool, "export", model, onnx_model], check=True)
    # A digit-like stroke and a pattern of all 256 grey levels: two requests, two classes likely.
    stroke = [255 if 10 <= (i % 28) <= 14 and 4 <= i // 28 <= 24 else 0 for i in range(784)]
    levels = [(i * 37) % 256 for i in range(784)]
    bodies = [{"pixels": stroke}, {"pixels": levels}]
    _, expected = answers(server, model, bodies)
    health, got = answers(server, onnx_model, bodies)
    if health.get("format") != "onnx":
        sys.exit(f"/health does not say the model is ONNX: {health}")
    for body, want, have in zip(bodies, expected, got):
        diff = max(abs(a - b) for a, b in zip(want["probabilities"], have["probabilities"]))
        print(f"dl4cpp class {want['class']}, ONNX class {have['class']}, "
              f"largest probability difference {diff:.3g}")
        if want["class"] != have["class"] or diff > TOLERANCE:
            sys.exit(f"the ONNX model answers {have}, the dl4cpp model {want}")
    print("the ONNX model's answers equal the dl4cpp model's")


if __name__ == "__main__":
    main()

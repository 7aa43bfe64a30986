// ONNX Runtime's side of bench_onnx_inference (bench/onnx_inference.cpp): loads each model with one
// intra-op and one inter-op thread, runs it `warmup` times then `runs` times on random pixels of the given
// shape, timing each session.run alone (the process start and the model load are not measured),
// and prints {"<model>/<batch>": median milliseconds, ...} as one JSON line.
//
//   NODE_PATH=<ort dir>/node_modules node onnx_inference_ort.js SPEC.json
//
// SPEC.json: {"cases": [{"key", "model", "input", "dims", "warmup", "runs"}]}.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function median(values) {
  const v = [...values].sort((a, b) => a - b);
  const n = v.length;
  return n % 2 ? v[(n - 1) / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const result = {};
  for (const c of spec.cases) {
    const session = await ort.InferenceSession.create(c.model, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
    });
    const size = c.dims.reduce((a, b) => a * b, 1);
    // Random pixels in [0, 1), as dl4cpp's side feeds.
    const values = Float32Array.from({length: size}, () => Math.random());
    const feeds = {[c.input]: new ort.Tensor('float32', values, c.dims)};
    for (let i = 0; i < c.warmup; ++i) await session.run(feeds);
    const times = [];
    for (let i = 0; i < c.runs; ++i) {
      const start = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    result[c.key] = median(times);
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => {
  process.stderr.write(`onnx_inference_ort.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});

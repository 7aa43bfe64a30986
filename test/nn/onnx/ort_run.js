// Runs an ONNX model in ONNX Runtime (npm's onnxruntime-node) for the ONNX export tests
// (OnnxRuntimeRunner.h), exchanging tensors as raw little-endian float32 files:
//
//   NODE_PATH=<folder>/node_modules node ort_run.js SPEC.json
//
// SPEC.json: {"model": path, "inputs": [{"name", "dims", "file"}], "outputs": [names],
// "outDir": folder}; writes <outDir>/<i>.bin and <outDir>/<i>.json (the dims) per output i.
// Exit status 0 on success; ONNX Runtime's error on stderr and status 1 otherwise.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  // One thread: the tests share the machine with the build and other suites.
  const session = await ort.InferenceSession.create(spec.model, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const feeds = {};
  for (const input of spec.inputs) {
    const bytes = fs.readFileSync(input.file);
    const values = new Float32Array(bytes.length / 4);
    for (let i = 0; i < values.length; ++i) values[i] = bytes.readFloatLE(4 * i);
    feeds[input.name] = new ort.Tensor('float32', values, input.dims);
  }
  const results = await session.run(feeds, spec.outputs);
  spec.outputs.forEach((name, i) => {
    const tensor = results[name];
    const out = Buffer.alloc(tensor.data.length * 4);
    for (let j = 0; j < tensor.data.length; ++j) out.writeFloatLE(tensor.data[j], 4 * j);
    fs.writeFileSync(path.join(spec.outDir, `${i}.bin`), out);
    fs.writeFileSync(path.join(spec.outDir, `${i}.json`), JSON.stringify(tensor.dims));
  });
}

main().catch((e) => {
  process.stderr.write(`ort_run.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});

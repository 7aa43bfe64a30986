"""Prepares ONNX's own backend node test cases for the importer's test (OnnxNodeTestsTest.cpp).

usage: /usr/bin/python3 node_test_cases.py OUT_DIR

Generates the cases with ONNX's generator (backend-test-tools generate-data; Debian 12's numpy
lacks the aliases np.float, np.object, np.bool, np.int the generator of ONNX 1.12 still uses, so
they are restored first), then writes OUT_DIR/cases.txt, one line per case:

  name|ops|skip|input shapes|output shapes

`skip` says why the case is not imported (an operator the importer does not map), or is empty;
then each case directory OUT_DIR/name holds model.onnx, in<i>.bin and out<i>.bin (float32,
little-endian, C order). Node test models take their weights as graph inputs; an imported model
holds them as initializers, so every input a node reads as a weight (all but the data of the
element-wise and concatenation operators) becomes an initializer holding its test value.
"""
import os
import sys

import numpy as np

for alias, kind in (("float", float), ("object", object), ("bool", bool), ("int", int),
                    ("complex", complex), ("str", str)):
    if alias not in np.__dict__:
        setattr(np, alias, kind)

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from onnx.backend.test.cmd_tools import main as generate  # noqa: E402

SUPPORTED = {
    "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool",
    "ReduceSum", "Gemm", "MatMul", "BatchNormalization", "LRN", "Relu", "Tanh", "Sigmoid",
    "Softplus", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "Clip", "Softmax", "LogSoftmax", "Dropout",
    "Identity", "Flatten", "Reshape", "Concat", "Add", "Sub", "Mul", "Max", "Sum", "Mean", "Pad",
    "Constant", "LSTM", "Transpose", "Squeeze",
}
DATA_OPS = {"Add", "Sub", "Mul", "Max", "Sum", "Mean", "Concat"}

out = sys.argv[1]
raw = os.path.join(out, "generated")
sys.argv = ["backend-test-tools", "generate-data", "-o", raw]
generate()

lines = []
node_dir = os.path.join(raw, "node")
for name in sorted(os.listdir(node_dir)):
    case = os.path.join(node_dir, name)
    model = onnx.load(os.path.join(case, "model.onnx"))
    ops = sorted({n.op_type for n in model.graph.node})
    unsupported = [op for op in ops if op not in SUPPORTED]
    skip = "operator " + ",".join(unsupported) + " not imported" if unsupported else ""
    data = os.path.join(case, "test_data_set_0")
    if not skip and not os.path.isdir(data):
        skip = "no test data"
    ins, outs = [], []
    if not skip and not all(vi.type.HasField("tensor_type")
                            for vi in list(model.graph.input) + list(model.graph.output)):
        skip = "an input or output that is not a tensor"
    if not skip:
        inputs = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"input_{i}.pb")))
                  for i in range(len(model.graph.input))]
        outputs = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"output_{i}.pb")))
                   for i in range(len(model.graph.output))]
        keep = []
        first_op = model.graph.node[0].op_type if model.graph.node else ""
        for i, (vi, value) in enumerate(zip(list(model.graph.input), inputs)):
            is_data = i == 0 or (first_op in DATA_OPS and value.dtype == np.float32)
            if is_data:
                keep.append((vi, value))
            else:
                model.graph.initializer.append(numpy_helper.from_array(value, vi.name))
        del model.graph.input[:]
        model.graph.input.extend(vi for vi, _ in keep)
        if any(v.dtype != np.float32 for _, v in keep) or any(v.dtype != np.float32 for v in outputs):
            skip = "a data input or output that is not float"
        else:
            target = os.path.join(out, name)
            os.makedirs(target, exist_ok=True)
            onnx.save(model, os.path.join(target, "model.onnx"))
            for i, (_, v) in enumerate(keep):
                v.astype("<f4").tofile(os.path.join(target, f"in{i}.bin"))
            for i, v in enumerate(outputs):
                v.astype("<f4").tofile(os.path.join(target, f"out{i}.bin"))
            ins = ["x".join(str(d) for d in v.shape) for _, v in keep]
            outs = ["x".join(str(d) for d in v.shape) for v in outputs]
    lines.append("|".join([name, ",".join(ops), skip, ";".join(ins), ";".join(outs)]))

with open(os.path.join(out, "cases.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")

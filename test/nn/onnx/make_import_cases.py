"""Writes small ONNX models with ONNX's own Python helper, one per operator form the importer
maps (test/nn/onnx/OnnxImportOpsTest.cpp imports each and compares it with ONNX Runtime).

usage: /usr/bin/python3 make_import_cases.py OUT_DIR

Each model has one float input "x" with a symbolic batch dimension and one output "y"; its
weights are random (seeded), so a weight read in the wrong layout shows.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

rng = np.random.default_rng(47)


def weight(name, *shape):
    return numpy_helper.from_array(rng.uniform(-1, 1, shape).astype(np.float32), name)


def positive(name, *shape):
    return numpy_helper.from_array(rng.uniform(0.5, 1.5, shape).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def scalar(name, value):
    return numpy_helper.from_array(np.array(value, dtype=np.float32), name)


def model(name, in_shape, out_shape, nodes, inits=(), opset=17, full_check=True):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", *in_shape])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", *out_shape] if out_shape else ["N", "C", "H", "W"])],
        list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="onnx.helper")
    m.ir_version = 8
    # full_check runs ONNX's shape inference, which divides by a zero stride.
    checker.check_model(m, full_check=full_check)
    return m


IMG = [3, 6, 6]
cases = {}
n = helper.make_node

for opset in (11, 13, 17):
    cases[f"conv_relu_opset{opset}"] = model(f"conv{opset}", IMG, None, [
        n("Conv", ["x", "W", "B"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Relu", ["c"], ["y"])], [weight("W", 4, 3, 3, 3), weight("B", 4)], opset)
cases["conv_stride_dilation_nobias"] = model("c", IMG, None, [
    n("Conv", ["x", "W"], ["y"], kernel_shape=[2, 2], strides=[2, 1], dilations=[1, 2])],
    [weight("W", 2, 3, 2, 2)])
cases["conv_asymmetric_pads"] = model("c", IMG, None, [
    n("Conv", ["x", "W", "B"], ["y"], kernel_shape=[3, 3], pads=[0, 1, 1, 2])],
    [weight("W", 2, 3, 3, 3), weight("B", 2)])
cases["maxpool"] = model("p", IMG, None, [
    n("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])])
cases["averagepool"] = model("p", IMG, None, [
    n("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])])
cases["averagepool_pads_exclude"] = model("p", IMG, None, [
    n("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0)])
cases["globalaveragepool_flatten"] = model("g", IMG, [3], [
    n("GlobalAveragePool", ["x"], ["g"]), n("Flatten", ["g"], ["y"])])
cases["maxpool_same_upper_pads"] = model("p", IMG, None, [
    n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[1, 1], pads=[0, 0, 1, 1])])
cases["globallppool"] = model("g", IMG, None, [n("GlobalLpPool", ["x"], ["y"], p=3)])
cases["reducesum_hw_opset13"] = model("r", IMG, None, [
    n("ReduceSum", ["x", "axes"], ["y"], keepdims=1)], [ints("axes", [2, 3])], opset=13)
cases["reducesum_hw_opset11"] = model("r", IMG, None, [
    n("ReduceSum", ["x"], ["y"], axes=[-1, -2], keepdims=1)], opset=11)
cases["globalmaxpool"] = model("g", IMG, None, [n("GlobalMaxPool", ["x"], ["y"])])
cases["gemm_transB"] = model("g", [5], [4], [
    n("Gemm", ["x", "W", "B"], ["y"], transB=1)], [weight("W", 4, 5), weight("B", 4)])
cases["gemm_alpha_beta"] = model("g", [5], [4], [
    n("Gemm", ["x", "W", "B"], ["y"], alpha=0.5, beta=2.0)], [weight("W", 5, 4), weight("B", 4)])
cases["matmul_add"] = model("m", [5], [3], [
    n("MatMul", ["x", "W"], ["m"]), n("Add", ["m", "B"], ["y"])], [weight("W", 5, 3), weight("B", 3)])
cases["flatten_gemm_softmax"] = model("f", IMG, [4], [
    n("Flatten", ["x"], ["f"], axis=1), n("Gemm", ["f", "W", "B"], ["g"], transB=1),
    n("Softmax", ["g"], ["y"], axis=1)], [weight("W", 4, 108), weight("B", 4)])
cases["reshape_gemm"] = model("r", IMG, [4], [
    n("Reshape", ["x", "shape"], ["f"]), n("Gemm", ["f", "W"], ["y"], transB=1)],
    [ints("shape", [-1, 108]), weight("W", 4, 108)])
cases["reshape_to_image"] = model("r", [108], None, [
    n("Reshape", ["x", "shape"], ["r"]), n("MaxPool", ["r"], ["y"], kernel_shape=[2, 2])],
    [ints("shape", [-1, 3, 6, 6])])
for opset in (11, 14, 15):
    cases[f"batchnorm_opset{opset}"] = model("b", IMG, None, [
        n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)],
        [weight("s", 3), weight("b", 3), weight("m", 3), positive("v", 3)], opset)
cases["batchnorm_rows"] = model("b", [5], [5], [
    n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
    [weight("s", 5), weight("b", 5), weight("m", 5), positive("v", 5)])
cases["lrn"] = model("l", [6, 4, 4], None, [
    n("LRN", ["x"], ["y"], size=3, alpha=1e-2, beta=0.75, bias=2.0)])
for op in ("Relu", "Tanh", "Sigmoid", "Softplus"):
    cases[op.lower()] = model(op, [5], [5], [n(op, ["x"], ["y"])])
cases["leakyrelu"] = model("a", [5], [5], [n("LeakyRelu", ["x"], ["y"], alpha=0.3)])
cases["elu"] = model("a", [5], [5], [n("Elu", ["x"], ["y"])])
cases["selu"] = model("a", [5], [5], [n("Selu", ["x"], ["y"])])
cases["hardsigmoid"] = model("a", [5], [5], [n("HardSigmoid", ["x"], ["y"], alpha=0.2, beta=0.5)])
cases["clip_relu6"] = model("a", [5], [5], [n("Clip", ["x", "lo", "hi"], ["y"])],
                            [scalar("lo", 0), scalar("hi", 6)])
cases["clip_hardtanh"] = model("a", [5], [5], [n("Clip", ["x", "lo", "hi"], ["y"])],
                               [scalar("lo", -1), scalar("hi", 1)])
cases["softmax_opset11"] = model("s", [5], [5], [n("Softmax", ["x"], ["y"])], opset=11)
cases["logsoftmax_gemm"] = model("s", [5], [4], [
    n("Gemm", ["x", "W", "B"], ["g"], transB=1),
    n("LogSoftmax", ["g"], ["y"], axis=1)],
    [weight("W", 4, 5), weight("B", 4)], opset=13)
cases["softmax_channels"] = model("s", IMG, None, [n("Softmax", ["x"], ["y"], axis=1)])
cases["dropout_identity"] = model("d", [5], [5], [
    n("Dropout", ["x"], ["d"]), n("Identity", ["d"], ["y"])])
cases["concat_channels"] = model("c", IMG, None, [
    n("Relu", ["x"], ["a"]), n("Sigmoid", ["x"], ["b"]), n("Concat", ["a", "b", "x"], ["y"], axis=1)])
cases["concat_rows"] = model("c", [5], [10], [
    n("Tanh", ["x"], ["a"]), n("Concat", ["x", "a"], ["y"], axis=-1)])
for op in ("Add", "Sub", "Mul", "Max"):
    cases[f"elementwise_{op.lower()}"] = model(op, IMG, None, [
        n("Tanh", ["x"], ["a"]), n("Sigmoid", ["x"], ["b"]), n(op, ["a", "b"], ["y"])])
cases["sum_three"] = model("s", [5], [5], [
    n("Tanh", ["x"], ["a"]), n("Sigmoid", ["x"], ["b"]), n("Sum", ["a", "b", "x"], ["y"])])
cases["scale_shift_constants"] = model("s", [5], [5], [
    n("Mul", ["x", "k"], ["a"]), n("Add", ["a", "c"], ["b"]), n("Sub", ["b", "c2"], ["y"])],
    [scalar("k", 1.5), scalar("c", 0.25), scalar("c2", 2.0)])
cases["pad"] = model("p", IMG, None, [n("Pad", ["x", "pads"], ["y"], mode="constant")],
                     [ints("pads", [0, 0, 1, 2, 0, 0, 2, 0])])
cases["constant_node_shape"] = model("c", IMG, [108], [
    n("Constant", [], ["shape"], value=helper.make_tensor("sv", TensorProto.INT64, [2], [0, -1])),
    n("Reshape", ["x", "shape"], ["y"])])
# A small convolutional network as exporters write it.
# LSTM over sequences (N, F, T) = (N, 3, 5): transposed to ONNX's (T, N, F) and back, as the
# exporter writes it; hidden size 4.
SEQ = [3, 5]
cases["lstm_opset14"] = model("lstm", SEQ, [4, 5], [
    n("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
    n("LSTM", ["xt", "W", "R", "B"], ["Y"], hidden_size=4),
    n("Transpose", ["Y"], ["yt"], perm=[1, 2, 3, 0]),
    n("Squeeze", ["yt", "axes"], ["y"])],
    [weight("W", 1, 16, 3), weight("R", 1, 16, 4), weight("B", 1, 32), ints("axes", [0])], 14)
cases["lstm_opset11_activations"] = model("lstm", SEQ, [4, 5], [
    n("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
    n("LSTM", ["xt", "W", "R"], ["Y", "", ""], hidden_size=4,
      activations=["HardSigmoid", "Relu", "Relu"]),
    n("Squeeze", ["Y"], ["ys"], axes=[1]),
    n("Transpose", ["ys"], ["y"], perm=[1, 2, 0])],
    [weight("W", 1, 16, 3), weight("R", 1, 16, 4)], 11)
cases["lstm_per_step_softmax"] = model("lstm", SEQ, [2, 5], [
    n("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
    n("LSTM", ["xt", "W", "R", "B"], ["Y"], hidden_size=4, direction="forward"),
    n("Transpose", ["Y"], ["yt"], perm=[1, 2, 3, 0]),
    n("Squeeze", ["yt", "axes"], ["h"]),
    n("Transpose", ["h"], ["rows"], perm=[0, 2, 1]),
    n("MatMul", ["rows", "W2"], ["m"]),
    n("Add", ["m", "B2"], ["z"]),
    n("Transpose", ["z"], ["zt"], perm=[0, 2, 1]),
    n("Softmax", ["zt"], ["y"], axis=1)],
    [weight("W", 1, 16, 3), weight("R", 1, 16, 4), weight("B", 1, 32), ints("axes", [0]),
     weight("W2", 4, 2), weight("B2", 2)], 17)
cases["lstm_peepholes"] = model("lstm", SEQ, [4, 5], [
    n("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
    n("LSTM", ["xt", "W", "R", "B", "", "", "", "P"], ["Y"], hidden_size=4),
    n("Transpose", ["Y"], ["yt"], perm=[1, 2, 3, 0]),
    n("Squeeze", ["yt", "axes"], ["y"])],
    [weight("W", 1, 16, 3), weight("R", 1, 16, 4), weight("B", 1, 32), weight("P", 1, 12),
     ints("axes", [0])], 14)
cases["lstm_rnn_relu"] = model("lstm", SEQ, [4, 5], [
    n("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
    n("RNN", ["xt", "W", "R", "B"], ["Y"], hidden_size=4, activations=["Relu"]),
    n("Squeeze", ["Y"], ["ys"], axes=[1]),
    n("Transpose", ["ys"], ["y"], perm=[1, 2, 0])],
    [weight("W", 1, 4, 3), weight("R", 1, 4, 4), weight("B", 1, 8)], 11)
cases["lstm_bidirectional_mean"] = model("lstm", SEQ, [4, 5], [
    n("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
    n("LSTM", ["xt", "W", "R", "B"], ["Y"], hidden_size=4, direction="bidirectional"),
    n("Transpose", ["Y"], ["yt"], perm=[2, 1, 3, 0]),
    n("ReduceMean", ["yt"], ["y"], axes=[1], keepdims=0)],
    [weight("W", 2, 16, 3), weight("R", 2, 16, 4), weight("B", 2, 32)], 13)
cases["lstm_bidirectional_rnn_last"] = model("lstm", SEQ, [8], [
    n("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
    n("RNN", ["xt", "W", "R", "B"], ["Y"], hidden_size=4, direction="bidirectional"),
    n("Transpose", ["Y"], ["yt"], perm=[2, 1, 3, 0]),
    n("Reshape", ["yt", "shape"], ["seq"]),
    n("Slice", ["seq", "starts", "ends", "sliceaxes"], ["last"]),
    n("Squeeze", ["last", "sqaxes"], ["y"])],
    [weight("W", 2, 4, 3), weight("R", 2, 4, 4), weight("B", 2, 8), ints("shape", [0, 8, -1]),
     ints("starts", [-1]), ints("ends", [2**63 - 1]), ints("sliceaxes", [2]),
     ints("sqaxes", [2])], 17)
cases["lenet_like"] = model("lenet", [1, 12, 12], [5], [
    n("Conv", ["x", "W1", "B1"], ["c1"], kernel_shape=[3, 3]),
    n("BatchNormalization", ["c1", "s", "b", "m", "v"], ["bn"]),
    n("Relu", ["bn"], ["r1"]),
    n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
    n("Conv", ["p1", "W2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    n("Add", ["c2", "p1"], ["res"]),
    n("Flatten", ["res"], ["f"]),
    n("Gemm", ["f", "W3", "B3"], ["g"], transB=1),
    n("Relu", ["g"], ["r3"]),
    n("MatMul", ["r3", "W4"], ["mm"]), n("Add", ["mm", "B4"], ["logits"]),
    n("Softmax", ["logits"], ["y"], axis=1)],
    [weight("W1", 4, 1, 3, 3), weight("B1", 4), weight("s", 4), weight("b", 4), weight("m", 4),
     positive("v", 4), weight("W2", 4, 4, 3, 3), weight("W3", 8, 100), weight("B3", 8),
     weight("W4", 8, 5), weight("B4", 5)])

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name, m in cases.items():
    save(m, os.path.join(out, name + ".onnx"))
print("\n".join(sorted(cases)))

# Models the importer must refuse, each with a ModelExchangeError naming the node and the reason
# (the test holds the expected words). Nodes are named "bad".
bad = {
    "bad_unsupported_op": model("b", [5], [5], [n("Cos", ["x"], ["y"], name="bad")]),
    "bad_opset10": model("b", [5], [5], [n("Relu", ["x"], ["y"], name="bad")], opset=10),
    "bad_lstm_reverse": model("b", SEQ, [4, 5], [
        n("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
        n("LSTM", ["xt", "W", "R"], ["Y"], hidden_size=4, direction="reverse", name="bad"),
        n("Transpose", ["Y"], ["yt"], perm=[1, 2, 3, 0]),
        n("Squeeze", ["yt", "axes"], ["y"])],
        [weight("W", 1, 16, 3), weight("R", 1, 16, 4), ints("axes", [0])], full_check=False),
    "bad_bidirectional_split": model("b", SEQ, [1, 4, 5], [
        n("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
        n("RNN", ["xt", "W", "R"], ["Y"], hidden_size=4, direction="bidirectional"),
        n("Transpose", ["Y"], ["y"], perm=[1, 2, 3, 0], name="bad")],
        [weight("W", 2, 4, 3), weight("R", 2, 4, 4)], full_check=False),
    "bad_lstm_sequence_lens": model("b", SEQ, [4, 5], [
        n("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
        n("LSTM", ["xt", "W", "R", "", "lens"], ["Y"], hidden_size=4, name="bad"),
        n("Transpose", ["Y"], ["yt"], perm=[1, 2, 3, 0]),
        n("Squeeze", ["yt", "axes"], ["y"])],
        [weight("W", 1, 16, 3), weight("R", 1, 16, 4), ints("axes", [0]),
         numpy_helper.from_array(np.array([5, 5], dtype=np.int32), "lens")], full_check=False),
    "bad_grouped_conv": model("b", IMG, None, [
        n("Conv", ["x", "W"], ["y"], kernel_shape=[3, 3], group=3, name="bad")],
        [weight("W", 3, 1, 3, 3)]),
    "bad_ceil_mode": model("b", IMG, None, [
        n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], ceil_mode=1, name="bad")]),
    "bad_reshape": model("b", [108], ["A", "B"], [
        n("Reshape", ["x", "shape"], ["y"], name="bad")], [ints("shape", [-1, 54, 2])]),
    "bad_softmax_images_opset11": model("b", IMG, None, [
        n("Softmax", ["x"], ["y"], axis=1, name="bad")], opset=11),
    "bad_broadcast_add": model("b", [5], [5], [n("Add", ["x", "B"], ["y"], name="bad")],
                               [weight("B", 5)]),
    "bad_pad_reflect": model("b", IMG, None, [
        n("Pad", ["x", "pads"], ["y"], mode="reflect", name="bad")],
        [ints("pads", [0, 0, 1, 1, 0, 0, 1, 1])]),
    "bad_uneven_pool_pads": model("b", IMG, None, [
        n("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 0, 0], name="bad")]),
    "bad_reducesum_channels": model("b", IMG, None, [
        n("ReduceSum", ["x", "axes"], ["y"], name="bad")], [ints("axes", [1])]),
    "bad_zero_stride": model("b", IMG, None, [
        n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[0, 1], name="bad")],
        full_check=False),
    "bad_huge_pad": model("b", IMG, None, [n("Pad", ["x", "pads"], ["y"], name="bad")],
                          [ints("pads", [0, 0, 1 << 40, 0, 0, 0, 0, 0])]),
    "bad_elu_alpha": model("b", [5], [5], [n("Elu", ["x"], ["y"], alpha=0.5, name="bad")]),
    "bad_lrn_even": model("b", IMG, None, [n("LRN", ["x"], ["y"], size=2, name="bad")]),
}
for name, m in bad.items():
    save(m, os.path.join(out, name + ".onnx"))

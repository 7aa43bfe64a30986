// The CUDA backend's transform family (CudaTransform.cu) against the CPU backend (the reference):
// what the embedding layers and the graph vertices (merge, subset, stack, element-wise, scale,
// shift, L2 normalisation) run on, the sums of gradients at a graph's fan-out, and a residual sum
// fused with its ReLU.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "cuda/CudaTestUtil.h"

using namespace dl4cpp;
using cudatest::Backends;
using cudatest::checkClose;
using cudatest::checkTrainsAlike;
using cudatest::cudaDevicePresent;
using cudatest::kGpu;
using cudatest::randomTensor;

TEST_SUITE("cuda") {
  TEST_CASE("CUDA parity: embedding lookup and its gradient, padded steps included") {
    if (!cudaDevicePresent()) return;
    Backends b;
    const int64_t n = 5, steps = 6, rows = 7, c = 9;
    std::vector<int64_t> index;
    for (int64_t i = 0; i < n * steps; ++i) index.push_back(i % 4 == 3 ? -1 : (i * 5) % rows);
    const Tensor w = randomTensor(Shape{rows, c}, 1000), bias = randomTensor(Shape{c}, 1001);
    const Tensor dz = randomTensor(Shape{n, c, steps}, 1002);
    for (bool withBias : {true, false}) {
      CAPTURE(withBias);
      const Tensor b0 = withBias ? bias : Tensor();
      Tensor zCpu(Shape{n, c, steps}), zGpu(Shape{n, c, steps}, kGpu);
      b.cpu->embeddingForward(index, w, b0, zCpu);
      b.gpu->embeddingForward(index, w.to(kGpu), b0.empty() ? Tensor() : b0.to(kGpu), zGpu);
      checkClose(zCpu, zGpu, 0);
      Tensor dwCpu(w.shape()), dbCpu = withBias ? Tensor(bias.shape()) : Tensor();
      Tensor dwGpu(w.shape(), kGpu), dbGpu = withBias ? Tensor(bias.shape(), kGpu) : Tensor();
      b.cpu->embeddingBackward(index, dz, dwCpu, dbCpu);
      b.gpu->embeddingBackward(index, dz.to(kGpu), dwGpu, dbGpu);
      checkClose(dwCpu, dwGpu, 0);  // the same order of sums on both devices
      if (withBias) checkClose(dbCpu, dbGpu, 0);
    }
  }

  TEST_CASE("CUDA parity: block copies, combinations, scaling and L2 normalisation") {
    if (!cudaDevicePresent()) return;
    Backends b;
    const Tensor x = randomTensor(Shape{4, 3, 5}, 1010);
    Tensor yCpu(Shape{4, 2, 5}), yGpu(Shape{4, 2, 5}, kGpu);
    b.cpu->copyBlocks(x, 5, 15, yCpu, 0, 10, 10, 4);
    b.gpu->copyBlocks(x.to(kGpu), 5, 15, yGpu, 0, 10, 10, 4);
    checkClose(yCpu, yGpu, 0);
    Tensor oneCpu(Shape{15}), oneGpu(Shape{15}, kGpu);
    b.cpu->copyBlocks(x, 30, 0, oneCpu, 0, 0, 15, 1);
    b.gpu->copyBlocks(x.to(kGpu), 30, 0, oneGpu, 0, 0, 15, 1);
    checkClose(oneCpu, oneGpu, 0);

    std::vector<Tensor> xs, xsGpu;
    for (uint64_t k = 0; k < 3; ++k) {
      xs.push_back(randomTensor(x.shape(), 1020 + k));
      xsGpu.push_back(xs.back().to(kGpu));
    }
    xs[2].data()[3] = xs[0].data()[3];  // a tie for MAX
    xsGpu[2] = xs[2].to(kGpu);
    const Tensor dy = randomTensor(x.shape(), 1030);
    for (CombineOp op : {CombineOp::ADD, CombineOp::SUBTRACT, CombineOp::PRODUCT,
                         CombineOp::AVERAGE, CombineOp::MAX}) {
      CAPTURE(static_cast<int>(op));
      const size_t count = op == CombineOp::SUBTRACT ? 2 : 3;
      const std::span<const Tensor> in(xs.data(), count), inGpu(xsGpu.data(), count);
      Tensor outCpu(x.shape()), outGpu(x.shape(), kGpu);
      b.cpu->combineForward(op, in, outCpu);
      b.gpu->combineForward(op, inGpu, outGpu);
      checkClose(outCpu, outGpu, 0);
      std::vector<Tensor> gCpu, gGpu;  // input 1 takes no gradient
      for (size_t k = 0; k < count; ++k) {
        gCpu.push_back(k == 1 ? Tensor() : Tensor(x.shape()));
        gGpu.push_back(k == 1 ? Tensor() : Tensor(x.shape(), kGpu));
      }
      b.cpu->combineBackward(op, in, outCpu, dy, gCpu);
      b.gpu->combineBackward(op, inGpu, outGpu, dy.to(kGpu), gGpu);
      for (size_t k = 0; k < count; ++k)
        if (k != 1) checkClose(gCpu[k], gGpu[k], 0);
    }
    Tensor sCpu(x.shape()), sGpu(x.shape(), kGpu);
    b.cpu->scaleShift(x, 0.5f, -2.0f, sCpu);
    b.gpu->scaleShift(x.to(kGpu), 0.5f, -2.0f, sGpu);
    checkClose(sCpu, sGpu, 0);

    Tensor small = x.clone();
    for (int64_t i = 0; i < 15; ++i) small.data()[15 + i] = 1e-9f;  // example 1 under eps
    for (double eps : {1e-8, 1e-2}) {
      CAPTURE(eps);
      Tensor nCpu(x.shape()), nGpu(x.shape(), kGpu);
      b.cpu->l2NormalizeForward(small, eps, nCpu);
      b.gpu->l2NormalizeForward(small.to(kGpu), eps, nGpu);
      checkClose(nCpu, nGpu, 1e-6, 1e-5);
      Tensor dCpu(x.shape()), dGpu(x.shape(), kGpu);
      b.cpu->l2NormalizeBackward(small, eps, dy, dCpu);
      b.gpu->l2NormalizeBackward(small.to(kGpu), eps, dy.to(kGpu), dGpu);
      checkClose(dCpu, dGpu, 1e-5, 1e-4);
    }
  }

  TEST_CASE("CUDA parity: a graph with every vertex kind trains and answers as on the CPU") {
    if (!cudaDevicePresent()) return;
    auto dense = [](int64_t n) {
      return DenseLayer::Builder().nOut(n).activation(Activation::TANH).build();
    };
    const ComputationGraphConfiguration conf =
        NeuralNetConfiguration::Builder()
            .seed(21)
            .updater(Adam(0.01))
            .graphBuilder()
            .addInputs("a", "b")
            .setInputTypes(InputType::feedForward(5), InputType::feedForward(5))
            .addLayer("da", dense(6), "a")
            .addLayer("db", dense(6), "b")
            .addVertex("sum", ElementWiseVertex(ElementWiseVertex::Op::Add), "da", "db")
            .addVertex("max", ElementWiseVertex(ElementWiseVertex::Op::Max), "da", "db", "sum")
            .addVertex("prod", ElementWiseVertex(ElementWiseVertex::Op::Product), "da", "db")
            .addVertex("scaled", ScaleVertex(0.5), "prod")
            .addVertex("shifted", ShiftVertex(0.25), "scaled")
            .addVertex("norm", L2NormalizeVertex(), "max")
            .addVertex("sub", SubsetVertex(1, 4), "sum")
            .addVertex("stack", StackVertex(), "da", "db")
            .addVertex("unstack", UnstackVertex(1, 2), "stack")
            .addVertex("merge", MergeVertex(), "shifted", "norm", "sub", "unstack")
            .addLayer("out",
                      OutputLayer::Builder(LossFunction::MCXENT)
                          .nOut(3)
                          .activation(Activation::SOFTMAX)
                          .build(),
                      "merge")
            .setOutputs("out")
            .build();
    ComputationGraph cpu(conf, Device::cpu(), 1), gpu(conf, kGpu);
    cpu.init();
    gpu.init();
    const Tensor a = randomTensor(Shape{6, 5}, 1040), b2 = randomTensor(Shape{6, 5}, 1041);
    Tensor labels(Shape{6, 3});
    for (int64_t r = 0; r < 6; ++r) labels.data()[r * 3 + r % 3] = 1;
    const MultiDataSet data({a, b2}, {labels});
    checkTrainsAlike(cpu, gpu, data);
    const Tensor yGpu = gpu.outputSingle({a, b2}, false);
    CHECK(yGpu.onHost());
    checkClose(cpu.outputSingle({a, b2}, false), yGpu, 1e-4, 1e-3);
  }

  TEST_CASE("CUDA parity: a residual sum fused with its ReLU trains and answers as on the CPU") {
    // The graph runs the sum and the ReLU layer reading it as one (ComputationGraph.cpp), piece by
    // piece, on the device's ops; 16 x 4 x 48 x 48 values make three pieces.
    if (!cudaDevicePresent()) return;
    const ComputationGraphConfiguration conf =
        NeuralNetConfiguration::Builder()
            .seed(23)
            .updater(Sgd(0.05))
            .convolutionMode(ConvolutionMode::Truncate)
            .graphBuilder()
            .addInputs("input")
            .setInputTypes(InputType::convolutional(48, 48, 4))
            .addLayer("conv",
                      ConvolutionLayer::Builder(3, 3)
                          .padding(1, 1)
                          .nOut(4)
                          .activation(Activation::IDENTITY)
                          .build(),
                      "input")
            .addVertex("sum", ElementWiseVertex(ElementWiseVertex::Op::Add), "input", "conv")
            .addLayer("relu", ActivationLayer::Builder(Activation::RELU).build(), "sum")
            .addLayer("pool", GlobalPoolingLayer::Builder(PoolingType::AVG).build(), "relu")
            .addLayer("out",
                      OutputLayer::Builder(LossFunction::MCXENT)
                          .nOut(3)
                          .activation(Activation::SOFTMAX)
                          .build(),
                      "pool")
            .setOutputs("out")
            .build();
    ComputationGraph cpu(conf, Device::cpu(), 1), gpu(conf, kGpu);
    cpu.init();
    gpu.init();
    const Tensor x = randomTensor(Shape{16, 4, 48, 48}, 1050);
    Tensor labels(Shape{16, 3});
    for (int64_t r = 0; r < 16; ++r) labels.data()[r * 3 + r % 3] = 1;
    const MultiDataSet data({x}, {labels});
    checkTrainsAlike(cpu, gpu, data);
    checkClose(cpu.outputSingle({x}, false), gpu.outputSingle({x}, false), 1e-4, 1e-3);
  }
}

// The CUDA backend's recurrent family (CudaRecurrent.cu) against the CPU backend (the reference):
// LSTM, GravesLSTM and SimpleRnn forward and backward with masks, carried state and truncated
// backward passes; the step ops (gather, scatter, reverse, direction combining, masks of a
// value); and recurrent networks trained on both devices.
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

namespace {

constexpr int64_t kN = 4, kIn = 5, kT = 7, kH = 6;

// Padding at the end, at the start, in the middle, none.
Tensor stepMask() {
  Tensor m(Shape{kN, kT});
  const char* rows[kN] = {"1111100", "0011111", "1101111", "1111111"};
  for (int64_t e = 0; e < kN; ++e)
    for (int64_t s = 0; s < kT; ++s) m.data()[e * kT + s] = rows[e][s] == '1' ? 1.0f : 0.0f;
  return m;
}

struct RecurrentCase {
  const char* name;
  int gates;       // 4: LSTM, 1: simple RNN
  bool peepholes;  // GravesLSTM
  bool masked, carried;
  int64_t backwardSteps;
  RecurrentActivations act;
};

// Runs one case's forward and backward pass on a backend; returns y, dW, dRW, db, dx and the
// carried state's h and c.
std::vector<Tensor> runCase(Backend& backend, Device device, const RecurrentCase& c,
                            uint64_t seed) {
  const int64_t g = c.gates * kH;
  const Tensor x = randomTensor(Shape{kN, kIn, kT}, seed).to(device);
  const Tensor w = randomTensor(Shape{kIn, g}, seed + 1, -0.5, 0.5).to(device);
  const Tensor rw =
      randomTensor(Shape{kH, g + (c.peepholes ? 3 : 0)}, seed + 2, -0.5, 0.5).to(device);
  const Tensor b = randomTensor(Shape{g}, seed + 3, -0.5, 0.5).to(device);
  const Tensor dy = randomTensor(Shape{kN, kH, kT}, seed + 4).to(device);
  const Tensor mask = c.masked ? stepMask() : Tensor();
  RecurrentState state;
  if (c.carried) {
    state.h = randomTensor(Shape{kN, kH}, seed + 5);
    state.c = randomTensor(Shape{kN, kH}, seed + 6);
  }
  Tensor y(Shape{kN, kH, kT}, device);
  Tensor ws(Shape{recurrentWorkspaceFloats(kN, kT, kIn, kH, c.gates)}, device);
  Tensor dw(w.shape(), device), drw(rw.shape(), device), db(b.shape(), device);
  Tensor dx(x.shape(), device);
  if (c.gates == 4) {
    backend.lstmForward(x, w, rw, b, mask, c.act, y, ws, c.carried ? &state : nullptr);
    backend.lstmBackward(w, rw, mask, c.act, ws, dy, dw, drw, db, &dx, c.backwardSteps);
  } else {
    backend.simpleRnnForward(x, w, rw, b, mask, c.act.activation, y, ws,
                             c.carried ? &state : nullptr);
    backend.simpleRnnBackward(w, rw, mask, c.act.activation, ws, dy, dw, drw, db, &dx,
                              c.backwardSteps);
  }
  return {y, dw, drw, db, dx, state.h, state.c};
}

// A recurrent network: `recurrent` over sequences of 3 features, a softmax over 3 classes per step.
MultiLayerConfiguration sequenceNetwork(const Layer& recurrent) {
  return NeuralNetConfiguration::Builder()
      .seed(11)
      .updater(Adam(0.02))
      .list()
      .layer(recurrent)
      .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::recurrent(3))
      .build();
}

// Sequences of 3 features and one-hot labels over 3 classes, padded as stepMask() pads.
DataSet maskedSequences(uint64_t seed) {
  const Tensor features = randomTensor(Shape{kN, 3, kT}, seed);
  Tensor labels(Shape{kN, 3, kT});
  for (int64_t e = 0; e < kN; ++e)
    for (int64_t s = 0; s < kT; ++s) labels.data()[(e * 3 + (e + s) % 3) * kT + s] = 1;
  return DataSet(features, labels, stepMask(), stepMask());
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("CUDA parity: LSTM, GravesLSTM and SimpleRnn forward and backward") {
    if (!cudaDevicePresent()) return;
    Backends b;
    const RecurrentActivations plain{};
    const RecurrentActivations hard{ActivationKind::HARDTANH, ActivationKind::HARDSIGMOID};
    const RecurrentCase cases[] = {
        {"LSTM", 4, false, false, false, 0, plain},
        {"LSTM, masked, carried state, truncated backward", 4, false, true, true, 3, plain},
        {"GravesLSTM, masked, carried state", 4, true, true, true, 0, plain},
        {"GravesLSTM, hard activations", 4, true, false, false, 0, hard},
        {"SimpleRnn", 1, false, false, false, 0, plain},
        {"SimpleRnn, masked, carried state, truncated backward",
         1,
         false,
         true,
         true,
         4,
         {ActivationKind::RELU, ActivationKind::SIGMOID}},
    };
    uint64_t seed = 900;
    for (const RecurrentCase& c : cases) {
      CAPTURE(c.name);
      seed += 10;
      const std::vector<Tensor> cpu = runCase(*b.cpu, Device::cpu(), c, seed);
      const std::vector<Tensor> gpu = runCase(*b.gpu, kGpu, c, seed);
      const char* what[] = {"y", "dW", "dRW", "db", "dx", "h", "c"};
      for (size_t i = 0; i < cpu.size(); ++i) {
        CAPTURE(what[i]);
        if (cpu[i].empty()) {
          CHECK(gpu[i].empty());
          continue;
        }
        CHECK(gpu[i].onHost() == (i >= 5));  // the carried state stays a host tensor
        checkClose(cpu[i], gpu[i], 1e-5, 1e-4);
      }
    }
  }

  TEST_CASE("CUDA parity: gather, scatter and reverse steps, direction combining, value masks") {
    if (!cudaDevicePresent()) return;
    Backends b;
    const Tensor mask = stepMask();
    Tensor x = randomTensor(Shape{kN, kH, kT}, 950);
    for (int64_t k = 0; k < kH; ++k) x.data()[(1 * kH + k) * kT + 0] = 0.5f;  // a step of 0.5s
    const Tensor xg = x.to(kGpu);
    for (const Tensor& m : {Tensor(), mask}) {
      CAPTURE(m.empty());
      int64_t real = kN * kT;
      if (!m.empty()) real = static_cast<int64_t>(std::count(m.data(), m.data() + m.numel(), 1.0f));
      Tensor rowsCpu(Shape{real, kH}), rowsGpu(Shape{real, kH}, kGpu);
      b.cpu->gatherSteps(x, m, rowsCpu);
      b.gpu->gatherSteps(xg, m, rowsGpu);
      checkClose(rowsCpu, rowsGpu, 0);
      Tensor yCpu(x.shape()), yGpu(x.shape(), kGpu);
      b.cpu->scatterSteps(rowsCpu, m, yCpu);
      b.gpu->scatterSteps(rowsGpu, m, yGpu);
      checkClose(yCpu, yGpu, 0);
      b.cpu->reverseSteps(x, m, yCpu);
      b.gpu->reverseSteps(xg, m, yGpu);
      checkClose(yCpu, yGpu, 0);
    }
    const Tensor yb = randomTensor(x.shape(), 951), dyHalf = randomTensor(x.shape(), 952);
    const Tensor dyConcat = randomTensor(Shape{kN, 2 * kH, kT}, 953);
    for (DirectionCombine mode : {DirectionCombine::CONCAT, DirectionCombine::ADD,
                                  DirectionCombine::MUL, DirectionCombine::AVERAGE}) {
      CAPTURE(static_cast<int>(mode));
      const bool concat = mode == DirectionCombine::CONCAT;
      const Shape out = concat ? dyConcat.shape() : x.shape();
      Tensor yCpu(out), yGpu(out, kGpu);
      b.cpu->combineDirections(mode, x, yb, yCpu);
      b.gpu->combineDirections(mode, xg, yb.to(kGpu), yGpu);
      checkClose(yCpu, yGpu, 1e-7);
      const Tensor& dy = concat ? dyConcat : dyHalf;
      Tensor dfCpu(x.shape()), dbCpu(x.shape()), dfGpu(x.shape(), kGpu), dbGpu(x.shape(), kGpu);
      b.cpu->combineDirectionsBackward(mode, x, yb, dy, dfCpu, dbCpu);
      b.gpu->combineDirectionsBackward(mode, xg, yb.to(kGpu), dy.to(kGpu), dfGpu, dbGpu);
      checkClose(dfCpu, dfGpu, 1e-7);
      checkClose(dbCpu, dbGpu, 1e-7);
    }
    Tensor maskCpu(Shape{kN, kT}), maskGpu(Shape{kN, kT});
    b.cpu->maskOfValue(x, 0.5f, maskCpu);
    b.gpu->maskOfValue(xg, 0.5f, maskGpu);
    CHECK(maskCpu.toVector() == maskGpu.toVector());
    CHECK(maskGpu.data()[1 * kT + 0] == 0.0f);
  }

  TEST_CASE("CUDA parity: masked pooling over time of every type, and masking steps") {
    if (!cudaDevicePresent()) return;
    Backends b;
    const Tensor x = randomTensor(Shape{kN, kH, kT}, 970), dy = randomTensor(Shape{kN, kH}, 971);
    for (const Tensor& m : {Tensor(), stepMask()}) {
      CAPTURE(m.empty());
      for (PoolingKind kind :
           {PoolingKind::MAX, PoolingKind::AVG, PoolingKind::SUM, PoolingKind::PNORM}) {
        CAPTURE(toString(kind));
        Tensor yCpu(Shape{kN, kH}), yGpu(Shape{kN, kH}, kGpu);
        b.cpu->maskedPoolingForward(kind, 3, x, m, yCpu);
        b.gpu->maskedPoolingForward(kind, 3, x.to(kGpu), m, yGpu);
        checkClose(yCpu, yGpu, 1e-6, 1e-6);
        Tensor dxCpu(x.shape()), dxGpu(x.shape(), kGpu);
        b.cpu->maskedPoolingBackward(kind, 3, x, m, yCpu, dy, dxCpu);
        b.gpu->maskedPoolingBackward(kind, 3, x.to(kGpu), m, yGpu, dy.to(kGpu), dxGpu);
        checkClose(dxCpu, dxGpu, 1e-6, 1e-5);
      }
      Tensor yCpu(x.shape()), yGpu = x.to(kGpu);
      b.cpu->maskSteps(x, m, yCpu);
      b.gpu->maskSteps(yGpu, m, yGpu);  // in place
      checkClose(yCpu, yGpu, 0);
    }
  }

  TEST_CASE("CUDA parity: a masked 1-D convolution and pooling classifier trains as on the CPU") {
    if (!cudaDevicePresent()) return;
    const DataSet sequences = maskedSequences(980);
    Tensor labels(Shape{kN, 3});
    for (int64_t e = 0; e < kN; ++e) labels.data()[e * 3 + e % 3] = 1;
    const DataSet data(sequences.features, labels, sequences.featuresMask, Tensor());
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .seed(12)
            .updater(Adam(0.02))
            .list()
            .layer(Convolution1DLayer::Builder(3)
                       .nOut(4)
                       .convolutionMode(ConvolutionMode::Same)
                       .activation(Activation::TANH)
                       .build())
            .layer(GlobalPoolingLayer::Builder(PoolingType::AVG).build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(3)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::recurrent(3))
            .build();
    MultiLayerNetwork cpu(conf, Device::cpu(), 1), gpu(conf, kGpu);
    cpu.init();
    gpu.init();
    checkTrainsAlike(cpu, gpu, data);
  }

  TEST_CASE("CUDA parity: an embedding + LSTM text classifier trains as on the CPU") {
    if (!cudaDevicePresent()) return;
    // Index sequences (N, 1, T) over a vocabulary of 6, padded as stepMask() pads (the padding
    // value 99 lies outside the vocabulary: padded steps are never looked up).
    Tensor features(Shape{kN, 1, kT}), labels(Shape{kN, 2});
    const Tensor mask = stepMask();
    for (int64_t e = 0; e < kN; ++e) {
      labels.data()[e * 2 + e % 2] = 1;
      for (int64_t s = 0; s < kT; ++s)
        features.data()[e * kT + s] = mask.data()[e * kT + s] != 0 ? float((e + 2 * s) % 6) : 99;
    }
    const DataSet data(features, labels, mask, Tensor());
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .seed(13)
            .updater(Adam(0.02))
            .list()
            .layer(EmbeddingSequenceLayer::Builder().nIn(6).nOut(4).build())
            .layer(LSTM::Builder().nOut(5).build())
            .layer(GlobalPoolingLayer::Builder(PoolingType::MAX).build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(2)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::recurrent(1))
            .build();
    MultiLayerNetwork cpu(conf, Device::cpu(), 1), gpu(conf, kGpu);
    cpu.init();
    gpu.init();
    checkTrainsAlike(cpu, gpu, data);
  }

  TEST_CASE("CUDA recurrent ops: a mask in device memory is a ShapeError, as on the CPU") {
    if (!cudaDevicePresent()) return;
    Backends b;
    const Tensor x(Shape{kN, kIn, kT}, kGpu);
    Tensor rows(Shape{kN * kT, kIn}, kGpu);
    CHECK_THROWS_AS(b.gpu->gatherSteps(x, stepMask().to(kGpu), rows), ShapeError);
  }

  TEST_CASE("CUDA parity: LSTM, GravesLSTM and Bidirectional networks train as on the CPU") {
    if (!cudaDevicePresent()) return;
    const DataSet data = maskedSequences(960);
    std::vector<std::unique_ptr<Layer>> layers;
    layers.push_back(std::make_unique<LSTM>(LSTM::Builder().nOut(5).build()));
    layers.push_back(std::make_unique<GravesLSTM>(GravesLSTM::Builder().nOut(5).build()));
    layers.push_back(std::make_unique<Bidirectional>(Bidirectional::Mode::CONCAT,
                                                     SimpleRnn::Builder().nOut(4).build()));
    for (const auto& layer : layers) {
      CAPTURE(layer->typeName());
      const MultiLayerConfiguration conf = sequenceNetwork(*layer);
      MultiLayerNetwork cpu(conf, Device::cpu(), 1), gpu(conf, kGpu);
      cpu.init();
      gpu.init();
      checkTrainsAlike(cpu, gpu, data);
      if (layer->typeName() == "Bidirectional") continue;  // no stateful inference (as in DL4J)
      // Stateful inference, one step at a time, as on the CPU.
      for (int64_t s = 0; s < 3; ++s) {
        Tensor step(Shape{kN, 3, 1});
        for (int64_t e = 0; e < kN; ++e)
          for (int64_t k = 0; k < 3; ++k)
            step.data()[e * 3 + k] = data.features.data()[(e * 3 + k) * kT + s];
        checkClose(cpu.rnnTimeStep(step), gpu.rnnTimeStep(step), 1e-4, 1e-3);
      }
    }
  }
}

// libtorch's side of the peer benchmark: the LeNet of samples/LenetConfiguration.h (or, with
// --network batchnorm, the conv-BN-ReLU network of samples/BatchNormConfiguration.h, with
// --network vgg the VGG-style network of samples/VggConfiguration.h, with --network charlstm the
// character LSTM of samples/CharLstmConfiguration.h), trained the way dl4cpp trains it, under the
// protocol of PeerProtocol.h (one JSON line on stdout).
//   libtorch_lenet [--threads 1] [--network lenet] [--data-dir DIR] [--train-examples N]
//                  [--test-examples N]
//
// The batchnorm network: conv 5x5x20 -> BN -> ReLU -> conv 3x3x20 pad 1 -> BN -> ReLU -> conv
// 3x3x20 pad 1 -> BN -> ReLU -> dense 10, softmax + NLL; convolutions He-normal (WeightInit::RELU:
// standard deviation sqrt(2 / fanIn)), the output XAVIER, biases 0, BN gamma 1 / beta 0, eps 1e-5,
// running-statistics momentum 0.1 (dl4cpp's decay 0.9); torch::optim::Adam(1e-3) (dl4cpp's Adam
// adds epsilon to the bias-corrected sqrt(v) as ND4J does, torch to sqrt(v) scaled: the same
// update up to where the 1e-8 enters).
//
// The vgg network: conv 3x3x32 pad 1 -> ReLU -> conv 3x3x32 pad 1 -> ReLU -> max pool 2x2/2 ->
// conv 3x3x64 pad 1 -> ReLU -> conv 3x3x64 pad 1 -> ReLU -> max pool 2x2/2 -> dense 256 -> ReLU ->
// dense 10, softmax + NLL; convolutions and the dense layer He-normal (WeightInit::RELU), the
// output XAVIER, biases 0; torch::optim::Adam(1e-3), as for batchnorm.
//
// The resnet network (samples/ResidualConfiguration.h): conv 3x3x16 -> BN -> ReLU; three residual
// blocks of 16 (identity shortcut), 32 and 64 channels (the first convolution stride 2 and a 1x1/2
// convolution + BN as the shortcut), each conv 3x3 -> BN -> ReLU -> conv 3x3 -> BN, + shortcut,
// ReLU; global average pooling, dense 10, softmax + NLL. Convolutions bias-free, 3x3 ones pad 1,
// He-normal (WeightInit::RELU); the output XAVIER, bias 0; BN as for batchnorm;
// torch::optim::Adam(1e-3).
//
// ResNet-50 (nn/zoo/ResNet50.h, the Keras/DL4J layout: the stride on the first 1x1 convolution of
// a block): 7x7/2 conv pad 3 -> BN -> ReLU -> 3x3/2 max pool pad 1; bottleneck blocks (1x1, 3x3,
// 1x1 convolutions with bias, each with BN) in stages of 3, 4, 6, 3 blocks of 256 to 2048
// channels, a 1x1 projection + BN opening each stage; global average pooling, dense 1000, softmax
// + NLL; torch's default initialisation; SGD with Nesterov momentum 0.9, learning rate 0.1
// (dl4cpp's Nesterovs(0.1, 0.9)). dl4cpp's Same-mode max pooling pads only the bottom and right
// edges (one row and column), torch's padding 1 both: the same output size and cost.
//
// The charlstm network: torch::nn::LSTM(V, 128, batch_first) -> Linear(128, V) at every step,
// softmax + cross-entropy summed over the steps and averaged over the sequences (dl4cpp's
// RnnOutputLayer score), on one-hot input (N, 64, V) as dl4cpp reads it; torch's default
// initialisation; values clipped element-wise at 1 (clip_grad_value_), then
// torch::optim::Adam(5e-3).
//
// LeNet:
// Same algorithm as dl4cpp, not only the same architecture:
//   - conv 5x5x20 (identity), max pool 2x2/2, conv 5x5x50 (identity), max pool 2x2/2,
//     dense 500 (relu), dense 10; softmax + negative log-likelihood, computed as log_softmax +
//     nll_loss on the logits (the same loss, the numerically stable form), mean over the batch;
//   - WeightInit::XAVIER as nn/weights/WeightInitializer.cpp draws it: normal, mean 0, standard
//     deviation sqrt(2 / (fanIn + fanOut)), with DL4J's convolution fans (fanIn = nIn*kh*kw,
//     fanOut = nOut*kh*kw / (strideH*strideW)); zero biases. (Only the distribution matches: the
//     generators differ, so the initial weights do not.)
//   - l2 5e-4 added to the gradient of the weights, not of the biases (DL4J's l2, l2Bias = 0);
//   - DL4J's Nesterovs(0.01, 0.9) of nn/backend/cpu/CpuElementwise.cpp, written out by hand:
//       v' = mu v - lr g;  p += (1 + mu) v' - mu v,  i.e.  p += mu^2 v - (1 + mu) lr g,  v = v'.
//     (torch::optim::SGD with nesterov is the same update in exact arithmetic, with its state
//     scaled by -1/lr; writing it out keeps l2 off the biases and the algorithm in plain sight.)
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "CharCorpus.h"
#include "MnistEpoch.h"
#include "PeerProtocol.h"

namespace {

constexpr double kLearningRate = 0.01, kMomentum = 0.9, kL2 = 5e-4;

struct LeNetImpl : torch::nn::Module {
  LeNetImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 20, 5)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(20, 50, 5)))),
        dense(register_module("dense", torch::nn::Linear(800, 500))),
        output(register_module("output", torch::nn::Linear(500, 10))) {}

  // x: (N, 1, 28, 28) -> logits (N, 10)
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(conv1(x), 2, 2);  // (N, 20, 12, 12)
    x = torch::max_pool2d(conv2(x), 2, 2);  // (N, 50, 4, 4)
    x = torch::relu(dense(x.flatten(1)));   // (N, 500); flattened channel-major, as dl4cpp
    return output(x);
  }

  // DL4J's XAVIER with DL4J's fans (stride 1 everywhere), zero biases.
  void initLikeDl4cpp() {
    torch::NoGradGuard noGrad;
    auto xavier = [](torch::Tensor& w, double fanIn, double fanOut) {
      w.normal_(0.0, std::sqrt(2.0 / (fanIn + fanOut)));
    };
    xavier(conv1->weight, 1 * 25, 20 * 25);
    xavier(conv2->weight, 20 * 25, 50 * 25);
    xavier(dense->weight, 800, 500);
    xavier(output->weight, 500, 10);
    for (auto* bias : {&conv1->bias, &conv2->bias, &dense->bias, &output->bias}) bias->zero_();
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Linear dense;
  torch::nn::Linear output;
};
TORCH_MODULE(LeNet);

struct BatchNormNetImpl : torch::nn::Module {
  BatchNormNetImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 20, 5)))),
        conv2(register_module("conv2",
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(20, 20, 3).padding(1)))),
        conv3(register_module("conv3",
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(20, 20, 3).padding(1)))),
        bn1(register_module("bn1", batchNorm())),
        bn2(register_module("bn2", batchNorm())),
        bn3(register_module("bn3", batchNorm())),
        output(register_module("output", torch::nn::Linear(20 * 24 * 24, 10))) {}

  static torch::nn::BatchNorm2d batchNorm() {
    return torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(20).eps(1e-5).momentum(0.1));
  }

  // x: (N, 1, 28, 28) -> logits (N, 10)
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn1(conv1(x)));  // (N, 20, 24, 24)
    x = torch::relu(bn2(conv2(x)));
    x = torch::relu(bn3(conv3(x)));
    return output(x.flatten(1));
  }

  void initLikeDl4cpp() {
    torch::NoGradGuard noGrad;
    conv1->weight.normal_(0.0, std::sqrt(2.0 / 25));
    conv2->weight.normal_(0.0, std::sqrt(2.0 / 180));
    conv3->weight.normal_(0.0, std::sqrt(2.0 / 180));
    output->weight.normal_(0.0, std::sqrt(2.0 / (20 * 24 * 24 + 10)));
    for (auto* bias : {&conv1->bias, &conv2->bias, &conv3->bias, &output->bias}) bias->zero_();
  }

  torch::nn::Conv2d conv1, conv2, conv3;
  torch::nn::BatchNorm2d bn1, bn2, bn3;
  torch::nn::Linear output;
};
TORCH_MODULE(BatchNormNet);

struct VggNetImpl : torch::nn::Module {
  VggNetImpl()
      : conv1(register_module("conv1", conv(1, 32))),
        conv2(register_module("conv2", conv(32, 32))),
        conv3(register_module("conv3", conv(32, 64))),
        conv4(register_module("conv4", conv(64, 64))),
        dense(register_module("dense", torch::nn::Linear(64 * 7 * 7, 256))),
        output(register_module("output", torch::nn::Linear(256, 10))) {}

  static torch::nn::Conv2d conv(int64_t in, int64_t out) {
    return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1));
  }

  // x: (N, 1, 28, 28) -> logits (N, 10)
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(conv2(torch::relu(conv1(x))));
    x = torch::max_pool2d(x, 2, 2);  // (N, 32, 14, 14)
    x = torch::relu(conv4(torch::relu(conv3(x))));
    x = torch::max_pool2d(x, 2, 2);        // (N, 64, 7, 7)
    x = torch::relu(dense(x.flatten(1)));  // flattened channel-major, as dl4cpp
    return output(x);
  }

  // He-normal (sd sqrt(2 / fanIn)) but the output layer, XAVIER; zero biases.
  void initLikeDl4cpp() {
    torch::NoGradGuard noGrad;
    conv1->weight.normal_(0.0, std::sqrt(2.0 / 9));
    conv2->weight.normal_(0.0, std::sqrt(2.0 / (32 * 9)));
    conv3->weight.normal_(0.0, std::sqrt(2.0 / (32 * 9)));
    conv4->weight.normal_(0.0, std::sqrt(2.0 / (64 * 9)));
    dense->weight.normal_(0.0, std::sqrt(2.0 / (64 * 7 * 7)));
    output->weight.normal_(0.0, std::sqrt(2.0 / (256 + 10)));
    for (auto* bias :
         {&conv1->bias, &conv2->bias, &conv3->bias, &conv4->bias, &dense->bias, &output->bias})
      bias->zero_();
  }

  torch::nn::Conv2d conv1, conv2, conv3, conv4;
  torch::nn::Linear dense, output;
};
TORCH_MODULE(VggNet);

torch::nn::Conv2d convNoBias(int64_t in, int64_t out, int64_t k, int64_t stride) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(k / 2).bias(false));
}

torch::nn::BatchNorm2d batchNorm(int64_t channels) {
  return torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(channels).eps(1e-5).momentum(0.1));
}

// He-normal with fanIn = nIn * k * k (WeightInit::RELU with DL4J's convolution fans).
void heNormal(torch::nn::Conv2d& conv) {
  const auto& w = conv->weight;
  conv->weight.normal_(0.0,
                       std::sqrt(2.0 / static_cast<double>(w.size(1) * w.size(2) * w.size(3))));
}

struct ResidualBlockImpl : torch::nn::Module {
  ResidualBlockImpl(int64_t in, int64_t out, int64_t stride)
      : a(register_module("a", convNoBias(in, out, 3, stride))),
        aBn(register_module("a_bn", batchNorm(out))),
        b(register_module("b", convNoBias(out, out, 3, 1))),
        bBn(register_module("b_bn", batchNorm(out))) {
    if (stride != 1) {
      proj = register_module("proj", convNoBias(in, out, 1, stride));
      projBn = register_module("proj_bn", batchNorm(out));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(aBn(a(x)));
    y = bBn(b(y));
    return torch::relu(y + (proj ? projBn(proj(x)) : x));
  }

  void initLikeDl4cpp() {
    heNormal(a);
    heNormal(b);
    if (proj) heNormal(proj);
  }

  torch::nn::Conv2d a, b, proj{nullptr};
  torch::nn::BatchNorm2d aBn, bBn, projBn{nullptr};
};
TORCH_MODULE(ResidualBlock);

struct ResidualNetImpl : torch::nn::Module {
  ResidualNetImpl()
      : stem(register_module("stem", convNoBias(1, 16, 3, 1))),
        stemBn(register_module("stem_bn", batchNorm(16))),
        res1(register_module("res1", ResidualBlock(16, 16, 1))),
        res2(register_module("res2", ResidualBlock(16, 32, 2))),
        res3(register_module("res3", ResidualBlock(32, 64, 2))),
        output(register_module("output", torch::nn::Linear(64, 10))) {}

  // x: (N, 1, 28, 28) -> logits (N, 10)
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(stemBn(stem(x)));
    x = res3(res2(res1(x)));  // (N, 64, 7, 7)
    return output(x.mean({2, 3}));
  }

  void initLikeDl4cpp() {
    torch::NoGradGuard noGrad;
    heNormal(stem);
    for (auto* block : {&res1, &res2, &res3}) (*block)->initLikeDl4cpp();
    output->weight.normal_(0.0, std::sqrt(2.0 / (64 + 10)));
    output->bias.zero_();
  }

  torch::nn::Conv2d stem;
  torch::nn::BatchNorm2d stemBn;
  ResidualBlock res1, res2, res3;
  torch::nn::Linear output;
};
TORCH_MODULE(ResidualNet);

struct BottleneckImpl : torch::nn::Module {
  BottleneckImpl(int64_t in, int64_t width, int64_t stride, bool project)
      : c1(register_module("c1", conv(in, width, 1, stride))),
        c2(register_module("c2", conv(width, width, 3, 1))),
        c3(register_module("c3", conv(width, 4 * width, 1, 1))),
        bn1(register_module("bn1", batchNorm(width))),
        bn2(register_module("bn2", batchNorm(width))),
        bn3(register_module("bn3", batchNorm(4 * width))) {
    if (project) {
      proj = register_module("proj", conv(in, 4 * width, 1, stride));
      projBn = register_module("proj_bn", batchNorm(4 * width));
    }
  }

  static torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t k, int64_t stride) {
    return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(k / 2));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(bn1(c1(x)));
    y = torch::relu(bn2(c2(y)));
    y = bn3(c3(y));
    return torch::relu(y + (proj ? projBn(proj(x)) : x));
  }

  torch::nn::Conv2d c1, c2, c3, proj{nullptr};
  torch::nn::BatchNorm2d bn1, bn2, bn3, projBn{nullptr};
};
TORCH_MODULE(Bottleneck);

struct ResNet50Impl : torch::nn::Module {
  ResNet50Impl()
      : conv1(register_module(
            "conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 64, 7).stride(2).padding(3)))),
        bn1(register_module("bn1", batchNorm(64))),
        fc(register_module("fc", torch::nn::Linear(2048, 1000))) {
    const int blocks[] = {3, 4, 6, 3};
    const int64_t widths[] = {64, 128, 256, 512};
    int64_t in = 64;
    for (int stage = 0; stage < 4; ++stage)
      for (int block = 0; block < blocks[stage]; ++block) {
        const int64_t stride = block == 0 && stage > 0 ? 2 : 1;
        stages->push_back(Bottleneck(in, widths[stage], stride, block == 0));
        in = 4 * widths[stage];
      }
    register_module("stages", stages);
  }

  // x: (N, 3, 224, 224) -> logits (N, 1000)
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn1(conv1(x)));              // (N, 64, 112, 112)
    x = torch::max_pool2d(x, 3, 2, 1);           // (N, 64, 56, 56)
    return fc(stages->forward(x).mean({2, 3}));  // (N, 2048, 7, 7) -> (N, 2048)
  }

  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Sequential stages;
  torch::nn::Linear fc;
};
TORCH_MODULE(ResNet50);

struct Batch {
  torch::Tensor features;  // (n, 1, 28, 28) float, pixel/255 (charlstm: (n, T, V) one-hot)
  torch::Tensor labels;    // (n) int64 class indices (charlstm: (n, T))
};

// Batches of `order` (all of the split when empty), features pixel/255.
std::vector<Batch> makeBatches(const peers::MnistSplit& split, const std::vector<int64_t>& order,
                               peers::LabelOrderHash* hash) {
  if (split.imageSize != 28 * 28)
    throw std::runtime_error("LeNet expects 28x28 images; the MNIST files hold " +
                             std::to_string(split.imageSize) + " pixels per image");
  std::vector<Batch> batches;
  const int64_t count = split.count, size = split.imageSize;
  for (int64_t start = 0; start < count; start += peers::PeerOptions::kBatch) {
    const int64_t n = std::min<int64_t>(peers::PeerOptions::kBatch, count - start);
    Batch b{torch::empty({n, 1, 28, 28}, torch::kFloat32), torch::empty({n}, torch::kInt64)};
    float* f = b.features.data_ptr<float>();
    int64_t* l = b.labels.data_ptr<int64_t>();
    for (int64_t r = 0; r < n; ++r) {
      const int64_t example = order.empty() ? start + r : order[static_cast<size_t>(start + r)];
      const uint8_t* px = split.pixels.data() + example * size;
      for (int64_t c = 0; c < size; ++c) f[r * size + c] = static_cast<float>(px[c]) / 255.0f;
      l[r] = split.labels[static_cast<size_t>(example)];
      if (hash) hash->add(static_cast<int>(l[r]));
    }
    batches.push_back(std::move(b));
  }
  return batches;
}

struct Parameter {
  torch::Tensor value;
  torch::Tensor velocity;  // Nesterovs state v
  bool weight;             // l2 applies to weights only
};

void trainStep(LeNet& model, std::vector<Parameter>& params, const Batch& batch) {
  const torch::Tensor loss =
      torch::nll_loss(torch::log_softmax(model->forward(batch.features), 1), batch.labels);
  loss.backward();
  torch::NoGradGuard noGrad;
  const double mu = kMomentum, lr = kLearningRate;
  for (Parameter& p : params) {
    torch::Tensor g = p.value.grad();
    if (p.weight) g.add_(p.value, kL2);
    p.value.add_(p.velocity, mu * mu).add_(g, -(1.0 + mu) * lr);
    p.velocity.mul_(mu).add_(g, -lr);
    p.value.mutable_grad() = torch::Tensor();  // backward allocates a fresh gradient (set_to_none)
  }
}

template <typename Model>
double testAccuracy(Model& model, const std::vector<Batch>& test) {
  torch::NoGradGuard noGrad;
  int64_t correct = 0, total = 0;
  for (const Batch& b : test) {
    correct += model->forward(b.features).argmax(1).eq(b.labels).sum().template item<int64_t>();
    total += b.labels.size(0);
  }
  return total == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(total);
}

// One epoch of Adam(1e-3) on the clock, then the test accuracy, into `result`.
template <typename Model>
void trainWithAdam(Model& model, const std::vector<Batch>& train, const std::vector<Batch>& test,
                   peers::PeerResult& result) {
  model->initLikeDl4cpp();
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  model->train();
  result.epochSeconds = peers::timeEpoch([&] {
    for (const Batch& b : train) {
      adam.zero_grad();
      torch::nll_loss(torch::log_softmax(model->forward(b.features), 1), b.labels).backward();
      adam.step();
    }
  });
  model->eval();
  result.testAccuracy = testAccuracy(model, test);
}

struct CharLstmImpl : torch::nn::Module {
  explicit CharLstmImpl(int64_t v)
      : lstm(register_module(
            "lstm", torch::nn::LSTM(
                        torch::nn::LSTMOptions(v, peers::CharCorpus::kUnits).batch_first(true)))),
        output(register_module("output", torch::nn::Linear(peers::CharCorpus::kUnits, v))) {}

  // x: (N, T, V) one-hot -> logits (N, T, V)
  torch::Tensor forward(const torch::Tensor& x) { return output(std::get<0>(lstm(x))); }

  torch::nn::LSTM lstm;
  torch::nn::Linear output;
};
TORCH_MODULE(CharLstm);

// (inputs (N, T, V) one-hot, targets (N, T) indices) batches of CharCorpus windows.
std::vector<Batch> charBatches(const std::vector<std::vector<int>>& windows, int64_t v,
                               peers::LabelOrderHash* hash) {
  constexpr int64_t steps = peers::CharCorpus::kSteps;
  std::vector<Batch> batches;
  for (size_t first = 0; first < windows.size(); first += peers::CharCorpus::kBatch) {
    const auto n =
        static_cast<int64_t>(std::min<size_t>(peers::CharCorpus::kBatch, windows.size() - first));
    Batch b{torch::zeros({n, steps, v}, torch::kFloat32), torch::empty({n, steps}, torch::kInt64)};
    float* f = b.features.data_ptr<float>();
    int64_t* l = b.labels.data_ptr<int64_t>();
    for (int64_t r = 0; r < n; ++r) {
      const std::vector<int>& w = windows[first + static_cast<size_t>(r)];
      if (hash) hash->add(w[0]);
      for (int64_t t = 0; t < steps; ++t) {
        f[(r * steps + t) * v + w[static_cast<size_t>(t)]] = 1;
        l[r * steps + t] = w[static_cast<size_t>(t) + 1];
      }
    }
    batches.push_back(std::move(b));
  }
  return batches;
}

void runCharLstm(const peers::PeerOptions& options, peers::PeerResult& result) {
  const peers::CharCorpus corpus = peers::readCharCorpus(
      options.dataDir, options.trainExamples, options.testExamples, peers::PeerOptions::kSeed);
  const int64_t v = corpus.vocabulary;
  peers::LabelOrderHash orderHash;
  const std::vector<Batch> train = charBatches(corpus.train, v, &orderHash);
  const std::vector<Batch> test = charBatches(corpus.test, v, nullptr);
  CharLstm model(v);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(5e-3));
  model->train();
  result.epochSeconds = peers::timeEpoch([&] {
    for (const Batch& b : train) {
      adam.zero_grad();
      const torch::Tensor logits = model->forward(b.features).reshape({-1, v});
      const auto n = static_cast<double>(b.features.size(0));
      (torch::nll_loss(torch::log_softmax(logits, 1), b.labels.reshape({-1}), {},
                       at::Reduction::Sum) /
       n)
          .backward();
      torch::nn::utils::clip_grad_value_(model->parameters(), 1.0);
      adam.step();
    }
  });
  model->eval();
  torch::NoGradGuard noGrad;
  int64_t right = 0, total = 0;
  for (const Batch& b : test) {
    right += model->forward(b.features).argmax(2).eq(b.labels).sum().item<int64_t>();
    total += b.labels.numel();
  }
  result.testAccuracy = static_cast<double>(right) / static_cast<double>(total);
  result.trainExamples = static_cast<int64_t>(corpus.train.size());
  result.epochOrderHash = orderHash.value();
}

// ResNet-50 on PeerProtocol.h's synthetic batches: one warm-up step, then the timed steps.
void runResNet50(const peers::PeerOptions& options, peers::PeerResult& result) {
  using peers::PeerOptions;
  const int steps = options.resNet50Steps();
  constexpr int64_t n = PeerOptions::kResNet50Batch, side = PeerOptions::kResNet50Side;
  peers::LabelOrderHash orderHash;
  std::vector<Batch> batches;
  for (int step = 0; step <= steps; ++step) {
    Batch b{torch::empty({n, 3, side, side}, torch::kFloat32), torch::empty({n}, torch::kInt64)};
    peers::syntheticImageNetBatch(step, b.features.data_ptr<float>(), b.labels.data_ptr<int64_t>());
    if (step > 0)
      for (int64_t r = 0; r < n; ++r) orderHash.add(static_cast<int>(b.labels[r].item<int64_t>()));
    batches.push_back(std::move(b));
  }
  ResNet50 model;
  torch::optim::SGD sgd(model->parameters(),
                        torch::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
  model->train();
  auto step = [&](const Batch& b) {
    sgd.zero_grad();
    torch::nll_loss(torch::log_softmax(model->forward(b.features), 1), b.labels).backward();
    sgd.step();
  };
  step(batches.front());  // warm-up, untimed
  result.epochSeconds = peers::timeEpoch([&] {
    for (size_t i = 1; i < batches.size(); ++i) step(batches[i]);
  });
  model->eval();
  result.testAccuracy = testAccuracy(model, {batches.front()});
  result.trainExamples = static_cast<int64_t>(steps) * n;
  result.epochOrderHash = orderHash.value();
}

peers::PeerResult run(const peers::PeerOptions& options) {
  at::set_num_interop_threads(1);  // one model, one stream of ops: no inter-op parallelism
  torch::set_num_threads(options.threads);
  torch::manual_seed(peers::PeerOptions::kSeed);
  if (options.network == "resnet50" || options.network == "charlstm") {
    peers::PeerResult result;
    if (options.network == "resnet50")
      runResNet50(options, result);
    else
      runCharLstm(options, result);
    result.library = "libtorch";
    result.network = options.network;
    result.version = TORCH_VERSION;
    result.threads = torch::get_num_threads();
    return result;
  }

  const peers::MnistSplit trainSplit =
      peers::readMnist(options.dataDir, true, options.trainExamples);
  peers::LabelOrderHash orderHash;
  const std::vector<Batch> train = makeBatches(
      trainSplit, peers::firstEpochOrder(trainSplit.count, peers::PeerOptions::kSeed), &orderHash);
  const std::vector<Batch> test =
      makeBatches(peers::readMnist(options.dataDir, false, options.testExamples), {}, nullptr);

  peers::PeerResult result;
  if (options.network == "lenet") {
    LeNet model;
    model->initLikeDl4cpp();
    std::vector<Parameter> params;
    for (const auto& item : model->named_parameters()) {
      const bool weight =
          item.key().size() >= 6 && item.key().compare(item.key().size() - 6, 6, "weight") == 0;
      params.push_back({item.value(), torch::zeros_like(item.value()), weight});
    }
    model->train();
    result.epochSeconds = peers::timeEpoch([&] {
      for (const Batch& b : train) trainStep(model, params, b);
    });
    model->eval();
    result.testAccuracy = testAccuracy(model, test);
  } else if (options.network == "batchnorm") {
    BatchNormNet model;
    trainWithAdam(model, train, test, result);
  } else if (options.network == "resnet") {
    ResidualNet model;
    trainWithAdam(model, train, test, result);
  } else {
    VggNet model;
    trainWithAdam(model, train, test, result);
  }
  result.library = "libtorch";
  result.network = options.network;
  result.version = TORCH_VERSION;
  result.threads = torch::get_num_threads();
  result.trainExamples = trainSplit.count;
  result.epochOrderHash = orderHash.value();
  return result;
}

}  // namespace

int main(int argc, char** argv) { return peers::runPeer("libtorch_lenet", argc, argv, run); }

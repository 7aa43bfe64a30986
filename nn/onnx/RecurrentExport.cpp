#include "nn/onnx/RecurrentExport.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "nn/conf/layers/AbstractLSTM.h"
#include "nn/conf/layers/Bidirectional.h"
#include "nn/conf/layers/LastTimeStep.h"
#include "nn/conf/layers/SimpleRnn.h"

namespace dl4cpp::onnx {

namespace {

// The name of an ONNX recurrent operator's activation function for a dl4cpp activation (ONNX's
// HardSigmoid defaults, alpha 0.2 and beta 0.5, are dl4cpp's), or a refusal.
std::string recurrentActivation(const LayerToExport& l, Activation a, const char* role) {
  switch (a) {
    case Activation::SIGMOID:
      return "Sigmoid";
    case Activation::TANH:
      return "Tanh";
    case Activation::RELU:
      return "Relu";
    case Activation::HARDSIGMOID:
      return "HardSigmoid";
    default:
      refuseLayer(l, fmt::format("{} {}: ONNX's recurrent operators take SIGMOID, TANH, RELU or "
                                 "HARDSIGMOID",
                                 role, toString(a)));
  }
}

// One direction of an ONNX LSTM or RNN: its weights in ONNX's layouts and its activations.
struct Direction {
  std::vector<float> w, r, b, p;  // W (G*H, F), R (G*H, H), B (2*G*H), P (3H) or empty
  std::vector<std::string> activations;
};

// A recurrent layer's parameters as one ONNX direction. ONNX's LSTM gate blocks are [i | o | f | c]
// in the rows of W and R; dl4cpp's (DL4J's) [a(=c) | f | o | i] in the columns of W (F, 4H) and
// RW (H, 4H), GravesLSTM's RW followed by the peephole columns wFF, wOO, wGG (ONNX's P is
// [i | o | f]). SimpleRnn's W (F, H) and RW (H, H) are ONNX's W and R transposed. B holds the
// biases as its input half, its recurrent half zero.
Direction direction(const LayerToExport& l, const Layer& layer, std::span<const float> params) {
  const auto& rnn = dynamic_cast<const BaseRecurrentLayer&>(layer);
  const int64_t f = rnn.nIn, h = rnn.nOut;
  const std::string act = recurrentActivation(l, layer.resolvedActivation(), "activation");
  Direction d;
  if (layer.typeName() == "SimpleRnn") {
    d.w.resize(h * f);
    d.r.resize(h * h);
    d.b.assign(2 * h, 0.0f);
    for (int64_t j = 0; j < h; ++j) {
      for (int64_t k = 0; k < f; ++k) d.w[j * f + k] = params[k * h + j];
      for (int64_t k = 0; k < h; ++k) d.r[j * h + k] = params[f * h + k * h + j];
      d.b[j] = params[f * h + h * h + j];
    }
    d.activations = {act};
    return d;
  }
  const bool graves = layer.typeName() == "GravesLSTM";
  const Activation gateActivation = dynamic_cast<const AbstractLSTM&>(layer).gateActivationFunction;
  const int64_t ld = 4 * h + (graves ? 3 : 0);  // RW's row length
  const std::span<const float> w = params.subspan(0, f * 4 * h);
  const std::span<const float> rw = params.subspan(w.size(), h * ld);
  const std::span<const float> b = params.subspan(w.size() + rw.size(), 4 * h);
  constexpr int64_t kDl4cppBlock[4] = {3, 2, 1, 0};  // ONNX's i, o, f, c in dl4cpp's blocks
  d.w.resize(4 * h * f);
  d.r.resize(4 * h * h);
  d.b.assign(8 * h, 0.0f);
  for (int64_t gate = 0; gate < 4; ++gate) {
    const int64_t from = kDl4cppBlock[gate] * h;
    for (int64_t j = 0; j < h; ++j) {
      const int64_t row = gate * h + j;
      for (int64_t k = 0; k < f; ++k) d.w[row * f + k] = w[k * 4 * h + from + j];
      for (int64_t k = 0; k < h; ++k) d.r[row * h + k] = rw[k * ld + from + j];
      d.b[row] = b[from + j];
    }
  }
  if (graves) {
    d.p.resize(3 * h);
    for (int64_t j = 0; j < h; ++j) {
      const float* peep = rw.data() + j * ld + 4 * h;  // wFF, wOO, wGG
      d.p[j] = peep[2];
      d.p[h + j] = peep[1];
      d.p[2 * h + j] = peep[0];
    }
  }
  const std::string gate = recurrentActivation(l, gateActivation, "gate activation");
  d.activations = {gate, act, act};
  return d;
}

std::vector<float> joined(const std::vector<Direction>& ds, std::vector<float> Direction::*part) {
  std::vector<float> all;
  for (const Direction& d : ds) all.insert(all.end(), (d.*part).begin(), (d.*part).end());
  return all;
}

// The operator over sequences x (N, F, T) with one direction per entry of `layers` (forward, then
// reverse): its Y, (T, D, N, H).
std::string recurrentNode(
    GraphWriter& g, const LayerToExport& l,
    const std::vector<std::pair<const Layer*, std::span<const float>>>& layers,
    const std::string& x) {
  std::vector<Direction> ds;
  ds.reserve(layers.size());
  for (const auto& [layer, params] : layers) ds.push_back(direction(l, *layer, params));
  const auto& rnn = dynamic_cast<const BaseRecurrentLayer&>(*layers.front().first);
  const int64_t f = rnn.nIn, h = rnn.nOut, dirs = static_cast<int64_t>(ds.size());
  const bool lstm = rnn.typeName() != "SimpleRnn";
  const int64_t gates = lstm ? 4 : 1;
  const std::string steps =
      g.node("Transpose", {x}, l.name + "_to_steps", {Attr::integers("perm", {2, 0, 1})});
  std::vector<std::string> inputs{
      steps, g.floats(l.name + "_W", {dirs, gates * h, f}, joined(ds, &Direction::w)),
      g.floats(l.name + "_R", {dirs, gates * h, h}, joined(ds, &Direction::r)),
      g.floats(l.name + "_B", {dirs, 2 * gates * h}, joined(ds, &Direction::b))};
  if (!ds.front().p.empty()) {  // no sequence_lens, initial_h, initial_c; then P
    inputs.insert(inputs.end(), {"", "", ""});
    inputs.push_back(g.floats(l.name + "_P", {dirs, 3 * h}, joined(ds, &Direction::p)));
  }
  std::vector<std::string> activations;
  for (const Direction& d : ds)
    activations.insert(activations.end(), d.activations.begin(), d.activations.end());
  return g.node(lstm ? "LSTM" : "RNN", inputs, l.name + (lstm ? "_lstm" : "_rnn"),
                {Attr::integer("hidden_size", h),
                 Attr::text("direction", dirs == 2 ? "bidirectional" : "forward"),
                 Attr::texts("activations", activations)});
}

// Y (T, 1, N, H) of one direction -> (1, N, H, T) -> (N, H, T).
std::string forwardOutput(GraphWriter& g, const LayerToExport& l, const std::string& y) {
  const std::string back =
      g.node("Transpose", {y}, l.name + "_from_steps", {Attr::integers("perm", {1, 2, 3, 0})});
  return g.node("Squeeze", {back, g.int64s(l.name + "_axes", {0})}, l.name + "_seq");
}

// Y (T, 2, N, H) -> (N, 2, H, T), combined over the directions as Bidirectional's mode does.
std::string bidirectionalOutput(GraphWriter& g, const LayerToExport& l, Bidirectional::Mode mode,
                                int64_t h, const std::string& y) {
  const std::string both =
      g.node("Transpose", {y}, l.name + "_from_steps", {Attr::integers("perm", {2, 1, 3, 0})});
  const std::vector<Attr> overDirections{Attr::integers("axes", {1}), Attr::integer("keepdims", 0)};
  switch (mode) {
    case Bidirectional::Mode::CONCAT:  // forward's features, then backward's
      return g.node("Reshape", {both, g.int64s(l.name + "_shape", {0, 2 * h, -1})},
                    l.name + "_concat");
    case Bidirectional::Mode::ADD:
      return g.node("ReduceSum", {both, g.int64s(l.name + "_axes", {1})}, l.name + "_add",
                    {Attr::integer("keepdims", 0)});
    case Bidirectional::Mode::MUL:
      return g.node("ReduceProd", {both}, l.name + "_mul", overDirections);
    case Bidirectional::Mode::AVERAGE:
      return g.node("ReduceMean", {both}, l.name + "_average", overDirections);
  }
  refuseLayer(l, "unknown mode");
}

// The output (N, H, T) of a recurrent layer or a Bidirectional around one.
std::string sequenceOutput(GraphWriter& g, const LayerToExport& l, const Layer& layer,
                           std::span<const float> params, const std::string& x) {
  const std::string type = layer.typeName();
  if (type == "LSTM" || type == "GravesLSTM" || type == "SimpleRnn")
    return forwardOutput(g, l, recurrentNode(g, l, {{&layer, params}}, x));
  if (type != "Bidirectional") refuseLayer(l, fmt::format("no ONNX mapping for a {} here", type));
  const auto& bi = dynamic_cast<const Bidirectional&>(layer);
  const Layer& fwd = *bi.forwardLayer();
  const std::string inner = fwd.typeName();
  if (inner != "LSTM" && inner != "GravesLSTM" && inner != "SimpleRnn")
    refuseLayer(l, fmt::format("ONNX's bidirectional operators wrap an LSTM, GravesLSTM or "
                               "SimpleRnn, not a {}",
                               inner));
  const auto half = static_cast<size_t>(fwd.numParams());
  const std::string y = recurrentNode(
      g, l, {{&fwd, params.subspan(0, half)}, {bi.backwardLayer().get(), params.subspan(half)}}, x);
  return bidirectionalOutput(g, l, bi.mode, dynamic_cast<const BaseRecurrentLayer&>(fwd).nOut, y);
}

}  // namespace

bool isRecurrentType(const std::string& t) {
  return t == "LSTM" || t == "GravesLSTM" || t == "SimpleRnn" || t == "Bidirectional" ||
         t == "LastTimeStep";
}

std::string exportRecurrent(GraphWriter& g, const LayerToExport& l, const std::string& x) {
  if (l.layer.typeName() != "LastTimeStep") return sequenceOutput(g, l, l.layer, l.params, x);
  // The wrapped layer's output, then its last step: Slice and Squeeze to (N, H).
  const Layer& underlying = *dynamic_cast<const LastTimeStep&>(l.layer).underlying();
  const std::string seq = sequenceOutput(g, l, underlying, l.params, x);
  const std::string last =
      g.node("Slice",
             {seq, g.int64s(l.name + "_starts", {-1}),
              g.int64s(l.name + "_ends", {std::numeric_limits<int64_t>::max()}),
              g.int64s(l.name + "_slice_axes", {2})},
             l.name + "_last_step");
  return g.node("Squeeze", {last, g.int64s(l.name + "_step_axis", {2})}, l.name + "_last");
}

}  // namespace dl4cpp::onnx

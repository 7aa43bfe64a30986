// MultiLayerConfiguration <-> JSON. nlohmann-json is a private dependency: only this file sees it.
//
// The JSON holds the resolved configuration: every layer field with the defaults already applied,
// so a reader (or a person) sees exactly what the network runs. fromJson() feeds those layers back
// through NeuralNetConfiguration's list builder, which re-derives geometry, preprocessors and
// input/output types; the stored derived values are then checked against the rebuilt ones.
#include <dl4cpp/nn/conf/NeuralNetConfiguration.h>

#include <array>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

namespace dl4cpp {

namespace {

using nlohmann::ordered_json;
using Json = ordered_json;  // keeps keys in the order written: the file reads top-down

// Sizes (nIn, nOut, kernel, stride, padding, dilation, input dimensions) above this are
// rejected while parsing: it keeps every product the builder forms (h * w * c, output extents)
// inside int64_t, whatever a file says. 2^20 is far above any network dl4cpp can train.
constexpr int64_t kMaxSize = int64_t{1} << 20;
// A configuration whose parameters exceed this cannot be allocated anyway.
constexpr int64_t kMaxParams = int64_t{1} << 40;

// --- Enum names ------------------------------------------------------------------------------------

template <typename E, size_t N>
using Names = std::array<std::pair<E, const char*>, N>;

constexpr Names<ActivationKind, 6> kActivations{{{ActivationKind::IDENTITY, "IDENTITY"},
                                                 {ActivationKind::RELU, "RELU"},
                                                 {ActivationKind::LEAKYRELU, "LEAKYRELU"},
                                                 {ActivationKind::TANH, "TANH"},
                                                 {ActivationKind::SIGMOID, "SIGMOID"},
                                                 {ActivationKind::SOFTMAX, "SOFTMAX"}}};
constexpr Names<LossKind, 4> kLosses{{{LossKind::NEGATIVELOGLIKELIHOOD, "NEGATIVELOGLIKELIHOOD"},
                                      {LossKind::MCXENT, "MCXENT"},
                                      {LossKind::MSE, "MSE"},
                                      {LossKind::XENT, "XENT"}}};
constexpr Names<PoolingKind, 2> kPoolings{{{PoolingKind::MAX, "MAX"}, {PoolingKind::AVG, "AVG"}}};
constexpr Names<ConvolutionMode, 3> kModes{{{ConvolutionMode::Truncate, "Truncate"},
                                            {ConvolutionMode::Same, "Same"},
                                            {ConvolutionMode::Strict, "Strict"}}};
constexpr Names<WeightInit, 7> kWeightInits{{{WeightInit::XAVIER, "XAVIER"},
                                             {WeightInit::XAVIER_UNIFORM, "XAVIER_UNIFORM"},
                                             {WeightInit::RELU, "RELU"},
                                             {WeightInit::RELU_UNIFORM, "RELU_UNIFORM"},
                                             {WeightInit::ZERO, "ZERO"},
                                             {WeightInit::NORMAL, "NORMAL"},
                                             {WeightInit::UNIFORM, "UNIFORM"}}};
constexpr Names<UpdaterKind, 5> kUpdaters{{{UpdaterKind::SGD, "SGD"},
                                           {UpdaterKind::NESTEROVS, "NESTEROVS"},
                                           {UpdaterKind::ADAM, "ADAM"},
                                           {UpdaterKind::RMSPROP, "RMSPROP"},
                                           {UpdaterKind::NOOP, "NOOP"}}};
constexpr Names<InputType::Kind, 3> kInputKinds{{{InputType::Kind::FeedForward, "FeedForward"},
                                                 {InputType::Kind::Convolutional, "Convolutional"},
                                                 {InputType::Kind::ConvolutionalFlat, "ConvolutionalFlat"}}};
constexpr Names<InputPreProcessor, 3> kPreProcessors{
    {{InputPreProcessor::None, "None"},
     {InputPreProcessor::FeedForwardToCnn, "FeedForwardToCnn"},
     {InputPreProcessor::CnnToFeedForward, "CnnToFeedForward"}}};

template <typename E, size_t N>
const char* nameOf(const Names<E, N>& names, E value) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "?";
}

// --- Writing ---------------------------------------------------------------------------------------

Json toJson(const UpdaterParams& u) {
  // Every field, used by the kind or not, so a round trip is exact.
  return Json{{"type", nameOf(kUpdaters, u.kind)}, {"learningRate", u.learningRate},
              {"momentum", u.momentum},             {"beta1", u.beta1},
              {"beta2", u.beta2},                   {"rmsDecay", u.rmsDecay},
              {"epsilon", u.epsilon}};
}

Json toJson(const std::optional<UpdaterParams>& u) { return u ? toJson(*u) : Json(nullptr); }

Json toJson(const InputType& t) {
  Json j{{"kind", nameOf(kInputKinds, t.kind)}};
  if (t.kind == InputType::Kind::FeedForward) {
    j["size"] = t.size;
  } else {
    j["height"] = t.height;
    j["width"] = t.width;
    j["channels"] = t.channels;
  }
  return j;
}

Json toJson(const ConvolutionLayer::Pair& p) { return Json::array({p.h, p.w}); }

Json commonFields(const Layer& l) {
  // Fields left unset before resolve() are written as null (a layer from fromJson() is resolved).
  auto orNull = [](const auto& opt, auto&& f) { return opt ? Json(f(*opt)) : Json(nullptr); };
  return Json{
      {"type", l.typeName()},
      {"name", l.name},
      {"activation", orNull(l.activation, [](auto a) { return nameOf(kActivations, a); })},
      {"leakyReluAlpha", l.leakyReluAlpha},
      {"weightInit", orNull(l.weightInit, [](auto w) { return nameOf(kWeightInits, w); })},
      {"updater", toJson(l.updater)},
      {"biasUpdater", toJson(l.biasUpdater)},
      {"l2", orNull(l.l2, [](double v) { return v; })},
      {"l2Bias", orNull(l.l2Bias, [](double v) { return v; })},
      {"biasInit", orNull(l.biasInit, [](double v) { return v; })},
  };
}

Json toJson(const Layer& l) {
  Json j = commonFields(l);
  auto mode = [](const std::optional<ConvolutionMode>& m) {
    return m ? Json(nameOf(kModes, *m)) : Json(nullptr);
  };
  if (const auto* conv = dynamic_cast<const ConvolutionLayer*>(&l)) {
    j["kernel"] = toJson(conv->kernel);
    j["stride"] = toJson(conv->stride);
    j["padding"] = toJson(conv->padding);
    j["dilation"] = toJson(conv->dilation);
    j["convolutionMode"] = mode(conv->convolutionMode);
    j["nIn"] = conv->nIn;
    j["nOut"] = conv->nOut;
    j["hasBias"] = conv->hasBias;
  } else if (const auto* pool = dynamic_cast<const SubsamplingLayer*>(&l)) {
    j["poolingType"] = nameOf(kPoolings, pool->poolingType);
    j["kernel"] = toJson(pool->kernel);
    j["stride"] = toJson(pool->stride);
    j["padding"] = toJson(pool->padding);
    j["convolutionMode"] = mode(pool->convolutionMode);
  } else if (const auto* ff = dynamic_cast<const FeedForwardLayer*>(&l)) {
    j["nIn"] = ff->nIn;
    j["nOut"] = ff->nOut;
    j["hasBias"] = ff->hasBias;
    if (const auto* out = dynamic_cast<const OutputLayer*>(&l))
      j["lossFunction"] = nameOf(kLosses, out->lossFunction);
  }
  return j;
}

// --- Reading ---------------------------------------------------------------------------------------

// A JSON value and where it sits in the document, for error messages.
class Node {
 public:
  Node(const Json& value, std::string path) : value_(value), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& problem) const {
    throw ConfigError("MultiLayerConfiguration::fromJson: " + path_ + ": " + problem);
  }

  Node operator[](const char* key) const {
    requireType(value_.is_object(), "an object");
    const auto it = value_.find(key);
    if (it == value_.end()) fail(std::string("missing field \"") + key + "\"");
    return Node(*it, path_ + "." + key);
  }
  Node at(size_t i) const { return Node(value_[i], path_ + "[" + std::to_string(i) + "]"); }
  size_t arraySize() const {
    requireType(value_.is_array(), "an array");
    return value_.size();
  }
  bool isNull() const { return value_.is_null(); }

  std::string string() const {
    requireType(value_.is_string(), "a string");
    return value_.get<std::string>();
  }
  bool boolean() const {
    requireType(value_.is_boolean(), "true or false");
    return value_.get<bool>();
  }
  double number() const {
    requireType(value_.is_number(), "a number");
    return value_.get<double>();
  }
  uint64_t unsignedInteger() const {
    requireType(value_.is_number_integer() && !(value_.is_number_integer() && !value_.is_number_unsigned() &&
                                                value_.get<int64_t>() < 0),
                "a non-negative integer");
    return value_.get<uint64_t>();
  }
  // An integer in [0, kMaxSize].
  int64_t size() const {
    requireType(value_.is_number_integer(), "an integer");
    const bool inRange = value_.is_number_unsigned() ? value_.get<uint64_t>() <= uint64_t(kMaxSize)
                                                     : value_.get<int64_t>() >= 0 &&
                                                           value_.get<int64_t>() <= kMaxSize;
    if (!inRange) fail("must be between 0 and " + std::to_string(kMaxSize) + ", got " + value_.dump());
    return value_.get<int64_t>();
  }
  template <typename E, size_t N>
  E enumValue(const Names<E, N>& names) const {
    const std::string s = string();
    std::string known;
    for (const auto& [v, name] : names) {
      if (s == name) return v;
      known += (known.empty() ? "" : ", ") + std::string(name);
    }
    fail("unknown value \"" + s + "\" (expected one of " + known + ")");
  }

 private:
  void requireType(bool ok, const char* expected) const {
    if (!ok) fail(std::string("expected ") + expected + ", got " + typeOf());
  }
  std::string typeOf() const {
    std::string shown = value_.dump();
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    return std::string(value_.type_name()) + " " + shown;
  }

  const Json& value_;
  std::string path_;
};

UpdaterParams readUpdater(const Node& n) {
  UpdaterParams u;
  u.kind = n["type"].enumValue(kUpdaters);
  u.learningRate = n["learningRate"].number();
  u.momentum = n["momentum"].number();
  u.beta1 = n["beta1"].number();
  u.beta2 = n["beta2"].number();
  u.rmsDecay = n["rmsDecay"].number();
  u.epsilon = n["epsilon"].number();
  return u;
}

std::optional<UpdaterParams> readOptionalUpdater(const Node& n) {
  if (n.isNull()) return std::nullopt;
  return readUpdater(n);
}

InputType readInputType(const Node& n) {
  InputType t;
  t.kind = n["kind"].enumValue(kInputKinds);
  if (t.kind == InputType::Kind::FeedForward) {
    t.size = n["size"].size();
  } else {
    t.height = n["height"].size();
    t.width = n["width"].size();
    t.channels = n["channels"].size();
  }
  return t;
}

ConvolutionLayer::Pair readPair(const Node& n) {
  if (n.arraySize() != 2) n.fail("expected [height, width]");
  return {n.at(0).size(), n.at(1).size()};
}

template <typename T, typename F>
std::optional<T> readOptional(const Node& n, F&& read) {
  if (n.isNull()) return std::nullopt;
  return read(n);
}

void readCommonFields(const Node& n, Layer& l) {
  l.name = n["name"].string();
  l.activation = readOptional<Activation>(n["activation"], [](const Node& v) { return v.enumValue(kActivations); });
  l.leakyReluAlpha = n["leakyReluAlpha"].number();
  l.weightInit = readOptional<WeightInit>(n["weightInit"], [](const Node& v) { return v.enumValue(kWeightInits); });
  l.updater = readOptionalUpdater(n["updater"]);
  l.biasUpdater = readOptionalUpdater(n["biasUpdater"]);
  auto number = [](const Node& v) { return v.number(); };
  l.l2 = readOptional<double>(n["l2"], number);
  l.l2Bias = readOptional<double>(n["l2Bias"], number);
  l.biasInit = readOptional<double>(n["biasInit"], number);
}

std::optional<ConvolutionMode> readMode(const Node& n) {
  return readOptional<ConvolutionMode>(n, [](const Node& v) { return v.enumValue(kModes); });
}

std::shared_ptr<Layer> readLayer(const Node& n) {
  const std::string type = n["type"].string();
  std::shared_ptr<Layer> layer;
  if (type == "ConvolutionLayer") {
    auto conv = std::make_shared<ConvolutionLayer>();
    conv->kernel = readPair(n["kernel"]);
    conv->stride = readPair(n["stride"]);
    conv->padding = readPair(n["padding"]);
    conv->dilation = readPair(n["dilation"]);
    conv->convolutionMode = readMode(n["convolutionMode"]);
    conv->nIn = n["nIn"].size();
    conv->nOut = n["nOut"].size();
    conv->hasBias = n["hasBias"].boolean();
    layer = conv;
  } else if (type == "SubsamplingLayer") {
    auto pool = std::make_shared<SubsamplingLayer>();
    pool->poolingType = n["poolingType"].enumValue(kPoolings);
    pool->kernel = readPair(n["kernel"]);
    pool->stride = readPair(n["stride"]);
    pool->padding = readPair(n["padding"]);
    pool->convolutionMode = readMode(n["convolutionMode"]);
    layer = pool;
  } else if (type == "DenseLayer" || type == "OutputLayer") {
    std::shared_ptr<FeedForwardLayer> ff;
    if (type == "OutputLayer") {
      auto out = std::make_shared<OutputLayer>();
      out->lossFunction = n["lossFunction"].enumValue(kLosses);
      ff = out;
    } else {
      ff = std::make_shared<DenseLayer>();
    }
    ff->nIn = n["nIn"].size();
    ff->nOut = n["nOut"].size();
    ff->hasBias = n["hasBias"].boolean();
    layer = ff;
  } else {
    n["type"].fail("unknown layer type \"" + type +
                   "\" (expected ConvolutionLayer, SubsamplingLayer, DenseLayer or OutputLayer)");
  }
  readCommonFields(n, *layer);
  return layer;
}

// Parameters of a resolved layer, or -1 when they would exceed kMaxParams (checked arithmetic:
// the sizes come from a file).
int64_t checkedParamCount(const Layer& l) {
  int64_t weights = 0, bias = 0;
  auto product = [](std::initializer_list<int64_t> factors) {
    int64_t p = 1;
    for (int64_t f : factors)
      if (__builtin_mul_overflow(p, f, &p) || p > kMaxParams) return int64_t{-1};
    return p;
  };
  if (const auto* conv = dynamic_cast<const ConvolutionLayer*>(&l)) {
    weights = product({conv->nOut, conv->nIn, conv->kernel.h, conv->kernel.w});
    bias = conv->hasBias ? conv->nOut : 0;
  } else if (const auto* ff = dynamic_cast<const FeedForwardLayer*>(&l)) {
    weights = product({ff->nIn, ff->nOut});
    bias = ff->hasBias ? ff->nOut : 0;
  }
  return weights < 0 ? -1 : weights + bias;
}

std::string toString(InputPreProcessor p) { return nameOf(kPreProcessors, p); }

}  // namespace

std::string MultiLayerConfiguration::toJson() const {
  Json defaultsJson{{"activation", nameOf(kActivations, defaults.activation)},
                    {"weightInit", nameOf(kWeightInits, defaults.weightInit)},
                    {"updater", dl4cpp::toJson(defaults.updater)},
                    {"biasUpdater", dl4cpp::toJson(defaults.biasUpdater)},
                    {"l2", defaults.l2},
                    {"l2Bias", defaults.l2Bias},
                    {"biasInit", defaults.biasInit},
                    {"convolutionMode", nameOf(kModes, defaults.convolutionMode)}};
  Json layersJson = Json::array();
  for (size_t i = 0; i < layers.size(); ++i) {
    Json l = dl4cpp::toJson(*layers[i]);
    if (i < preProcessors.size()) l["preProcessor"] = nameOf(kPreProcessors, preProcessors[i]);
    if (i < layerInputTypes.size()) l["inputType"] = dl4cpp::toJson(layerInputTypes[i]);
    if (i < layerOutputTypes.size()) l["outputType"] = dl4cpp::toJson(layerOutputTypes[i]);
    layersJson.push_back(std::move(l));
  }
  Json root{{"format", "dl4cpp.MultiLayerConfiguration"},
            {"seed", seed},
            {"defaults", std::move(defaultsJson)},
            {"inputType", dl4cpp::toJson(inputType)},
            {"layers", std::move(layersJson)},
            {"outputType", dl4cpp::toJson(outputType)}};
  try {
    return root.dump(2);
  } catch (const Json::exception&) {
    // The only text a configuration holds besides enum names is the layer names.
    throw ConfigError("MultiLayerConfiguration::toJson: a layer name is not valid UTF-8");
  }
}

MultiLayerConfiguration MultiLayerConfiguration::fromJson(const std::string& text) {
  Json parsed;
  try {
    parsed = Json::parse(text);
  } catch (const Json::exception& e) {
    // parse_error, and out_of_range for numbers beyond double ("1e999"): both are bad input.
    throw ConfigError(std::string("MultiLayerConfiguration::fromJson: not valid JSON: ") + e.what());
  }
  const Node root(parsed, "$");
  if (root["format"].string() != "dl4cpp.MultiLayerConfiguration")
    root["format"].fail("expected \"dl4cpp.MultiLayerConfiguration\"");

  LayerDefaults defaults;
  const Node d = root["defaults"];
  defaults.activation = d["activation"].enumValue(kActivations);
  defaults.weightInit = d["weightInit"].enumValue(kWeightInits);
  defaults.updater = readUpdater(d["updater"]);
  defaults.biasUpdater = readOptionalUpdater(d["biasUpdater"]);
  defaults.l2 = d["l2"].number();
  defaults.l2Bias = d["l2Bias"].number();
  defaults.biasInit = d["biasInit"].number();
  defaults.convolutionMode = d["convolutionMode"].enumValue(kModes);

  NeuralNetConfiguration::ListBuilder builder(root["seed"].unsignedInteger(), defaults);
  builder.setInputType(readInputType(root["inputType"]));
  const Node layersNode = root["layers"];
  const size_t count = layersNode.arraySize();
  std::vector<Node> layerNodes;
  for (size_t i = 0; i < count; ++i) {
    layerNodes.push_back(layersNode.at(i));
    builder.layer(*readLayer(layerNodes.back()));
  }

  MultiLayerConfiguration conf;
  try {
    conf = builder.build();
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("MultiLayerConfiguration::fromJson: $.layers: ") + e.what());
  }

  // The derived fields stored beside each layer must be what the builder derived.
  auto checkDerived = [](const Node& n, const std::string& stored, const std::string& derived) {
    if (stored != derived)
      n.fail("the file says " + stored + " but the configuration implies " + derived);
  };
  int64_t totalParams = 0;
  for (size_t i = 0; i < count; ++i) {
    const Node& n = layerNodes[i];
    checkDerived(n["preProcessor"], toString(n["preProcessor"].enumValue(kPreProcessors)),
                 toString(conf.preProcessors[i]));
    checkDerived(n["inputType"], readInputType(n["inputType"]).toString(), conf.layerInputTypes[i].toString());
    checkDerived(n["outputType"], readInputType(n["outputType"]).toString(), conf.layerOutputTypes[i].toString());
    const int64_t params = checkedParamCount(*conf.layers[i]);
    if (params < 0 || (totalParams += params) > kMaxParams)
      n.fail("more than " + std::to_string(kMaxParams) + " parameters");
  }
  checkDerived(root["outputType"], readInputType(root["outputType"]).toString(), conf.outputType.toString());
  return conf;
}

bool operator==(const MultiLayerConfiguration& a, const MultiLayerConfiguration& b) {
  return a.toJson() == b.toJson();
}

}  // namespace dl4cpp

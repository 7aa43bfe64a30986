// MultiLayerConfiguration and ComputationGraphConfiguration <-> JSON. nlohmann-json is a private
// dependency: only this file sees it.
//
// The JSON holds the resolved configuration: every layer field with the defaults already applied,
// so a reader (or a person) sees exactly what the network runs. fromJson() feeds those layers back
// through NeuralNetConfiguration's list builder, which re-derives geometry, preprocessors and
// input/output types; the stored derived values are then checked against the rebuilt ones.
#include <fmt/format.h>

#include <array>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/LayerRegistry.h"
#include "nn/conf/NestedLayerFields.h"
#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/conf/graph/ComputationGraphConfiguration.h"
#include "nn/core/QuoteForMessage.h"

namespace dl4cpp {

namespace {

using Json = nlohmann::ordered_json;  // written with keys in order: the file reads top-down
// Read into std::map objects: ordered_json finds keys by linear search, so parsing an object of n
// keys would take O(n^2) time, minutes for a few megabytes of crafted keys.
using ParsedJson = nlohmann::json;

// Limits of the parse, whatever the text (a configuration is read from model files, which are
// not trusted). A configuration nests 4 deep and takes about 1 KB per layer, so neither limit is
// near a real one. The depth limit keeps every recursive walk of the parsed value (nlohmann's
// dump(), copies, comparisons) far from the stack's end; the size limit bounds the parsed value's
// memory (a few times the text's).
constexpr int kMaxJsonDepth = 64;
constexpr size_t kMaxJsonBytes = size_t{16} << 20;

// --- Enum names
// ------------------------------------------------------------------------------------

template <typename E, size_t N>
using Names = EnumNames<E, N>;

constexpr Names<UpdaterKind, 10> kUpdaters{{{UpdaterKind::SGD, "SGD"},
                                            {UpdaterKind::NESTEROVS, "NESTEROVS"},
                                            {UpdaterKind::ADAM, "ADAM"},
                                            {UpdaterKind::RMSPROP, "RMSPROP"},
                                            {UpdaterKind::NOOP, "NOOP"},
                                            {UpdaterKind::ADAGRAD, "ADAGRAD"},
                                            {UpdaterKind::ADADELTA, "ADADELTA"},
                                            {UpdaterKind::ADAMAX, "ADAMAX"},
                                            {UpdaterKind::NADAM, "NADAM"},
                                            {UpdaterKind::AMSGRAD, "AMSGRAD"}}};
constexpr Names<InputType::Kind, 4> kInputKinds{
    {{InputType::Kind::FeedForward, "FeedForward"},
     {InputType::Kind::Convolutional, "Convolutional"},
     {InputType::Kind::ConvolutionalFlat, "ConvolutionalFlat"},
     {InputType::Kind::Recurrent, "Recurrent"}}};

// --- Writing
// ---------------------------------------------------------------------------------------

// --- Schedules: {"type": the schedule's class name, "scheduleType", then its parameters under
// DL4J's JSON names (Schedules.h); MapSchedule's "values" is an object keyed by position, as
// Jackson writes DL4J's Map<Integer, Double>.
constexpr Names<ScheduleType, 2> kScheduleTypes{
    {{ScheduleType::ITERATION, "ITERATION"}, {ScheduleType::EPOCH, "EPOCH"}}};

Json scheduleParameter(double v) { return v; }
Json scheduleParameter(int64_t v) { return v; }
Json scheduleParameter(const std::map<int64_t, double>& values) {
  Json j = Json::object();
  for (const auto& [position, value] : values) j[std::to_string(position)] = value;
  return j;
}

Json toJson(const Schedule& schedule) {
  return std::visit(
      [](const auto& s) {
        Json j{{"type", s.kName}, {"scheduleType", nameOf(kScheduleTypes, s.scheduleType)}};
        std::remove_cvref_t<decltype(s)>::fields(
            s, [&](const char* key, const auto& value) { j[key] = scheduleParameter(value); });
        return j;
      },
      schedule.variant());
}

Json toJson(const std::shared_ptr<const Schedule>& s) { return s ? toJson(*s) : Json(nullptr); }

Json toJson(const UpdaterParams& u) {
  // Every field, used by the kind or not, so a round trip is exact.
  return Json{{"type", nameOf(kUpdaters, u.kind)},
              {"learningRate", u.learningRate},
              {"momentum", u.momentum},
              {"beta1", u.beta1},
              {"beta2", u.beta2},
              {"rmsDecay", u.rmsDecay},
              {"epsilon", u.epsilon},
              {"rho", u.rho},
              {"learningRateSchedule", toJson(u.learningRateSchedule)},
              {"momentumSchedule", toJson(u.momentumSchedule)}};
}

Json toJson(const std::optional<UpdaterParams>& u) { return u ? toJson(*u) : Json(nullptr); }

// A named scheme as its name; a distribution as an object of its kind and parameters.
Json toJson(const WeightInitScheme& w) {
  if (const WeightInit* named = w.named()) return nameOf(kWeightInitNames, *named);
  const Distribution& d = *w.distribution();
  const bool normal = d.kind == Distribution::Kind::NORMAL;
  return Json{{"distribution", nameOf(kDistributionNames, d.kind)},
              {normal ? "mean" : "lower", d.first},
              {normal ? "std" : "upper", d.second}};
}

Json toJson(const InputType& t) {
  Json j{{"kind", nameOf(kInputKinds, t.kind)}};
  if (t.kind == InputType::Kind::FeedForward) {
    j["size"] = t.size;
  } else if (t.kind == InputType::Kind::Recurrent) {
    j["size"] = t.size;
    j["length"] = t.length;
  } else {
    j["height"] = t.height;
    j["width"] = t.width;
    j["channels"] = t.channels;
  }
  if (t.timeDistributed) {  // written only when set: files from before it read the same
    j["timeDistributed"] = true;
    j["length"] = t.length;
  }
  return j;
}

Json commonFields(const Layer& l) {
  // Fields left unset before resolve() are written as null (a layer from fromJson() is resolved).
  auto orNull = [](const auto& opt, auto&& f) { return opt ? Json(f(*opt)) : Json(nullptr); };
  return Json{
      {"type", l.typeName()},
      {"name", l.name},
      {"activation", orNull(l.activation, [](auto a) { return nameOf(kActivationNames, a); })},
      {"leakyReluAlpha", l.leakyReluAlpha},
      {"weightInit", orNull(l.weightInit, [](const auto& w) { return toJson(w); })},
      {"updater", toJson(l.updater)},
      {"biasUpdater", toJson(l.biasUpdater)},
      {"l2", orNull(l.l2, [](double v) { return v; })},
      {"l2Bias", orNull(l.l2Bias, [](double v) { return v; })},
      {"biasInit", orNull(l.biasInit, [](double v) { return v; })},
      {"dropOut", orNull(l.dropOut, [](double v) { return v; })},
  };
}

// A layer's own fields, written into its JSON object.
class JsonFieldWriter : public LayerFieldWriter {
 public:
  explicit JsonFieldWriter(Json& object) : object_(object) {}
  void integer(std::string_view key, int64_t value) override { set(key, value); }
  void number(std::string_view key, double value) override { set(key, value); }
  void boolean(std::string_view key, bool value) override { set(key, value); }
  void string(std::string_view key, std::string_view value) override {
    set(key, std::string(value));
  }
  void integers(std::string_view key, std::span<const int64_t> values) override {
    set(key, Json(std::vector<int64_t>(values.begin(), values.end())));
  }
  void null(std::string_view key) override { set(key, nullptr); }
  // The layer's object, for a wrapper layer's nested layer (NestedLayerFields.h).
  Json& object() { return object_; }

 private:
  void set(std::string_view key, Json value) { object_[std::string(key)] = std::move(value); }
  Json& object_;
};

Json toJson(const WeightDecay& w) { return Json{{"coeff", w.coeff}, {"applyLR", w.applyLR}}; }

// The regularisation and gradient normalisation fields of every layer (null: not set).
void writeRegularizationFields(const Layer& l, Json& j) {
  auto orNull = [](const auto& opt, auto&& f) { return opt ? Json(f(*opt)) : Json(nullptr); };
  auto number = [](double v) { return v; };
  j["l1"] = orNull(l.l1, number);
  j["l1Bias"] = orNull(l.l1Bias, number);
  j["weightDecay"] = orNull(l.weightDecay, [](const WeightDecay& w) { return toJson(w); });
  j["weightDecayBias"] = orNull(l.weightDecayBias, [](const WeightDecay& w) { return toJson(w); });
  j["gradientNormalization"] = orNull(l.gradientNormalization, [](GradientNormalization g) {
    return nameOf(kGradientNormalizationNames, g);
  });
  j["gradientNormalizationThreshold"] = orNull(l.gradientNormalizationThreshold, number);
}

Json toJson(const Layer& l) {
  Json j = commonFields(l);
  writeRegularizationFields(l, j);
  j["frozen"] = l.frozen;
  JsonFieldWriter fields(j);
  l.writeFields(fields);
  return j;
}

// --- Reading
// ---------------------------------------------------------------------------------------

// Untrusted text for an error message, as JSON writes it: in double quotes, cut and escaped
// (nn/core/QuoteForMessage.h).
std::string quoted(const std::string& text) {
  return quoteForMessage(text, kMessageQuoteBytes, '"');
}

// What a value is, for error messages: arrays and objects by their size only (printing one whole
// could take megabytes, and nlohmann's dump() recurses once per level of nesting).
std::string summary(const ParsedJson& v) {
  switch (v.type()) {
    case ParsedJson::value_t::object:
      return fmt::format("an object of {} fields", v.size());
    case ParsedJson::value_t::array:
      return fmt::format("an array of {} elements", v.size());
    case ParsedJson::value_t::string:
      return "string " + quoted(v.get_ref<const std::string&>());
    default:
      return std::string(v.type_name()) + " " + v.dump();  // a number, boolean or null
  }
}

// A JSON value and where it sits in the document, for error messages.
class Node {
 public:
  // `reader` names the function reading in error messages.
  Node(const ParsedJson& value, std::string path,
       const char* reader = "MultiLayerConfiguration::fromJson")
      : value_(value), path_(std::move(path)), reader_(reader) {}

  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& problem) const {
    throw ConfigError(std::string(reader_) + ": " + path_ + ": " + problem);
  }

  Node operator[](const char* key) const {
    requireType(value_.is_object(), "an object");
    const auto it = value_.find(key);
    if (it == value_.end()) fail(std::string("missing field \"") + key + "\"");
    return Node(*it, path_ + "." + key, reader_);
  }
  // The field `key` when the object has it. For fields later dl4cpp versions added: a file
  // written before has none of them.
  std::optional<Node> find(const char* key) const {
    requireType(value_.is_object(), "an object");
    const auto it = value_.find(key);
    if (it == value_.end()) return std::nullopt;
    return Node(*it, path_ + "." + key, reader_);
  }
  Node at(size_t i) const {
    return Node(value_[i], path_ + "[" + std::to_string(i) + "]", reader_);
  }
  size_t arraySize() const {
    requireType(value_.is_array(), "an array");
    return value_.size();
  }
  bool isNull() const { return value_.is_null(); }
  bool isString() const { return value_.is_string(); }
  // visit(key, node) for each field of this object, in key order; the node's path quotes the key,
  // which may be any text.
  template <typename Visit>
  void forEachField(Visit&& visit) const {
    requireType(value_.is_object(), "an object");
    for (auto it = value_.begin(); it != value_.end(); ++it)
      visit(it.key(), Node(it.value(), path_ + "[" + quoted(it.key()) + "]", reader_));
  }

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
    requireType(
        value_.is_number_integer() && !(value_.is_number_integer() &&
                                        !value_.is_number_unsigned() && value_.get<int64_t>() < 0),
        "a non-negative integer");
    return value_.get<uint64_t>();
  }
  // An integer in [0, max]: sizes are bounded before anything multiplies them (limits::).
  int64_t size(int64_t max) const {
    requireType(value_.is_number_integer(), "an integer");
    const bool inRange = value_.is_number_unsigned()
                             ? value_.get<uint64_t>() <= uint64_t(max)
                             : value_.get<int64_t>() >= 0 && value_.get<int64_t>() <= max;
    if (!inRange) fail("must be between 0 and " + std::to_string(max) + ", got " + summary(value_));
    return value_.get<int64_t>();
  }
  // The index of this string in `names`.
  size_t choice(std::span<const char* const> names) const {
    const std::string s = string();
    std::string known;
    for (size_t i = 0; i < names.size(); ++i) {
      if (s == names[i]) return i;
      known += (known.empty() ? "" : ", ") + std::string(names[i]);
    }
    fail("unknown value " + quoted(s) + " (expected one of " + known + ")");
  }
  template <typename E, size_t N>
  E enumValue(const Names<E, N>& names) const {
    std::array<const char*, N> labels{};
    for (size_t i = 0; i < N; ++i) labels[i] = names[i].second;
    return names[choice(labels)].first;
  }

 private:
  void requireType(bool ok, const char* expected) const {
    if (!ok) fail(std::string("expected ") + expected + ", got " + summary(value_));
  }

  const ParsedJson& value_;
  std::string path_;
  const char* reader_;
};

// --- Schedules: what toJson(const Schedule&) wrote, checked as a Schedule checks its parameters.
void readScheduleParameter(const Node& n, double& v) { v = n.number(); }
void readScheduleParameter(const Node& n, int64_t& v) {
  v = n.size(std::numeric_limits<int64_t>::max());
}
void readScheduleParameter(const Node& n, std::map<int64_t, double>& values) {
  n.forEachField([&](const std::string& key, const Node& value) {
    // Decimal digits only, at most 18 of them: a position that fits int64_t.
    if (key.empty() || key.size() > 18 || key.find_first_not_of("0123456789") != std::string::npos)
      n.fail("position " + quoted(key) + " is not an integer between 0 and 10^18");
    values[std::stoll(key)] = value.number();
  });
}

template <typename S>
Schedule readScheduleOf(const Node& n) {
  S s;
  s.scheduleType = n["scheduleType"].enumValue(kScheduleTypes);
  S::fields(s, [&](const char* key, auto& value) { readScheduleParameter(n[key], value); });
  try {
    return Schedule(std::move(s));
  } catch (const ConfigError& e) {
    n.fail(e.what());
  }
}

template <typename... S>
Schedule readSchedule(const Node& n, const std::variant<S...>* /*the schedule types*/) {
  static constexpr std::array<const char*, sizeof...(S)> kNames{S::kName...};
  static constexpr std::array<Schedule (*)(const Node&), sizeof...(S)> kReaders{
      &readScheduleOf<S>...};
  return kReaders[n["type"].choice(kNames)](n);
}

// The schedule in the updater's field `key`: null, or absent from files written before schedules
// existed, is none.
std::shared_ptr<const Schedule> readOptionalSchedule(const Node& updater, const char* key) {
  const auto n = updater.find(key);
  if (!n || n->isNull()) return nullptr;
  return std::make_shared<const Schedule>(
      readSchedule(*n, static_cast<const Schedule::Variant*>(nullptr)));
}

UpdaterParams readUpdater(const Node& n) {
  UpdaterParams u;
  u.kind = n["type"].enumValue(kUpdaters);
  u.learningRate = n["learningRate"].number();
  u.momentum = n["momentum"].number();
  u.beta1 = n["beta1"].number();
  u.beta2 = n["beta2"].number();
  u.rmsDecay = n["rmsDecay"].number();
  u.epsilon = n["epsilon"].number();
  if (const auto rho = n.find("rho")) u.rho = rho->number();
  u.learningRateSchedule = readOptionalSchedule(n, "learningRateSchedule");
  u.momentumSchedule = readOptionalSchedule(n, "momentumSchedule");
  return u;
}

std::optional<UpdaterParams> readOptionalUpdater(const Node& n) {
  if (n.isNull()) return std::nullopt;
  return readUpdater(n);
}

// What toJson(const WeightInitScheme&) wrote; a distribution's parameters are checked here, so
// that a bad one is named by its path.
WeightInitScheme readWeightInit(const Node& n) {
  if (n.isString()) return n.enumValue(kWeightInitNames);
  Distribution d;
  d.kind = n["distribution"].enumValue(kDistributionNames);
  const bool normal = d.kind == Distribution::Kind::NORMAL;
  d.first = n[normal ? "mean" : "lower"].number();
  d.second = n[normal ? "std" : "upper"].number();
  if (const std::string problem = d.problem(); !problem.empty()) n.fail(problem);
  return d;
}

// The truncated-BPTT fields into a list or graph builder. Files written before truncated BPTT
// existed have none of them: standard BPTT.
template <typename Builder>
void readBackpropFields(const Node& root, Builder& builder) {
  if (const auto v = root.find("backpropType"))
    builder.backpropType(v->enumValue(kBackpropTypeNames));
  if (const auto v = root.find("tbpttFwdLength"))
    builder.tBPTTForwardLength(v->size(limits::kMaxExtent));
  if (const auto v = root.find("tbpttBackLength"))
    builder.tBPTTBackwardLength(v->size(limits::kMaxExtent));
}

InputType readInputType(const Node& n) {
  InputType t;
  t.kind = n["kind"].enumValue(kInputKinds);
  if (t.kind == InputType::Kind::FeedForward) {
    t.size = n["size"].size(limits::kMaxValuesPerExample);
  } else if (t.kind == InputType::Kind::Recurrent) {
    t.size = n["size"].size(limits::kMaxExtent);
    t.length = n["length"].size(limits::kMaxExtent);
  } else {
    t.height = n["height"].size(limits::kMaxExtent);
    t.width = n["width"].size(limits::kMaxExtent);
    t.channels = n["channels"].size(limits::kMaxExtent);
  }
  if (const auto v = n.find("timeDistributed"); v && v->boolean()) {
    if (t.kind == InputType::Kind::Recurrent || t.kind == InputType::Kind::ConvolutionalFlat)
      v->fail("only FeedForward and Convolutional types are per time step");
    t = InputType::perTimeStep(t, n["length"].size(limits::kMaxExtent));
  }
  return t;
}

template <typename T, typename F>
std::optional<T> readOptional(const Node& n, F&& read) {
  if (n.isNull()) return std::nullopt;
  return read(n);
}

// readOptional() of the field `key`, unset when the object lacks it.
template <typename T, typename F>
std::optional<T> readOptionalField(const Node& object, const char* key, F&& read) {
  const auto v = object.find(key);
  return v ? readOptional<T>(*v, read) : std::nullopt;
}

void readCommonFields(const Node& n, Layer& l) {
  l.name = n["name"].string();
  l.activation = readOptional<Activation>(
      n["activation"], [](const Node& v) { return v.enumValue(kActivationNames); });
  l.leakyReluAlpha = n["leakyReluAlpha"].number();
  l.weightInit = readOptional<WeightInitScheme>(n["weightInit"], readWeightInit);
  l.updater = readOptionalUpdater(n["updater"]);
  l.biasUpdater = readOptionalUpdater(n["biasUpdater"]);
  auto number = [](const Node& v) { return v.number(); };
  l.l2 = readOptional<double>(n["l2"], number);
  l.l2Bias = readOptional<double>(n["l2Bias"], number);
  l.biasInit = readOptional<double>(n["biasInit"], number);
  l.dropOut = readOptionalField<double>(n, "dropOut", number);
}

WeightDecay readWeightDecay(const Node& n) {
  return WeightDecay{n["coeff"].number(), n["applyLR"].boolean()};
}

// What writeRegularizationFields() wrote; a field a file lacks stays unset.
void readRegularizationFields(const Node& n, Layer& l) {
  auto number = [](const Node& v) { return v.number(); };
  l.l1 = readOptionalField<double>(n, "l1", number);
  l.l1Bias = readOptionalField<double>(n, "l1Bias", number);
  l.weightDecay = readOptionalField<WeightDecay>(n, "weightDecay", readWeightDecay);
  l.weightDecayBias = readOptionalField<WeightDecay>(n, "weightDecayBias", readWeightDecay);
  l.gradientNormalization = readOptionalField<GradientNormalization>(
      n, "gradientNormalization",
      [](const Node& v) { return v.enumValue(kGradientNormalizationNames); });
  l.gradientNormalizationThreshold =
      readOptionalField<double>(n, "gradientNormalizationThreshold", number);
}

// A layer's own fields, read from its JSON object.
class JsonFieldReader : public LayerFieldReader {
 public:
  explicit JsonFieldReader(const Node& object) : object_(object) {}
  bool isNull(std::string_view key) const override { return at(key).isNull(); }
  int64_t size(std::string_view key, int64_t max) const override { return at(key).size(max); }
  std::vector<int64_t> sizes(std::string_view key, size_t count, int64_t max) const override {
    const Node array = at(key);
    if (array.arraySize() != count)
      array.fail("expected an array of " + std::to_string(count) + " integers");
    std::vector<int64_t> values;
    for (size_t i = 0; i < count; ++i) values.push_back(array.at(i).size(max));
    return values;
  }
  double number(std::string_view key) const override { return at(key).number(); }
  bool boolean(std::string_view key) const override { return at(key).boolean(); }
  std::string string(std::string_view key) const override { return at(key).string(); }
  size_t choice(std::string_view key, std::span<const char* const> names) const override {
    return at(key).choice(names);
  }
  [[noreturn]] void fail(std::string_view key, const std::string& problem) const override {
    at(key).fail(problem);
  }
  Node at(std::string_view key) const { return object_[std::string(key).c_str()]; }

 private:
  const Node& object_;
};

std::shared_ptr<Layer> readLayer(const Node& n) {
  const std::string type = n["type"].string();
  const LayerRegistry& registry = LayerRegistry::instance();
  std::shared_ptr<Layer> layer = registry.create(type);
  if (!layer) {
    std::string known;
    for (const auto& name : registry.typeNames()) known += (known.empty() ? "" : ", ") + name;
    n["type"].fail("unknown layer type " + quoted(type) + " (registered: " + known + ")");
  }
  if (layer->typeName() != type)
    n["type"].fail("the registry's factory for " + quoted(type) + " makes a " +
                   quoted(layer->typeName()));
  readCommonFields(n, *layer);
  readRegularizationFields(n, *layer);
  // Absent from files written before frozen layers existed: trainable.
  if (const auto frozen = n.find("frozen")) layer->frozen = frozen->boolean();
  layer->readFields(JsonFieldReader(n));
  return layer;
}

Json defaultsToJson(const LayerDefaults& defaults) {
  return Json{{"activation", nameOf(kActivationNames, defaults.activation)},
              {"weightInit", toJson(defaults.weightInit)},
              {"updater", toJson(defaults.updater)},
              {"biasUpdater", toJson(defaults.biasUpdater)},
              {"l2", defaults.l2},
              {"l2Bias", defaults.l2Bias},
              {"biasInit", defaults.biasInit},
              {"dropOut", defaults.dropOut},
              {"convolutionMode", nameOf(kConvolutionModeNames, defaults.convolutionMode)},
              {"l1", defaults.l1},
              {"l1Bias", defaults.l1Bias},
              {"weightDecay", toJson(defaults.weightDecay)},
              {"weightDecayBias", toJson(defaults.weightDecayBias)},
              {"gradientNormalization",
               nameOf(kGradientNormalizationNames, defaults.gradientNormalization)},
              {"gradientNormalizationThreshold", defaults.gradientNormalizationThreshold}};
}

// The text parsed within the limits above; `reader` names the caller in errors.
ParsedJson parseBounded(const std::string& text, const char* reader) {
  if (text.size() > kMaxJsonBytes)
    throw ConfigError(
        fmt::format("{}: the JSON is {} bytes, more "
                    "than the {} a configuration may have",
                    reader, text.size(), kMaxJsonBytes));
  // nlohmann's parser keeps its own stack on the heap; the callback sees each array and object
  // as it opens, with the number of containers around it, and stops the parse at the limit.
  auto boundDepth = [reader](int depth, ParsedJson::parse_event_t event, ParsedJson&) {
    const bool opens = event == ParsedJson::parse_event_t::object_start ||
                       event == ParsedJson::parse_event_t::array_start;
    if (opens && depth >= kMaxJsonDepth)
      throw ConfigError(
          fmt::format("{}: JSON nested more than {} levels deep", reader, kMaxJsonDepth));
    return true;
  };
  ParsedJson parsed;
  try {
    parsed = ParsedJson::parse(text, boundDepth);
  } catch (const ParsedJson::exception& e) {
    // parse_error, and out_of_range for numbers beyond double ("1e999"): both are bad input.
    // The parser's message quotes the bytes it stopped at, which may be anything.
    throw ConfigError(std::string(reader) +
                      ": not valid JSON: " + escapeForMessage(e.what(), kLibraryMessageBytes));
  }
  return parsed;
}

LayerDefaults readDefaults(const Node& d) {
  LayerDefaults defaults;
  defaults.activation = d["activation"].enumValue(kActivationNames);
  defaults.weightInit = readWeightInit(d["weightInit"]);
  defaults.updater = readUpdater(d["updater"]);
  defaults.biasUpdater = readOptionalUpdater(d["biasUpdater"]);
  defaults.l2 = d["l2"].number();
  defaults.l2Bias = d["l2Bias"].number();
  defaults.biasInit = d["biasInit"].number();
  if (const auto v = d.find("dropOut")) defaults.dropOut = v->number();
  defaults.convolutionMode = d["convolutionMode"].enumValue(kConvolutionModeNames);
  // Regularisation and gradient normalisation: absent from files written before they existed.
  if (const auto v = d.find("l1")) defaults.l1 = v->number();
  if (const auto v = d.find("l1Bias")) defaults.l1Bias = v->number();
  if (const auto v = d.find("weightDecay")) defaults.weightDecay = readWeightDecay(*v);
  if (const auto v = d.find("weightDecayBias")) defaults.weightDecayBias = readWeightDecay(*v);
  if (const auto v = d.find("gradientNormalization"))
    defaults.gradientNormalization = v->enumValue(kGradientNormalizationNames);
  if (const auto v = d.find("gradientNormalizationThreshold"))
    defaults.gradientNormalizationThreshold = v->number();

  return defaults;
}

}  // namespace

void writeNestedLayer(LayerFieldWriter& out, std::string_view key, const Layer& layer) {
  auto* json = dynamic_cast<JsonFieldWriter*>(&out);
  if (json == nullptr)
    throw ConfigError("a nested layer (" + layer.typeName() +
                      ") is written only by the configuration's JSON writer");
  json->object()[std::string(key)] = toJson(layer);
}

std::shared_ptr<Layer> readNestedLayer(const LayerFieldReader& in, std::string_view key) {
  const auto* json = dynamic_cast<const JsonFieldReader*>(&in);
  if (json == nullptr)
    throw ConfigError("a nested layer is read only by the configuration's JSON reader");
  return readLayer(json->at(key));
}

std::string MultiLayerConfiguration::toJson() const {
  Json defaultsJson = defaultsToJson(defaults);
  Json layersJson = Json::array();
  for (size_t i = 0; i < layers.size(); ++i) {
    Json l = dl4cpp::toJson(*layers[i]);
    if (i < preProcessors.size())
      l["preProcessor"] = nameOf(kInputPreProcessorNames, preProcessors[i]);
    if (i < layerInputTypes.size()) l["inputType"] = dl4cpp::toJson(layerInputTypes[i]);
    if (i < layerOutputTypes.size()) l["outputType"] = dl4cpp::toJson(layerOutputTypes[i]);
    layersJson.push_back(std::move(l));
  }
  Json root{{"format", "dl4cpp.MultiLayerConfiguration"},
            {"seed", seed},
            {"defaults", std::move(defaultsJson)},
            {"inputType", dl4cpp::toJson(inputType)},
            {"layers", std::move(layersJson)},
            {"outputType", dl4cpp::toJson(outputType)},
            {"backpropType", nameOf(kBackpropTypeNames, backpropType)},
            {"tbpttFwdLength", tbpttFwdLength},
            {"tbpttBackLength", tbpttBackLength}};
  try {
    return root.dump(2);
  } catch (const Json::exception&) {
    // The only text a configuration holds besides enum names is the layer names.
    throw ConfigError("MultiLayerConfiguration::toJson: a layer name is not valid UTF-8");
  }
}

MultiLayerConfiguration MultiLayerConfiguration::fromJson(const std::string& text) {
  const ParsedJson parsed = parseBounded(text, "MultiLayerConfiguration::fromJson");
  const Node root(parsed, "$");
  if (root["format"].string() != "dl4cpp.MultiLayerConfiguration")
    root["format"].fail("expected \"dl4cpp.MultiLayerConfiguration\"");
  const LayerDefaults defaults = readDefaults(root["defaults"]);

  NeuralNetConfiguration::ListBuilder builder(root["seed"].unsignedInteger(), defaults);
  builder.setInputType(readInputType(root["inputType"]));
  readBackpropFields(root, builder);
  const Node layersNode = root["layers"];
  const size_t count = layersNode.arraySize();
  std::vector<Node> layerNodes;
  for (size_t i = 0; i < count; ++i) {
    layerNodes.push_back(layersNode.at(i));
    const Node& n = layerNodes.back();
    builder.layer(*readLayer(n));
    // The one preprocessor a builder is told about; the others it derives (checked below).
    if (n["preProcessor"].enumValue(kInputPreProcessorNames) == InputPreProcessor::RnnToCnn) {
      const InputType images = readInputType(n["inputType"]);
      builder.inputPreProcessor(static_cast<int>(i),
                                {images.height, images.width, images.channels});
    }
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
  for (size_t i = 0; i < count; ++i) {
    const Node& n = layerNodes[i];
    checkDerived(n["preProcessor"], toString(n["preProcessor"].enumValue(kInputPreProcessorNames)),
                 toString(conf.preProcessors[i]));
    checkDerived(n["inputType"], readInputType(n["inputType"]).toString(),
                 conf.layerInputTypes[i].toString());
    checkDerived(n["outputType"], readInputType(n["outputType"]).toString(),
                 conf.layerOutputTypes[i].toString());
  }
  checkDerived(root["outputType"], readInputType(root["outputType"]).toString(),
               conf.outputType.toString());
  return conf;
}

bool operator==(const MultiLayerConfiguration& a, const MultiLayerConfiguration& b) {
  return a.toJson() == b.toJson();
}

// --- ComputationGraphConfiguration
// ---------------------------------------------------------------------

namespace {

constexpr const char* kGraphReader = "ComputationGraphConfiguration::fromJson";

Json toJson(const GraphVertex& v) {
  Json j{{"type", v.typeName()}};
  JsonFieldWriter fields(j);
  v.writeFields(fields);
  return j;
}

std::shared_ptr<GraphVertex> readVertex(const Node& n) {
  const std::string type = n["type"].string();
  std::shared_ptr<GraphVertex> vertex = createBuiltinVertex(type);
  if (!vertex) {
    std::string known;
    for (const auto& name : builtinVertexTypeNames()) known += (known.empty() ? "" : ", ") + name;
    n["type"].fail("unknown vertex type " + quoted(type) + " (known: " + known + ")");
  }
  vertex->readFields(JsonFieldReader(n));
  return vertex;
}

// An array of at most `max` strings.
std::vector<std::string> readNames(const Node& n, int64_t max) {
  const size_t count = n.arraySize();
  if (count > static_cast<size_t>(max))
    n.fail(fmt::format("{} names, more than the {} allowed", count, max));
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) names.push_back(n.at(i).string());
  return names;
}

Json namesToJson(const std::vector<std::string>& names) {
  Json j = Json::array();
  for (const auto& name : names) j.push_back(name);
  return j;
}

}  // namespace

std::string ComputationGraphConfiguration::toJson() const {
  Json inputsJson = Json::array();
  for (size_t i = 0; i < networkInputs.size(); ++i)
    inputsJson.push_back(
        Json{{"name", networkInputs[i]}, {"inputType", dl4cpp::toJson(networkInputTypes[i])}});
  Json verticesJson = Json::array();
  for (const Vertex& v : vertices) {
    Json j{{"name", v.name}, {"inputs", namesToJson(v.inputs)}};
    if (v.layer) {
      j["layer"] = dl4cpp::toJson(*v.layer);
      j["preProcessor"] = nameOf(kInputPreProcessorNames, v.preProcessor);
      j["inputType"] = dl4cpp::toJson(v.layerInputType);
    } else {
      j["vertex"] = dl4cpp::toJson(*v.vertex);
    }
    j["outputType"] = dl4cpp::toJson(v.outputType);
    verticesJson.push_back(std::move(j));
  }
  Json root{{"format", "dl4cpp.ComputationGraphConfiguration"},
            {"seed", seed},
            {"defaults", defaultsToJson(defaults)},
            {"inputs", std::move(inputsJson)},
            {"vertices", std::move(verticesJson)},
            {"outputs", namesToJson(networkOutputs)},
            {"backpropType", nameOf(kBackpropTypeNames, backpropType)},
            {"tbpttFwdLength", tbpttFwdLength},
            {"tbpttBackLength", tbpttBackLength}};
  try {
    return root.dump(2);
  } catch (const Json::exception&) {
    throw ConfigError(
        "ComputationGraphConfiguration::toJson: a vertex or layer name is not valid UTF-8");
  }
}

ComputationGraphConfiguration ComputationGraphConfiguration::fromJson(const std::string& text) {
  const ParsedJson parsed = parseBounded(text, kGraphReader);
  const Node root(parsed, "$", kGraphReader);
  if (root["format"].string() != "dl4cpp.ComputationGraphConfiguration")
    root["format"].fail("expected \"dl4cpp.ComputationGraphConfiguration\"");
  GraphBuilder builder(root["seed"].unsignedInteger(), readDefaults(root["defaults"]));

  const Node inputsNode = root["inputs"];
  const size_t numInputs = inputsNode.arraySize();
  if (numInputs > static_cast<size_t>(limits::kMaxGraphVertices))
    inputsNode.fail(fmt::format("{} inputs, more than the {} a graph may have", numInputs,
                                limits::kMaxGraphVertices));
  std::vector<std::string> inputNames;
  std::vector<InputType> inputTypes;
  for (size_t i = 0; i < numInputs; ++i) {
    inputNames.push_back(inputsNode.at(i)["name"].string());
    inputTypes.push_back(readInputType(inputsNode.at(i)["inputType"]));
  }
  builder.addInputs(inputNames).setInputTypes(inputTypes);
  readBackpropFields(root, builder);

  const Node verticesNode = root["vertices"];
  const size_t count = verticesNode.arraySize();
  if (count > static_cast<size_t>(limits::kMaxGraphVertices))
    verticesNode.fail(fmt::format("{} vertices, more than the {} a graph may have", count,
                                  limits::kMaxGraphVertices));
  std::vector<Node> vertexNodes;
  for (size_t i = 0; i < count; ++i) {
    vertexNodes.push_back(verticesNode.at(i));
    const Node& n = vertexNodes.back();
    const std::string name = n["name"].string();
    const std::vector<std::string> inputs = readNames(n["inputs"], limits::kMaxVertexInputs);
    const auto layer = n.find("layer");
    if (layer) {
      // A stored layer vertex has exactly one input (a merge is its own vertex in the file); the
      // builder would add a merge for several, and the derived fields below would disagree.
      if (inputs.size() != 1) n["inputs"].fail("a layer vertex has exactly one input");
      builder.addLayer(name, *readLayer(*layer), inputs);
    } else {
      builder.addVertex(name, *readVertex(n["vertex"]), inputs);
    }
  }
  builder.setOutputs(readNames(root["outputs"], limits::kMaxGraphVertices));

  ComputationGraphConfiguration conf;
  try {
    conf = builder.build();
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(kGraphReader) + ": $.vertices: " + e.what());
  }

  // The derived fields stored beside each vertex must be what the builder derived. The builder
  // keeps the order of a topologically ordered list, which is what toJson() wrote.
  auto checkDerived = [](const Node& n, const std::string& stored, const std::string& derived) {
    if (stored != derived)
      n.fail("the file says " + stored + " but the configuration implies " + derived);
  };
  for (size_t i = 0; i < count; ++i) {
    const Node& n = vertexNodes[i];
    const Vertex& v = conf.vertices[i];
    checkDerived(n["name"], n["name"].string(), v.name);
    if (v.layer) {
      checkDerived(n["preProcessor"],
                   toString(n["preProcessor"].enumValue(kInputPreProcessorNames)),
                   toString(v.preProcessor));
      checkDerived(n["inputType"], readInputType(n["inputType"]).toString(),
                   v.layerInputType.toString());
    }
    checkDerived(n["outputType"], readInputType(n["outputType"]).toString(),
                 v.outputType.toString());
  }
  return conf;
}

bool operator==(const ComputationGraphConfiguration& a, const ComputationGraphConfiguration& b) {
  return a.toJson() == b.toJson();
}

}  // namespace dl4cpp

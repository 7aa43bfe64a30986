#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "LenetConfiguration.h"
#include "nn/conf/LayerRegistry.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

// Every configuration field set away from its default, on every layer type.
MultiLayerConfiguration everyField() {
  return NeuralNetConfiguration::Builder()
      .seed(987654321987ULL)
      .activation(Activation::LEAKYRELU)
      .weightInit(WeightInit::RELU_UNIFORM)
      .updater(Adam(2e-3, 0.8, 0.99, 1e-7))
      .biasUpdater(RmsProp(0.05, 0.9, 1e-6))
      .l2(1e-4)
      .l2Bias(2e-5)
      .biasInit(0.1)
      .convolutionMode(ConvolutionMode::Same)
      .list()
      .layer(ConvolutionLayer::Builder(3, 2)
                 .stride(2, 1)
                 .dilation(1, 2)
                 .nOut(4)
                 .hasBias(false)
                 .name("c1")
                 .leakyReluAlpha(0.2)
                 .build())
      .layer(SubsamplingLayer::Builder(PoolingType::AVG, 2, 2, 1, 1)
                 .padding(1, 0)
                 .convolutionMode(ConvolutionMode::Truncate)
                 .build())
      .layer(ConvolutionLayer::Builder(2, 2)
                 .padding(1, 1)
                 .convolutionMode(ConvolutionMode::Truncate)
                 .nOut(3)
                 .activation(Activation::SIGMOID)
                 .weightInit(WeightInit::NORMAL)
                 .updater(Nesterovs(0.3, 0.5))
                 .l2(0.5)
                 .l2Bias(0.25)
                 .biasInit(-1)
                 .build())
      .layer(DenseLayer::Builder()
                 .nOut(7)
                 .activation(Activation::TANH)
                 .updater(NoOp())
                 .biasUpdater(Sgd(0.7))
                 .weightInit(WeightInit::ZERO)
                 .build())
      .layer(OutputLayer::Builder(LossFunction::XENT)
                 .nOut(2)
                 .activation(Activation::SIGMOID)
                 .hasBias(false)
                 .weightInit(WeightInit::UNIFORM)
                 .build())
      .setInputType(InputType::convolutional(9, 8, 2))
      .build();
}

// Every updater of issue 19, l1, weight decay and gradient normalisation, network-wide and per
// layer, each away from its default.
MultiLayerConfiguration everyRegularizationField() {
  return NeuralNetConfiguration::Builder()
      .seed(31)
      .updater(AMSGrad(3e-3, 0.85, 0.995, 1e-7))
      .biasUpdater(AdaDelta(0.9, 1e-5))
      .l1(1e-4)
      .l1Bias(2e-4)
      .weightDecay(3e-4)
      .weightDecayBias(4e-4, false)
      .gradientNormalization(GradientNormalization::ClipL2PerParamType)
      .gradientNormalizationThreshold(2.5)
      .list()
      .layer(DenseLayer::Builder()
                 .nIn(5)
                 .nOut(4)
                 .updater(AdaGrad(0.2, 1e-5))
                 .biasUpdater(AdaDelta(0.85, 1e-5))
                 .l1(0.5)
                 .l1Bias(0.25)
                 .weightDecay(0.125, false)
                 .weightDecayBias(0.0625)
                 .gradientNormalization(GradientNormalization::RenormalizeL2PerLayer)
                 .gradientNormalizationThreshold(0.75)
                 .build())
      .layer(DenseLayer::Builder()
                 .nOut(4)
                 .updater(AdaMax(0.02, 0.7, 0.9, 1e-6))
                 .gradientNormalization(GradientNormalization::ClipElementWiseAbsoluteValue)
                 .build())
      .layer(DenseLayer::Builder()
                 .nOut(4)
                 .updater(Nadam(0.03, 0.75, 0.95, 1e-5))
                 .gradientNormalization(GradientNormalization::ClipL2PerLayer)
                 .build())
      .layer(DenseLayer::Builder()
                 .nOut(4)
                 .gradientNormalization(GradientNormalization::RenormalizeL2PerParamType)
                 .build())
      .layer(OutputLayer::Builder(LossFunction::MSE)
                 .nOut(2)
                 .gradientNormalization(GradientNormalization::None)
                 .build())
      .build();
}

// Every schedule type, on the learning rate of every updater that has one and on Nesterovs'
// momentum, by iteration and by epoch.
MultiLayerConfiguration everySchedule() {
  constexpr ScheduleType kIteration = ScheduleType::ITERATION, kEpoch = ScheduleType::EPOCH;
  auto dense = [](const UpdaterParams& u) { return DenseLayer::Builder().nOut(3).updater(u); };
  return NeuralNetConfiguration::Builder()
      .updater(Nesterovs(StepSchedule(kIteration, 0.1, 0.5, 3),
                         MapSchedule(kEpoch, {{0, 0.5}, {10, 0.9}})))
      .biasUpdater(Sgd(MapSchedule::Builder(kIteration).add(0, 0.2).add(7, 0.02).build()))
      .list()
      .layer(dense(Adam(ExponentialSchedule(kEpoch, 0.01, 0.9))).nIn(4).build())
      .layer(dense(RmsProp(InverseSchedule(kIteration, 0.05, 0.25, 0.75))).build())
      .layer(dense(AdaGrad(PolySchedule(kEpoch, 0.1, -2, 40))).build())
      .layer(dense(AdaMax(SigmoidSchedule(kIteration, 0.02, 0.1, 50))).build())
      .layer(dense(Nadam(CycleSchedule(kIteration, 0.001, 0.01, 100, 10, 0.5))).build())
      .layer(dense(AMSGrad(CosineWarmupSchedule(kEpoch, 0.01, 0.001, 2, 20))).build())
      .layer(OutputLayer::Builder(LossFunction::MSE).nOut(2).build())
      .build();
}

// `json` without the field `key` in any object (with the comma that separated it).
std::string withoutField(std::string json, const std::string& key) {
  for (size_t at; (at = json.find("\"" + key + "\":")) != std::string::npos;) {
    const size_t valueBegin = json.find_first_not_of(' ', at + key.size() + 3);
    const size_t valueEnd = json[valueBegin] == '{' ? json.find('}', valueBegin) + 1
                                                    : json.find_first_of(",\n", valueBegin);
    if (json[valueEnd] == ',')
      json.erase(at, json.find_first_not_of(" \n", valueEnd + 1) - at);
    else  // the object's last field: the comma before it goes
      json.erase(json.rfind(',', at), valueEnd - json.rfind(',', at));
  }
  return json;
}

std::string configError(const std::string& json) {
  try {
    MultiLayerConfiguration::fromJson(json);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

// toJson() with the first occurrence of `from` replaced by `to`.
std::string edited(const std::string& json, const std::string& from, const std::string& to) {
  const auto at = json.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return json.substr(0, at) + to + json.substr(at + from.size());
}

// `depth` arrays, one inside the other; `depth` objects likewise.
std::string nestedArrays(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }
std::string nestedObjects(size_t depth) {
  std::string json;
  for (size_t i = 0; i < depth; ++i) json += "{\"a\":";
  return json + "0" + std::string(depth, '}');
}

// LeNet's JSON with one more field, which fromJson() ignores, holding `value`.
std::string withExtraField(const std::string& value) {
  return edited(samples::lenetConfiguration().toJson(), "\"seed\": 123,",
                "\"seed\": 123, \"extra\": " + value + ",");
}

}  // namespace

TEST_SUITE("nn.conf.json") {
  TEST_CASE("toJson/fromJson round-trips LeNet and a configuration setting every field") {
    for (const MultiLayerConfiguration& conf : {samples::lenetConfiguration(), everyField()}) {
      const std::string json = conf.toJson();
      const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(json);
      CHECK(parsed == conf);
      CHECK(parsed.toJson() == json);
      CHECK(parsed.summary() == conf.summary());
      CHECK(parsed.seed == conf.seed);
    }
    // Different configurations differ.
    CHECK_FALSE(samples::lenetConfiguration() == everyField());
  }

  TEST_CASE("the JSON is human-readable, with DL4J's enum names and resolved defaults") {
    const std::string json = everyField().toJson();
    CHECK(json.find("\"type\": \"ConvolutionLayer\"") != std::string::npos);
    CHECK(json.find("\"activation\": \"LEAKYRELU\"") != std::string::npos);
    CHECK(json.find("\"convolutionMode\": \"Same\"") != std::string::npos);
    CHECK(json.find("\"poolingType\": \"AVG\"") != std::string::npos);
    CHECK(json.find("\"lossFunction\": \"XENT\"") != std::string::npos);
    CHECK(json.find("\"type\": \"NESTEROVS\"") != std::string::npos);
    CHECK(json.find("\n  \"layers\": [") != std::string::npos);  // indented, one field per line
  }

  TEST_CASE("fromJson errors name the JSON path and the problem") {
    const std::string json = samples::lenetConfiguration().toJson();
    // MISH: one of DL4J's activations dl4cpp does not have.
    const std::string unknownEnum = configError(edited(json, "\"IDENTITY\"", "\"MISH\""));
    CHECK(unknownEnum.find("$.layers[0].activation") != std::string::npos);
    CHECK(unknownEnum.find("MISH") != std::string::npos);

    const std::string missing = configError(edited(json, "\"seed\": 123,", ""));
    CHECK(missing.find("$: missing field \"seed\"") != std::string::npos);

    const std::string wrongType = configError(edited(json, "\"nOut\": 20", "\"nOut\": \"20\""));
    CHECK(wrongType.find("$.layers[0].nOut") != std::string::npos);
    CHECK(wrongType.find("expected an integer") != std::string::npos);

    const std::string negative = configError(edited(json, "\"nOut\": 20", "\"nOut\": -20"));
    CHECK(negative.find("$.layers[0].nOut") != std::string::npos);

    const std::string huge = configError(edited(json, "\"nOut\": 20", "\"nOut\": 99999999999"));
    CHECK(huge.find("$.layers[0].nOut") != std::string::npos);

    const std::string kernel =
        configError(edited(json, "\"kernel\": [\n        5,", "\"kernel\": [\n        true,"));
    CHECK(kernel.find("$.layers[0].kernel[0]") != std::string::npos);
    const std::string frozen = configError(edited(json, "\"frozen\": false", "\"frozen\": 1"));
    CHECK(frozen.find("$.layers[0].frozen: expected true or false") != std::string::npos);

    const std::string layerType = configError(edited(json, "\"DenseLayer\"", "\"NoSuchLayer\""));
    CHECK(layerType.find("$.layers[4].type") != std::string::npos);

    // A stored derived value that disagrees with what the builder derives.
    const std::string derived = configError(
        edited(json, "\"outputType\": {\n    \"kind\": \"FeedForward\",\n    \"size\": 10",
               "\"outputType\": {\n    \"kind\": \"FeedForward\",\n    \"size\": 11"));
    CHECK(derived.find("$.outputType") != std::string::npos);

    CHECK(configError("{\"seed\": ").find("not valid JSON") != std::string::npos);
    // A number beyond double's range is bad input too (nlohmann reports it as out_of_range).
    CHECK(configError(edited(json, "\"l2\": 0.0005", "\"l2\": 1e999")).find("not valid JSON") !=
          std::string::npos);
    CHECK(configError("[]").find("$") != std::string::npos);
    // An invalid layer combination is rejected by the builder, as when built in code.
    CHECK(configError(edited(json, "\"nIn\": 1,", "\"nIn\": 3,")).find("$.layers") !=
          std::string::npos);
  }

  TEST_CASE("weight-init distributions and every enum name round-trip through JSON") {
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .weightInit(UniformDistribution(-0.25, 0.5))
            .list()
            .layer(DenseLayer::Builder()
                       .nIn(3)
                       .nOut(4)
                       .weightInit(NormalDistribution(0.1, 0.02))
                       .build())
            .layer(DenseLayer::Builder().nOut(4).weightInit(WeightInit::LECUN_UNIFORM).build())
            .layer(DenseLayer::Builder().nOut(4).build())
            .layer(OutputLayer::Builder(LossFunction::KL_DIVERGENCE)
                       .nOut(2)
                       .activation(Activation::SOFTMAX)
                       .weightInit(WeightInit::ONES)
                       .build())
            .build();
    const std::string json = conf.toJson();
    CHECK(json.find("\"weightInit\": {\n        \"distribution\": \"NORMAL\",\n        \"mean\": "
                    "0.1,\n        \"std\": 0.02\n      }") != std::string::npos);
    CHECK(json.find("\"distribution\": \"UNIFORM\"") != std::string::npos);
    CHECK(json.find("\"lower\": -0.25") != std::string::npos);
    CHECK(json.find("\"weightInit\": \"LECUN_UNIFORM\"") != std::string::npos);
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(json);
    CHECK(parsed == conf);
    CHECK((*parsed.layers[0]->weightInit == NormalDistribution(0.1, 0.02)));
    CHECK((*parsed.layers[2]->weightInit == UniformDistribution(-0.25, 0.5)));  // inherited
    CHECK((parsed.defaults.weightInit == UniformDistribution(-0.25, 0.5)));

    // Every activation, loss and weight-init name reads back as itself.
    const std::string base = samples::lenetConfiguration().toJson();
    for (const auto& [kind, name] : kActivationNames) {
      const MultiLayerConfiguration c = MultiLayerConfiguration::fromJson(edited(
          base, "\"activation\": \"IDENTITY\"", std::string("\"activation\": \"") + name + "\""));
      CHECK((c.layers[0]->resolvedActivation() == kind));
    }
    for (const auto& [scheme, name] : kWeightInitNames) {  // the defaults' comes first
      const MultiLayerConfiguration c = MultiLayerConfiguration::fromJson(edited(
          base, "\"weightInit\": \"XAVIER\"", std::string("\"weightInit\": \"") + name + "\""));
      CHECK((c.defaults.weightInit == scheme));
    }
    for (const auto& [loss, name] : kLossNames) {
      const std::string lossName = name;
      CAPTURE(lossName);
      const auto output = [&](Activation activation) {
        return NeuralNetConfiguration::Builder()
            .list()
            .layer(OutputLayer::Builder(loss).nIn(2).nOut(2).activation(activation).build())
            .build();
      };
      const MultiLayerConfiguration c =
          output(loss == LossFunction::XENT ? Activation::SIGMOID : Activation::SOFTMAX);
      CHECK(MultiLayerConfiguration::fromJson(c.toJson()) == c);
      CHECK(c.toJson().find(std::string("\"lossFunction\": \"") + name + "\"") !=
            std::string::npos);
    }
  }

  TEST_CASE("fromJson: a bad weight-init distribution is a ConfigError naming its path") {
    const std::string json = NeuralNetConfiguration::Builder()
                                 .list()
                                 .layer(OutputLayer::Builder(LossFunction::MSE)
                                            .nIn(2)
                                            .nOut(2)
                                            .weightInit(NormalDistribution(0, 0.5))
                                            .build())
                                 .build()
                                 .toJson();
    const std::string negative = configError(edited(json, "\"std\": 0.5", "\"std\": -1"));
    CHECK(negative.find("$.layers[0].weightInit: std must be finite and >= 0, got -1") !=
          std::string::npos);
    const std::string kind =
        configError(edited(json, "\"distribution\": \"NORMAL\"", "\"distribution\": \"GAMMA\""));
    CHECK(kind.find("$.layers[0].weightInit.distribution") != std::string::npos);
    CHECK(kind.find("unknown value \"GAMMA\" (expected one of NORMAL, UNIFORM)") !=
          std::string::npos);
    const std::string missing =
        configError(edited(json, "\"distribution\": \"NORMAL\"", "\"distribution\": \"UNIFORM\""));
    CHECK(missing.find("$.layers[0].weightInit: missing field \"lower\"") != std::string::npos);
    const std::string wrongType = configError(edited(json, "\"std\": 0.5", "\"std\": \"wide\""));
    CHECK(wrongType.find("$.layers[0].weightInit.std: expected a number") != std::string::npos);
    const std::string defaults =
        configError(edited(json, "\"weightInit\": \"XAVIER\"", "\"weightInit\": [1, 2]"));
    CHECK(defaults.find("$.defaults.weightInit") != std::string::npos);
  }

  TEST_CASE("toJson/fromJson round-trips every updater, l1, weight decay and normalisation") {
    const MultiLayerConfiguration conf = everyRegularizationField();
    const std::string json = conf.toJson();
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(json);
    CHECK(parsed == conf);
    CHECK(parsed.toJson() == json);
    for (const char* text :
         {"\"type\": \"AMSGRAD\"", "\"type\": \"ADADELTA\"", "\"type\": \"ADAGRAD\"",
          "\"type\": \"ADAMAX\"", "\"type\": \"NADAM\"", "\"rho\": 0.9",
          "\"gradientNormalization\": \"ClipL2PerParamType\"",
          "\"gradientNormalization\": \"RenormalizeL2PerLayer\"",
          "\"gradientNormalization\": \"ClipElementWiseAbsoluteValue\"",
          "\"gradientNormalizationThreshold\": 0.75", "\"applyLR\": false", "\"l1Bias\": 0.25"}) {
      CAPTURE(text);
      CHECK(json.find(text) != std::string::npos);
    }
    // Each field is read back into the layer that has it, not just written.
    const Layer& first = *parsed.layers[0];
    CHECK(first.updater->kind == UpdaterKind::ADAGRAD);
    CHECK(first.updater->epsilon == 1e-5);
    CHECK(first.biasUpdater->kind == UpdaterKind::ADADELTA);
    CHECK(first.biasUpdater->rho == 0.85);
    CHECK(*first.l1 == 0.5);
    CHECK(*first.l1Bias == 0.25);
    CHECK(first.weightDecay->coeff == 0.125);
    CHECK_FALSE(first.weightDecay->applyLR);
    CHECK(first.weightDecayBias->coeff == 0.0625);
    CHECK(first.weightDecayBias->applyLR);
    CHECK((*first.gradientNormalization == GradientNormalization::RenormalizeL2PerLayer));
    CHECK(*first.gradientNormalizationThreshold == 0.75);
    const Layer& last = *parsed.layers[4];
    CHECK(*last.l1 == 1e-4);
    CHECK(last.weightDecayBias->coeff == 4e-4);
    CHECK_FALSE(last.weightDecayBias->applyLR);
    CHECK((*last.gradientNormalization == GradientNormalization::None));
    CHECK(*last.gradientNormalizationThreshold == 2.5);
    CHECK(parsed.defaults.gradientNormalizationThreshold == 2.5);
    CHECK(parsed.defaults.updater.kind == UpdaterKind::AMSGRAD);
  }

  TEST_CASE("JSON written before l1, weight decay, normalisation and rho existed still reads") {
    // Such a file has none of these fields: every one reads as DL4J's default, or as unset.
    const MultiLayerConfiguration lenet = samples::lenetConfiguration();
    std::string old = lenet.toJson();
    for (const char* key : {"l1", "l1Bias", "weightDecay", "weightDecayBias",
                            "gradientNormalization", "gradientNormalizationThreshold", "rho"})
      old = withoutField(old, key);
    REQUIRE(old.find("weightDecay") == std::string::npos);
    REQUIRE(old.find("rho") == std::string::npos);
    CHECK(MultiLayerConfiguration::fromJson(old) == lenet);
    // Without them, a configuration that set them reads differently: the fields were really read.
    CHECK_FALSE(MultiLayerConfiguration::fromJson(
                    withoutField(everyRegularizationField().toJson(), "weightDecay")) ==
                everyRegularizationField());
  }

  TEST_CASE("fromJson: bad regularisation and normalisation fields name the path or the layer") {
    const std::string json = everyRegularizationField().toJson();
    const std::string mode =
        configError(edited(json, "\"RenormalizeL2PerLayer\"", "\"RenormalizeL1PerLayer\""));
    CHECK(mode.find("$.layers[0].gradientNormalization") != std::string::npos);
    CHECK(mode.find("ClipL2PerParamType") != std::string::npos);  // the names it knows

    const std::string coeff = configError(edited(json, "\"coeff\": 0.125", "\"coeff\": \"big\""));
    CHECK(coeff.find("$.layers[0].weightDecay.coeff") != std::string::npos);
    const std::string noCoeff = configError(edited(json, "\"coeff\": 0.125,", ""));
    CHECK(noCoeff.find("$.layers[0].weightDecay: missing field \"coeff\"") != std::string::npos);
    const std::string applyLR = configError(edited(json, "\"applyLR\": false", "\"applyLR\": 0"));
    CHECK(applyLR.find("$.defaults.weightDecayBias.applyLR: expected true or false") !=
          std::string::npos);

    const std::string negative = configError(edited(json, "\"l1\": 0.5", "\"l1\": -0.5"));
    CHECK(negative.find("layer 0 (DenseLayer)") != std::string::npos);
    CHECK(negative.find("l1 must be finite and >= 0, got -0.5") != std::string::npos);

    const std::string threshold = configError(edited(
        json, "\"gradientNormalizationThreshold\": 0.75", "\"gradientNormalizationThreshold\": 0"));
    CHECK(threshold.find("gradientNormalizationThreshold") != std::string::npos);

    const std::string rho = configError(edited(json, "\"rho\": 0.85", "\"rho\": 1.5"));
    CHECK(rho.find("biasUpdater rho must be in [0, 1), got 1.5") != std::string::npos);

    const std::string updater = configError(edited(json, "\"NADAM\"", "\"NADAMW\""));
    CHECK(updater.find("$.layers[2].updater.type") != std::string::npos);
    CHECK(updater.find("AMSGRAD") != std::string::npos);
  }

  TEST_CASE("toJson/fromJson round-trips every schedule under DL4J's field names") {
    const MultiLayerConfiguration conf = everySchedule();
    const std::string json = conf.toJson();
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(json);
    CHECK(parsed == conf);
    CHECK(parsed.toJson() == json);
    for (const char* text : {"\"learningRateSchedule\": {",
                             "\"momentumSchedule\": {",
                             "\"momentumSchedule\": null",
                             "\"type\": \"StepSchedule\"",
                             "\"scheduleType\": \"ITERATION\"",
                             "\"scheduleType\": \"EPOCH\"",
                             "\"decayRate\": 0.5",
                             "\"values\": {",
                             "\"10\": 0.9",
                             "\"type\": \"ExponentialSchedule\"",
                             "\"type\": \"InverseSchedule\"",
                             "\"type\": \"PolySchedule\"",
                             "\"maxIter\": 40",
                             "\"type\": \"SigmoidSchedule\"",
                             "\"stepSize\": 50",
                             "\"type\": \"CycleSchedule\"",
                             "\"annealingDecay\": 0.5",
                             "\"type\": \"CosineWarmupSchedule\"",
                             "\"warmupSteps\": 2",
                             "\"totalSteps\": 20"}) {
      CAPTURE(text);
      CHECK(json.find(text) != std::string::npos);
    }
    // The schedules are read back into the updaters that have them.
    const UpdaterParams& nesterovs = *parsed.layers[6]->updater;  // the defaults'
    REQUIRE(nesterovs.learningRateSchedule);
    REQUIRE(nesterovs.momentumSchedule);
    CHECK(nesterovs.learningRateSchedule->valueAt(3, 0) == doctest::Approx(0.05));
    CHECK(nesterovs.momentumSchedule->valueAt(0, 10) == 0.9);
    CHECK(parsed.layers[0]->biasUpdater->learningRateSchedule->valueAt(7, 0) == 0.02);
    CHECK(std::string(parsed.layers[5]->updater->learningRateSchedule->name()) ==
          "CosineWarmupSchedule");
  }

  TEST_CASE("JSON written before schedules existed still reads") {
    const MultiLayerConfiguration lenet = samples::lenetConfiguration();
    const std::string old =
        withoutField(withoutField(lenet.toJson(), "learningRateSchedule"), "momentumSchedule");
    REQUIRE(old.find("Schedule") == std::string::npos);
    CHECK(MultiLayerConfiguration::fromJson(old) == lenet);
  }

  TEST_CASE("fromJson: a bad schedule is a ConfigError naming its path and parameter") {
    const std::string json = everySchedule().toJson();
    const std::string path = "$.defaults.updater.learningRateSchedule";
    const std::string type = configError(edited(json, "\"StepSchedule\"", "\"StepDecay\""));
    CHECK(type.find(path + ".type: unknown value \"StepDecay\"") != std::string::npos);
    CHECK(type.find("CosineWarmupSchedule") != std::string::npos);  // the names it knows
    const std::string step = configError(edited(json, "\"step\": 3.0", "\"step\": 0"));
    CHECK(step.find(path + ": StepSchedule: step must be finite and > 0, got 0") !=
          std::string::npos);
    const std::string missing = configError(edited(json, "\"decayRate\": 0.5,", ""));
    CHECK(missing.find(path + ": missing field \"decayRate\"") != std::string::npos);
    const std::string scheduleType = configError(edited(json, "\"EPOCH\"", "\"BATCH\""));
    CHECK(scheduleType.find("$.defaults.updater.momentumSchedule.scheduleType") !=
          std::string::npos);
    const std::string position = configError(edited(json, "\"10\": 0.9", "\"ten\": 0.9"));
    CHECK(position.find("$.defaults.updater.momentumSchedule.values: position \"ten\" is not an "
                        "integer") != std::string::npos);
    const std::string value = configError(edited(json, "\"10\": 0.9", "\"10\": \"0.9\""));
    CHECK(value.find("$.defaults.updater.momentumSchedule.values[\"10\"]: expected a number") !=
          std::string::npos);
    const std::string noStart = configError(edited(json, "\"0\": 0.5,", ""));
    CHECK(noStart.find("$.defaults.updater.momentumSchedule: MapSchedule: values must hold a "
                       "value at position 0") != std::string::npos);
    const std::string negative = configError(edited(json, "\"maxIter\": 40", "\"maxIter\": -40"));
    CHECK(negative.find(".learningRateSchedule.maxIter: must be between 0 and") !=
          std::string::npos);
    const std::string notObject =
        configError(edited(json, "\"momentumSchedule\": null", "\"momentumSchedule\": 0.9"));
    CHECK(notObject.find("momentumSchedule: expected an object, got number 0.9") !=
          std::string::npos);
    // Valid JSON for a schedule the updater cannot take: the layer's check names it (layer 0's
    // Adam).
    const size_t layers = json.find("\"layers\"");
    const std::string onAdam =
        configError(json.substr(0, layers) +
                    edited(json.substr(layers), "\"momentumSchedule\": null",
                           "\"momentumSchedule\": {\"type\": \"MapSchedule\", \"scheduleType\": "
                           "\"EPOCH\", \"values\": {\"0\": 0.5}}"));
    CHECK(onAdam.find("layer 0 (DenseLayer): updater MapSchedule on the momentum: only Nesterovs "
                      "has a momentum") != std::string::npos);
  }

  TEST_CASE("fromJson refuses JSON nested deeper than 64 levels before anything recurses") {
    // 100,000 levels overflowed the stack in the message for a wrong type (a recursive dump()).
    for (const std::string& json :
         {nestedArrays(100'000), nestedObjects(100'000),
          edited(samples::lenetConfiguration().toJson(), "123", nestedArrays(100'000))}) {
      const std::string message = configError(json);
      CAPTURE(message);
      CHECK(message.find("nested more than 64 levels deep") != std::string::npos);
    }
    // The limit counts every container, the configuration's own included (it nests 4 deep).
    CHECK(MultiLayerConfiguration::fromJson(withExtraField(nestedArrays(63))) ==
          samples::lenetConfiguration());
    CHECK(configError(withExtraField(nestedArrays(64))).find("nested more than 64") !=
          std::string::npos);
  }

  TEST_CASE("fromJson messages describe wrong values without printing them whole") {
    const std::string json = samples::lenetConfiguration().toJson();
    const std::string nested =
        configError(edited(json, "\"nOut\": 20", "\"nOut\": " + nestedArrays(50)));
    CHECK(nested.find("$.layers[0].nOut: expected an integer, got an array of 1 elements") !=
          std::string::npos);
    const std::string object =
        configError(edited(json, "\"nOut\": 20", "\"nOut\": {\"a\": [1, 2], \"b\": {}}"));
    CHECK(object.find("got an object of 2 fields") != std::string::npos);
    // A megabyte of text, with a quote and bytes that are not ASCII: cut, escaped, one line.
    const std::string longName = configError(
        edited(json, "\"IDENTITY\"", "\"\\\"\u00e9" + std::string(1 << 20, 'x') + "\""));
    CHECK(longName.find("unknown value \"\\x22\\xc3\\xa9xxx") != std::string::npos);
    CHECK(longName.size() < 400);
    const std::string layerType =
        configError(edited(json, "\"DenseLayer\"", "\"" + std::string(1000, 'L') + "\""));
    CHECK(layerType.find("unknown layer type \"LLL") != std::string::npos);
    // The message lists the registered types, a list that grows with the library: bounded apart
    // from it, and far shorter than the 1000-byte name.
    size_t registered = 0;
    for (const std::string& name : LayerRegistry::instance().typeNames())
      registered += name.size() + 2;
    CHECK(layerType.size() < 400 + registered);
    CHECK(layerType.find(std::string(200, 'L')) == std::string::npos);
  }

  TEST_CASE("fromJson: the parser's message about bad JSON is escaped and bounded") {
    // nlohmann-json quotes the token it stopped at, whole: here a string of 100,000 bytes ending
    // in a byte that is not UTF-8 (which it passes on raw).
    const std::string message =
        configError("{\"format\": \"" + std::string(100000, 'z') + "\xff\"}");
    CHECK(message.find("not valid JSON") != std::string::npos);
    CHECK(message.find("zzzz") != std::string::npos);
    CHECK(message.find('\xff') == std::string::npos);
    CHECK(message.size() < 400);
    const std::string shortOne = configError("{\"format\": \"\xff\"}");
    CHECK(shortOne.find("\\xff") != std::string::npos);
    CHECK(shortOne.find('\xff') == std::string::npos);
  }

  TEST_CASE("fromJson refuses more than 16 MiB of JSON before parsing it") {
    const std::string message =
        configError(withExtraField("\"" + std::string(16 << 20, 'x') + "\""));
    CHECK(message.find("more than the 16777216 a configuration may have") != std::string::npos);
    // Just under the limit: parsed, the long field ignored.
    const std::string base = withExtraField("\"\"");
    const std::string largest =
        withExtraField("\"" + std::string((16 << 20) - base.size(), 'x') + "\"");
    CHECK(largest.size() == size_t{16} << 20);
    CHECK(MultiLayerConfiguration::fromJson(largest) == samples::lenetConfiguration());
  }

  TEST_CASE("fromJson parses an object of many keys in linear time") {
    // Objects kept in key order (ordered_json) are searched linearly: 300,000 keys took minutes.
    std::string keys = "{";
    for (int i = 0; i < 300'000; ++i) keys += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
    const auto start = std::chrono::steady_clock::now();
    CHECK(MultiLayerConfiguration::fromJson(withExtraField(keys + "}")) ==
          samples::lenetConfiguration());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  }

  TEST_CASE("a dense layer's nIn may exceed the 2^20 of one extent: a flattened image's values") {
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(OutputLayer::Builder().nOut(2).build())
            .setInputType(InputType::convolutionalFlat(1024, 1024, 3))
            .build();
    CHECK(MultiLayerConfiguration::fromJson(conf.toJson()) == conf);
  }

  TEST_CASE("toJson rejects a layer name that is not UTF-8 with a ConfigError") {
    auto conf = NeuralNetConfiguration::Builder()
                    .list()
                    .layer(OutputLayer::Builder().nIn(2).nOut(2).name("bad\xff").build())
                    .build();
    CHECK_THROWS_AS(conf.toJson(), ConfigError);
  }

}  // TEST_SUITE

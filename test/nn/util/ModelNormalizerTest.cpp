// A normalizer saved in the model file with the network (section NORM, docs/model-format.md):
// round trips, the documented payload layout, older files, and every way a hostile file can get
// the section wrong.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "TempDir.h"
#include "TestPaths.h"
#include "nn/core/AtomicFile.h"
#include "nn/core/Error.h"
#include "nn/util/ModelFileTestUtil.h"

using namespace dl4cpp;
using namespace testutil;

namespace {

const std::filesystem::path kFixtureV1 = testutil::testDataDir() / "model-v1.dl4cpp";

MultiLayerNetwork convNet() {  // input ConvolutionalFlat(6x6x1)
  MultiLayerNetwork net(smallConvNet(Adam(0.01)));
  net.init();
  net.fit(convBatch(0));
  return net;
}

// smallConvNet's features as (N, 1, 6, 6) images, for a per-channel fit.
std::vector<DataSet> imageBatches() {
  std::vector<DataSet> out;
  for (int i = 0; i < 3; ++i) {
    const DataSet flat = convBatch(i);
    out.emplace_back(flat.features.reshape(Shape{4, 1, 6, 6}), flat.labels);
  }
  return out;
}

// An iterator over prepared batches.
class Batches : public DataSetIterator {
 public:
  explicit Batches(std::vector<DataSet> data) : data_(std::move(data)) {}
  bool hasNext() override { return next_ < data_.size(); }
  DataSet next() override { return data_.at(next_++).copy(); }
  void reset() override { next_ = 0; }
  int batch() const override { return 4; }
  int64_t inputColumns() const override { return 36; }
  int totalOutcomes() const override { return 3; }

 private:
  std::vector<DataSet> data_;
  size_t next_ = 0;
};

std::shared_ptr<NormalizerStandardize> perChannelStandardize() {
  Batches images(imageBatches());
  auto n = std::make_shared<NormalizerStandardize>();
  n->fit(images);
  return n;
}

std::shared_ptr<NormalizerMinMaxScaler> perColumnMinMax() {
  Batches flat({convBatch(0), convBatch(1)});
  auto n = std::make_shared<NormalizerMinMaxScaler>(-1, 1);
  n->fit(flat);
  return n;
}

// What `normalizer` makes of a batch of smallConvNet's input.
std::vector<float> normalizedInput(const DataNormalization& normalizer) {
  Tensor x = convBatch(5).features.clone();
  normalizer.transformInput(x, InputType::convolutionalFlat(6, 6, 1));
  return x.toVector();
}

// Little-endian bytes, written independently of the code under test.
struct Bytes {
  std::vector<std::byte> b;
  Bytes& u32(uint64_t v) { return le(v, 4); }
  Bytes& u64(uint64_t v) { return le(v, 8); }
  Bytes& f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return le(bits, 8);
  }
  Bytes& le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
    return *this;
  }
};

double f64At(const std::vector<std::byte>& b, size_t at) {
  const uint64_t bits = readLe(b, at, 8);
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

// A file of `net` (no updater) whose NORM section holds `payload`.
std::vector<std::byte> withNormPayload(const MultiLayerNetwork& net,
                                       const std::vector<std::byte>& payload,
                                       uint32_t version = ModelSerializer::kFormatVersion) {
  auto p = parts(ModelSerializer::toBytes(net, false));
  p.insert(p.end() - 1, {"NORM", payload});
  return assemble(p, version);
}

ModelAndNormalizer restore(const std::vector<std::byte>& bytes) {
  return ModelSerializer::restoreModelAndNormalizerFromBytes(bytes, true, "test.dl4cpp");
}

// A normalizer class the file format does not know.
class Doubler : public DataNormalization {
 public:
  void fit(DataSetIterator&) override {}
  bool isFitted() const override { return true; }
  void transform(DataSet& batch) const override {
    for (int64_t i = 0; i < batch.features.numel(); ++i) batch.features.data()[i] *= 2;
  }
  void requireInput(const InputType&) const override {}
  void transformInput(Tensor&, const InputType&) const override {}
  std::unique_ptr<DataNormalization> clone() const override {
    return std::make_unique<Doubler>(*this);
  }
};

}  // namespace

TEST_SUITE("nn.util.ModelSerializer") {
  TEST_CASE("a normalizer saved with the network comes back with it, transforming bit for bit") {
    const MultiLayerNetwork net = convNet();
    const std::vector<std::shared_ptr<DataNormalization>> normalizers = {
        perChannelStandardize(), perColumnMinMax(),
        std::make_shared<ImagePreProcessingScaler>(-0.5, 0.5, 10)};
    for (const auto& normalizer : normalizers) {
      const std::vector<std::byte> file = ModelSerializer::toBytes(net, true, normalizer.get());
      const std::vector<Section> s = sections(file);
      REQUIRE(s.size() == 5);
      CHECK(s[3].tag == "NORM");  // after UPDT (and STAT), before CNTR
      CHECK(s[4].tag == "CNTR");
      CHECK(readLe(file, 8, 4) == ModelSerializer::kFormatVersion);

      const ModelAndNormalizer restored = restore(file);
      REQUIRE(restored.normalizer);
      CHECK(bitIdentical(values(restored.model.params()), values(net.params())));
      CHECK(bitIdentical(values(restored.model.updaterState()), values(net.updaterState())));
      CHECK(bitIdentical(normalizedInput(*restored.normalizer), normalizedInput(*normalizer)));
      // Saved again, the same bytes: nothing of the normalizer was lost.
      CHECK(ModelSerializer::toBytes(restored.model, true, restored.normalizer.get()) == file);
      // The network alone can still be restored from the file.
      CHECK(bitIdentical(values(ModelSerializer::restoreFromBytes(file).params()),
                         values(net.params())));
    }
    const auto standardize = std::dynamic_pointer_cast<NormalizerStandardize>(
        restore(ModelSerializer::toBytes(net, false, normalizers[0].get())).normalizer);
    REQUIRE(standardize);
    CHECK(standardize->getFeatureStats().grouping == FeatureGrouping::Channels);
    CHECK(standardize->getMean() ==
          std::dynamic_pointer_cast<NormalizerStandardize>(normalizers[0])->getMean());

    // Through files, as DL4J's API names it.
    TempDir dir;
    ModelSerializer::writeModel(net, dir / "m.dl4cpp", false, normalizers[1].get());
    const ModelAndNormalizer fromFile =
        ModelSerializer::restoreMultiLayerNetworkAndNormalizer(dir / "m.dl4cpp");
    CHECK(fromFile.model.getConfiguration() == net.getConfiguration());
    CHECK(bitIdentical(normalizedInput(*fromFile.normalizer), normalizedInput(*normalizers[1])));
    const auto minMax = std::dynamic_pointer_cast<NormalizerMinMaxScaler>(
        ModelSerializer::restoreNormalizerFromFile(dir / "m.dl4cpp"));
    REQUIRE(minMax);
    CHECK(minMax->getTargetMin() == -1);
    CHECK(minMax->getMax() ==
          std::dynamic_pointer_cast<NormalizerMinMaxScaler>(normalizers[1])->getMax());
  }

  TEST_CASE("the NORM payload has the documented layout") {
    const MultiLayerNetwork net = convNet();
    FeatureStatistics stats;
    stats.grouping = FeatureGrouping::Channels;
    stats.mean = {0.25};
    stats.std = {1.5};
    NormalizerStandardize standardize;
    standardize.setFeatureStats(stats);
    const std::vector<std::byte> standardized = ModelSerializer::toBytes(net, false, &standardize);
    CHECK(sections(standardized)[2].payload(standardized) ==
          Bytes().u32(1).u32(1).u64(1).f64(0.25).f64(1.5).b);

    stats.grouping = FeatureGrouping::Columns;
    stats.min.assign(36, -2);
    stats.max.assign(36, 3);
    NormalizerMinMaxScaler minMax(-1, 1);
    minMax.setFeatureStats(stats);
    const std::vector<std::byte> file = ModelSerializer::toBytes(net, false, &minMax);
    const std::vector<std::byte> p = sections(file)[2].payload(file);
    REQUIRE(p.size() == 4 + 16 + 4 + 8 + 36 * 16);
    CHECK(readLe(p, 0, 4) == 2);
    CHECK(f64At(p, 4) == -1);
    CHECK(f64At(p, 12) == 1);
    CHECK(readLe(p, 20, 4) == 0);  // per column
    CHECK(readLe(p, 24, 8) == 36);
    CHECK(f64At(p, 32) == -2);          // min[0]
    CHECK(f64At(p, 32 + 36 * 8) == 3);  // max[0]

    const ImagePreProcessingScaler scaler(0, 2, 12);
    const std::vector<std::byte> scaled = ModelSerializer::toBytes(net, false, &scaler);
    CHECK(sections(scaled)[2].payload(scaled) == Bytes().u32(3).f64(0).f64(2).u32(12).b);
  }

  TEST_CASE("files without a normalizer, the version-1 fixture included, restore none") {
    TempDir dir;
    convNet().save(dir / "plain.dl4cpp");
    CHECK(ModelSerializer::restoreNormalizerFromFile(dir / "plain.dl4cpp") == nullptr);
    const ModelAndNormalizer v1 =
        ModelSerializer::restoreMultiLayerNetworkAndNormalizer(kFixtureV1);
    CHECK(v1.normalizer == nullptr);
    CHECK(v1.model.getIterationCount() == 7);
  }

  TEST_CASE("addNormalizerToModel adds or replaces the normalizer, the rest unchanged") {
    TempDir dir;
    const MultiLayerNetwork net = convNet();
    const auto first = perColumnMinMax();
    const ImagePreProcessingScaler second;
    for (bool updater : {false, true}) {
      CAPTURE(updater);
      net.save(dir / "m.dl4cpp", updater);
      ModelSerializer::addNormalizerToModel(dir / "m.dl4cpp", *first);
      CHECK(readWholeFile(dir / "m.dl4cpp") == ModelSerializer::toBytes(net, updater, first.get()));
      ModelSerializer::addNormalizerToModel(dir / "m.dl4cpp", second);
      CHECK(readWholeFile(dir / "m.dl4cpp") == ModelSerializer::toBytes(net, updater, &second));
    }

    // An older file is written again in the current version, its network unchanged.
    std::filesystem::copy_file(kFixtureV1, dir / "v1.dl4cpp");
    const MultiLayerNetwork before = MultiLayerNetwork::load(kFixtureV1);
    ModelSerializer::addNormalizerToModel(dir / "v1.dl4cpp", second);
    CHECK(readLe(readWholeFile(dir / "v1.dl4cpp"), 8, 4) == ModelSerializer::kFormatVersion);
    const ModelAndNormalizer after =
        ModelSerializer::restoreMultiLayerNetworkAndNormalizer(dir / "v1.dl4cpp");
    CHECK(after.normalizer != nullptr);
    CHECK(after.model.getConfiguration() == before.getConfiguration());
    CHECK(bitIdentical(values(after.model.params()), values(before.params())));
    CHECK(bitIdentical(values(after.model.updaterState()), values(before.updaterState())));
    CHECK(after.model.getIterationCount() == before.getIterationCount());
    CHECK(after.model.score() == before.score());

    // A normalizer that does not fit the network leaves the file as it was.
    FeatureStatistics threeChannels;
    threeChannels.grouping = FeatureGrouping::Channels;
    threeChannels.mean = {0, 0, 0};
    threeChannels.std = {1, 1, 1};
    NormalizerStandardize mismatched;
    mismatched.setFeatureStats(threeChannels);
    net.save(dir / "m.dl4cpp", true);
    const std::vector<std::byte> saved = readWholeFile(dir / "m.dl4cpp");
    CHECK_THROWS_AS(ModelSerializer::addNormalizerToModel(dir / "m.dl4cpp", mismatched),
                    DataMismatchError);
    CHECK(readWholeFile(dir / "m.dl4cpp") == saved);
    CHECK_THROWS_AS(ModelSerializer::addNormalizerToModel(dir / "missing.dl4cpp", second),
                    DataNotFoundError);
  }

  TEST_CASE("a normalizer that cannot be saved with the network is refused before writing") {
    const MultiLayerNetwork net = convNet();
    CHECK_THROWS_WITH_AS(
        ModelSerializer::toBytes(net, true, std::make_unique<NormalizerStandardize>().get()),
        doctest::Contains("not fitted"), ConfigError);
    CHECK_THROWS_WITH_AS(ModelSerializer::toBytes(net, true, std::make_unique<Doubler>().get()),
                         doctest::Contains("only NormalizerStandardize"), ConfigError);
    FeatureStatistics columns;
    columns.mean.assign(35, 0);
    columns.std.assign(35, 1);
    NormalizerStandardize wrongWidth;
    wrongWidth.setFeatureStats(columns);
    TempDir dir;
    CHECK_THROWS_WITH_AS(
        ModelSerializer::writeModel(net, dir / "m.dl4cpp", true, &wrongWidth),
        "NormalizerStandardize was fitted per column on features of 35 values per example; the "
        "network takes ConvolutionalFlat(6x6x1) input (36 values)",
        DataMismatchError);
    CHECK_FALSE(std::filesystem::exists(dir / "m.dl4cpp"));
  }

  TEST_CASE("a hostile NORM section is a typed error naming the file and the problem") {
    const MultiLayerNetwork net = convNet();
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    auto standardize = [](uint32_t grouping, uint64_t count, std::vector<double> values) {
      Bytes b;
      b.u32(1).u32(grouping).u64(count);
      for (double v : values) b.f64(v);
      return b.b;
    };
    const struct {
      const char* name;
      std::vector<std::byte> payload;
      const char* message;
    } formatErrors[] = {
        {"empty", {}, "the normalizer type needs 4 more bytes"},
        {"unknown type", Bytes().u32(7).b, "unknown normalizer type 7"},
        {"no grouping", Bytes().u32(1).u32(0).b, "NormalizerStandardize needs 12 more bytes"},
        {"unknown grouping", standardize(2, 1, {0, 1}), "unknown grouping 2"},
        {"short statistics", standardize(0, 2, {0, 1}),
         "NormalizerStandardize declares 2 columns or channels, which take 16 bytes each, but 16 "
         "bytes follow"},
        {"a count that overflows", standardize(0, uint64_t{1} << 60, {0, 1}),
         "NormalizerStandardize declares 1152921504606846976 columns or channels"},
        {"a byte too many",
         [&] {
           auto p = standardize(1, 1, {0, 1});
           p.push_back(std::byte{0});
           return p;
         }(),
         "NormalizerStandardize declares 1 columns or channels, which take 16 bytes each, but 17 "
         "bytes follow"},
        {"no statistics", standardize(1, 0, {}),
         "NormalizerStandardize: the statistics hold no mean"},
        {"NaN mean", standardize(1, 1, {nan, 1}),
         "NormalizerStandardize: mean[0] = nan is not a finite float value"},
        {"infinite std", standardize(1, 1, {0, inf}),
         "NormalizerStandardize: std[0] = inf is not a finite float value"},
        {"negative std", standardize(1, 1, {0, -2}),
         "NormalizerStandardize: std[0] = -2 is negative"},
        {"min above max", Bytes().u32(2).f64(0).f64(1).u32(1).u64(1).f64(5).f64(4).b,
         "NormalizerMinMaxScaler: min[0] = 5 exceeds max[0] = 4"},
        {"an empty target range", Bytes().u32(2).f64(1).f64(1).u32(1).u64(1).f64(0).f64(1).b,
         "NormalizerMinMaxScaler: the target range [1, 1]"},
        {"no target range", Bytes().u32(2).f64(0).b,
         "NormalizerMinMaxScaler's target range needs 16 more bytes"},
        {"maxBits 0", Bytes().u32(3).f64(0).f64(1).u32(0).b,
         "ImagePreProcessingScaler: maxBits must be in 1..24, got 0"},
        {"maxBits 2^32 - 1", Bytes().u32(3).f64(0).f64(1).u32(0xffffffff).b,
         "ImagePreProcessingScaler: maxBits must be in 1..24, got 4294967295"},
        {"a NaN range", Bytes().u32(3).f64(nan).f64(1).u32(8).b,
         "ImagePreProcessingScaler: the target range [nan, 1]"},
        {"a byte after the scaler", Bytes().u32(3).f64(0).f64(1).u32(8).u32(0).b,
         "4 unexpected bytes after the normalizer"},
    };
    for (const auto& bad : formatErrors) {
      INFO(bad.name);
      CHECK_THROWS_WITH_AS(
          restore(withNormPayload(net, bad.payload)),
          doctest::Contains(
              (std::string("test.dl4cpp: section NORM (normalizer): ") + bad.message).c_str()),
          DataFormatError);
    }

    // Valid normalizers that do not fit the network's input (6x6 images of 1 channel).
    const struct {
      const char* name;
      std::vector<std::byte> payload;
      const char* message;
    } mismatches[] = {
        {"35 columns", standardize(0, 35, std::vector<double>(70, 1)),
         "test.dl4cpp: section NORM: NormalizerStandardize was fitted per column on features of "
         "35 values per example; the network takes ConvolutionalFlat(6x6x1) input (36 values)"},
        {"3 channels", standardize(1, 3, std::vector<double>(6, 1)),
         "fitted per channel on rank-4 (N, C, H, W) features with 3 channels"},
    };
    for (const auto& bad : mismatches) {
      INFO(bad.name);
      CHECK_THROWS_WITH_AS(restore(withNormPayload(net, bad.payload)),
                           doctest::Contains(bad.message), DataMismatchError);
    }
    MultiLayerNetwork flat(NeuralNetConfiguration::Builder()
                               .list()
                               .layer(OutputLayer::Builder(LossFunction::MSE).nOut(2).build())
                               .setInputType(InputType::feedForward(3))
                               .build());
    flat.init();
    CHECK_THROWS_WITH_AS(
        restore(withNormPayload(flat, standardize(1, 3, std::vector<double>(6, 1)))),
        doctest::Contains("the network takes FeedForward(3) input"), DataMismatchError);
    CHECK(restore(withNormPayload(flat, standardize(0, 3, std::vector<double>(6, 1)))).normalizer);

    // The section's place in the format: from version 3 on, once, behind its checksum.
    const std::vector<std::byte> good = withNormPayload(net, standardize(1, 1, {0, 1}));
    CHECK(restore(good).normalizer);
    CHECK_THROWS_WITH_AS(restore(withNormPayload(net, standardize(1, 1, {0, 1}), 2)),
                         doctest::Contains("unknown section NORM"), DataFormatError);
    auto twice = parts(good);
    twice.insert(twice.begin(), twice[2]);
    CHECK_THROWS_WITH_AS(restore(assemble(twice)), doctest::Contains("section NORM appears twice"),
                         DataFormatError);
    const Section norm = sections(good)[2];
    REQUIRE(norm.tag == "NORM");
    for (size_t i = 0; i < norm.length; ++i) {
      std::vector<std::byte> flipped = good;
      flipped[norm.payloadOffset + i] ^= std::byte{0x10};
      CAPTURE(i);
      CHECK_THROWS_AS(restore(flipped), ChecksumError);
    }
    const std::vector<std::byte> cut(
        good.begin(), good.begin() + static_cast<std::ptrdiff_t>(norm.payloadOffset + 5));
    CHECK_THROWS_AS(restore(cut), DataTruncatedError);
  }
}

#include <doctest/doctest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "TempDir.h"
#include "TestPaths.h"
#include "nn/conf/BatchStatsTestLayer.h"
#include "nn/core/AtomicFile.h"
#include "nn/core/Error.h"
#include "nn/util/ModelFileTestUtil.h"

using namespace dl4cpp;
using namespace testutil;

namespace {

// With the default thread count, as a restored model has: oneDNN's results may depend on the
// number of threads, so bit-identical continuation compares like with like.
MultiLayerNetwork trained(const UpdaterParams& updater, int steps) {
  MultiLayerNetwork net(smallConvNet(updater));
  net.init();
  for (int i = 0; i < steps; ++i) net.fit(convBatch(i));
  return net;
}

std::vector<std::byte> fileBytes(const std::filesystem::path& p) { return readWholeFile(p); }

// The message of the dl4cpp::Error that `f` throws, after checking its dynamic type is E.
template <typename E>
std::string thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const Error& e) {
    FAIL("expected another error type, got: " << e.what());
  } catch (const std::exception& e) {
    FAIL("an exception outside dl4cpp::Error escaped: " << e.what());
  }
  FAIL("nothing was thrown");
  return {};
}

MultiLayerNetwork restore(const std::vector<std::byte>& bytes, bool loadUpdater = true) {
  return ModelSerializer::restoreFromBytes(bytes, loadUpdater, "test.dl4cpp");
}

// The version-1 fixture: smallConvNet(Adam) with parameters, updater state and counters set to
// values given by formulas, so the test can check every one of them.
const std::filesystem::path kFixtureV1 = testutil::testDataDir() / "model-v1.dl4cpp";
float fixtureParam(int64_t i) {
  return static_cast<float>(0.5 * std::sin(0.1 * static_cast<double>(i)));
}
float fixtureState(int64_t i) { return static_cast<float>(i % 7) * 0.01f; }

MultiLayerNetwork fixtureNetwork() {
  MultiLayerNetwork net(smallConvNet(Adam(0.01)), Device::cpu(), 1);
  net.init();
  Tensor p = net.params(), s = net.updaterState();
  for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] = fixtureParam(i);
  for (int64_t i = 0; i < s.numel(); ++i) s.data()[i] = fixtureState(i);
  net.setIterationCount(7);
  net.setEpochCount(2);
  net.setMinibatchesInEpoch(3);
  net.setScore(0.625);
  return net;
}

// smallConvNet's layers with l1, weight decay and a gradient normalisation mode per layer.
MultiLayerConfiguration regularizedConvNet(const UpdaterParams& updater) {
  return NeuralNetConfiguration::Builder()
      .seed(7)
      .updater(updater)
      .l1(1e-3)
      .weightDecay(1e-2)
      .weightDecayBias(1e-3, false)
      .gradientNormalization(GradientNormalization::ClipL2PerLayer)
      .gradientNormalizationThreshold(0.5)
      .list()
      .layer(ConvolutionLayer::Builder(3, 3)
                 .nOut(2)
                 .activation(Activation::RELU)
                 .gradientNormalization(GradientNormalization::ClipElementWiseAbsoluteValue)
                 .gradientNormalizationThreshold(0.01)
                 .build())
      .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
      .layer(DenseLayer::Builder()
                 .nOut(5)
                 .activation(Activation::TANH)
                 .gradientNormalization(GradientNormalization::RenormalizeL2PerParamType)
                 .build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .l1Bias(1e-3)
                 .build())
      .setInputType(InputType::convolutionalFlat(6, 6, 1))
      .build();
}

}  // namespace

TEST_SUITE("nn.util.ModelSerializer") {
  TEST_CASE("a restored model has the same configuration, counters and bit-identical output") {
    TempDir dir;
    MultiLayerNetwork net = trained(Nesterovs(0.05, 0.9), 5);
    net.setMinibatchesInEpoch(4);
    net.save(dir / "model.dl4cpp");
    MultiLayerNetwork loaded = MultiLayerNetwork::load(dir / "model.dl4cpp");

    CHECK(loaded.getConfiguration() == net.getConfiguration());
    CHECK(bitIdentical(values(loaded.params()), values(net.params())));
    CHECK(bitIdentical(values(loaded.updaterState()), values(net.updaterState())));
    CHECK(loaded.getIterationCount() == 5);
    CHECK(loaded.getEpochCount() == net.getEpochCount());
    CHECK(loaded.getMinibatchesInEpoch() == 4);
    CHECK(loaded.score() == net.score());
    const Tensor x = convBatch(11).features;
    CHECK(bitIdentical(values(loaded.output(x)), values(net.output(x))));
    // The static API is the same file.
    ModelSerializer::writeModel(net, dir / "again.dl4cpp", true);
    CHECK(fileBytes(dir / "again.dl4cpp") == fileBytes(dir / "model.dl4cpp"));
  }

  TEST_CASE("training resumed from a file with updater state continues exactly (Nesterovs, Adam)") {
    for (const UpdaterParams& updater :
         {UpdaterParams(Nesterovs(0.05, 0.9)), UpdaterParams(Adam(0.01))}) {
      CAPTURE(static_cast<int>(updater.kind));
      TempDir dir;
      MultiLayerNetwork uninterrupted = trained(updater, 4);
      uninterrupted.save(dir / "mid.dl4cpp", true);
      for (int i = 4; i < 10; ++i) uninterrupted.fit(convBatch(i));

      MultiLayerNetwork resumed = MultiLayerNetwork::load(dir / "mid.dl4cpp");
      for (int i = 4; i < 10; ++i) resumed.fit(convBatch(i));
      CHECK(resumed.getIterationCount() == 10);
      CHECK(bitIdentical(values(resumed.params()), values(uninterrupted.params())));
      CHECK(bitIdentical(values(resumed.updaterState()), values(uninterrupted.updaterState())));

      // Without the updater state only the parameters come back; training then diverges from the
      // uninterrupted run (the momentum / moment estimates restart from zero).
      for (bool saveUpdater : {true, false}) {
        MultiLayerNetwork source = trained(updater, 4);
        source.save(dir / "p.dl4cpp", saveUpdater);
        MultiLayerNetwork paramsOnly =
            ModelSerializer::restoreMultiLayerNetwork(dir / "p.dl4cpp", !saveUpdater);
        CHECK(bitIdentical(values(paramsOnly.params()), values(source.params())));
        for (float v : values(paramsOnly.updaterState())) REQUIRE(v == 0.0f);
        for (int i = 4; i < 10; ++i) paramsOnly.fit(convBatch(i));
        CHECK_FALSE(bitIdentical(values(paramsOnly.params()), values(uninterrupted.params())));
      }
      CHECK(fileBytes(dir / "p.dl4cpp").size() < fileBytes(dir / "mid.dl4cpp").size());
    }
  }

  TEST_CASE(
      "AdaGrad, AdaDelta, AdaMax, Nadam, AMSGrad with l1, weight decay and normalisation: training "
      "resumed from a file continues exactly") {
    for (const UpdaterParams& updater :
         {UpdaterParams(AdaGrad(0.05)), UpdaterParams(AdaDelta()), UpdaterParams(AdaMax(0.01)),
          UpdaterParams(Nadam(0.01)), UpdaterParams(AMSGrad(0.01))}) {
      CAPTURE(static_cast<int>(updater.kind));
      TempDir dir;
      MultiLayerNetwork uninterrupted(regularizedConvNet(updater));
      uninterrupted.init();
      for (int i = 0; i < 4; ++i) uninterrupted.fit(convBatch(i));
      uninterrupted.save(dir / "mid.dl4cpp", true);
      for (int i = 4; i < 10; ++i) uninterrupted.fit(convBatch(i));

      MultiLayerNetwork resumed = MultiLayerNetwork::load(dir / "mid.dl4cpp");
      CHECK(resumed.getConfiguration() == uninterrupted.getConfiguration());
      CHECK(resumed.updaterState().numel() == resumed.numParams() * updater.stateSizePerParam());
      for (int i = 4; i < 10; ++i) resumed.fit(convBatch(i));
      CHECK(bitIdentical(values(resumed.params()), values(uninterrupted.params())));
      CHECK(bitIdentical(values(resumed.updaterState()), values(uninterrupted.updaterState())));
      CHECK(resumed.score() == uninterrupted.score());

      // Without its updater state a model starts the state afresh, as init() does (AdaGrad's
      // history at 1e-6).
      MultiLayerNetwork paramsOnly = MultiLayerNetwork::load(dir / "mid.dl4cpp", false);
      for (float v : values(paramsOnly.updaterState()))
        REQUIRE(v == static_cast<float>(updater.initialStateValue()));
    }
  }

  TEST_CASE("training resumed from a file continues on its schedules, by iteration and epoch") {
    // The learning rate changes every iteration; the momentum at epoch 2, after the save.
    const UpdaterParams updater =
        Nesterovs(CycleSchedule(ScheduleType::ITERATION, 0.01, 0.1, 5, 1, 0.5),
                  MapSchedule(ScheduleType::EPOCH, {{0, 0.5}, {2, 0.9}}));
    const std::vector<DataSet> epoch{convBatch(0), convBatch(1), convBatch(2)};
    TempDir dir;
    MultiLayerNetwork uninterrupted(smallConvNet(updater));
    uninterrupted.init();
    ListDataSetIterator data(epoch, 4);
    uninterrupted.fit(data, 2);
    uninterrupted.save(dir / "mid.dl4cpp");
    data.reset();
    uninterrupted.fit(data, 2);

    MultiLayerNetwork resumed = MultiLayerNetwork::load(dir / "mid.dl4cpp");
    CHECK(resumed.getConfiguration() == uninterrupted.getConfiguration());
    CHECK(resumed.getIterationCount() == 6);
    CHECK(resumed.getEpochCount() == 2);
    ListDataSetIterator again(epoch, 4);
    resumed.fit(again, 2);
    CHECK(bitIdentical(values(resumed.params()), values(uninterrupted.params())));
    CHECK(bitIdentical(values(resumed.updaterState()), values(uninterrupted.updaterState())));

    // Restarted from the same parameters and state but counted from 0, the schedules replay their
    // start and the run ends elsewhere: the counts in the file matter.
    MultiLayerNetwork recounted = MultiLayerNetwork::load(dir / "mid.dl4cpp");
    recounted.setIterationCount(0);
    recounted.setEpochCount(0);
    again.reset();
    recounted.fit(again, 2);
    CHECK_FALSE(bitIdentical(values(recounted.params()), values(uninterrupted.params())));
  }

  TEST_CASE("the file layout is the documented one (independent CRC32)") {
    const MultiLayerNetwork net = trained(Adam(0.01), 2);
    const std::vector<std::byte> file = ModelSerializer::toBytes(net, true);
    CHECK(std::memcmp(file.data(), "DL4CPPM\x1a", 8) == 0);
    CHECK(readLe(file, 8, 4) == ModelSerializer::kFormatVersion);
    CHECK(readLe(file, 16, 4) == referenceCrc32(file.data(), 16));
    const std::vector<Section> s = sections(file);
    REQUIRE(s.size() == 4);
    CHECK(s[0].tag == "CONF");
    CHECK(s[1].tag == "PARM");
    CHECK(s[2].tag == "UPDT");
    CHECK(s[3].tag == "CNTR");
    CHECK(s[3].payloadOffset + s[3].length == file.size());
    for (const Section& sec : s)
      CHECK(readLe(file, sec.offset + 12, 4) ==
            referenceCrc32(file.data() + sec.payloadOffset, sec.length));
    const std::vector<std::byte> conf = s[0].payload(file);
    CHECK(std::string(reinterpret_cast<const char*>(conf.data()), conf.size()) ==
          net.getConfiguration().toJson());
    CHECK(s[1].length == static_cast<size_t>(net.numParams()) * 4);
    CHECK(s[2].length == static_cast<size_t>(net.updaterState().numel()) * 4);
    CHECK(readLe(file, s[3].payloadOffset, 8) == 2);  // iteration
    // Sections may come in any order.
    auto reordered = parts(file);
    std::swap(reordered[0], reordered[3]);
    CHECK(bitIdentical(values(restore(assemble(reordered)).params()), values(net.params())));
  }

  TEST_CASE("a flipped byte anywhere in any section is a typed error naming the problem") {
    const std::vector<std::byte> file = ModelSerializer::toBytes(trained(Adam(0.01), 1), true);
    for (const Section& s : sections(file)) {
      CAPTURE(s.tag);
      const size_t payloadProbes[] = {0, s.length / 3, s.length / 2, s.length - 1};
      for (size_t probe : payloadProbes) {
        std::vector<std::byte> bad = file;
        bad[s.payloadOffset + probe] ^= std::byte{0x40};
        const std::string message = thrown<ChecksumError>([&] { restore(bad); });
        CHECK(message.find("test.dl4cpp") != std::string::npos);
        CHECK(message.find("section " + s.tag) != std::string::npos);
      }
      // Every byte of the section header: tag (unknown section), length (truncation, checksum or
      // trailing bytes), checksum (checksum): always a dl4cpp DataError.
      for (size_t i = 0; i < kSectionHeaderSize; ++i) {
        std::vector<std::byte> bad = file;
        bad[s.offset + i] ^= std::byte{0x01};
        CAPTURE(i);
        thrown<DataError>([&] { restore(bad); });
      }
    }
    // The header: magic, version, section count, header checksum.
    for (size_t i = 0; i < kHeaderSize; ++i) {
      std::vector<std::byte> bad = file;
      bad[i] ^= std::byte{0x01};
      CAPTURE(i);
      thrown<DataError>([&] { restore(bad); });
    }
  }

  TEST_CASE("a truncated file is a DataTruncatedError at every length, boundaries included") {
    const std::vector<std::byte> file =
        ModelSerializer::toBytes(trained(Nesterovs(0.1, 0.9), 1), true);
    // Every section boundary and every offset inside the header and section headers, and a
    // stride through the payloads (every length would also pass, but takes longer).
    std::vector<size_t> lengths = {0, 1, 7, 8, 12, 16, 19, kHeaderSize};
    for (const Section& s : sections(file)) {
      for (size_t i = 0; i <= kSectionHeaderSize; ++i) lengths.push_back(s.offset + i);
      for (size_t i = 1; i < s.length; i += 1 + s.length / 17)
        lengths.push_back(s.payloadOffset + i);
      lengths.push_back(s.payloadOffset + s.length - 1);
    }
    for (size_t n : lengths) {
      REQUIRE(n < file.size());
      CAPTURE(n);
      const std::vector<std::byte> prefix(file.begin(),
                                          file.begin() + static_cast<std::ptrdiff_t>(n));
      const std::string message = thrown<DataTruncatedError>([&] { restore(prefix); });
      CHECK(message.find("truncated") != std::string::npos);
    }
    // Bytes after the last section are not silently ignored either.
    std::vector<std::byte> longer = file;
    longer.push_back(std::byte{0});
    CHECK(thrown<DataFormatError>([&] { restore(longer); }).find("unexpected bytes") !=
          std::string::npos);
  }

  TEST_CASE("foreign, future-version, inconsistent and incomplete files get their own errors") {
    const MultiLayerNetwork net = trained(Adam(0.01), 1);
    const std::vector<std::byte> file = ModelSerializer::toBytes(net, true);

    std::vector<std::byte> foreign = file;
    std::memcpy(foreign.data(), "PK\x03\x04", 4);
    CHECK(thrown<DataFormatError>([&] { restore(foreign); }).find("bad magic") !=
          std::string::npos);

    const uint32_t next = ModelSerializer::kFormatVersion + 1;
    const std::string future = thrown<VersionError>([&] { restore(assemble(parts(file), next)); });
    CHECK(future.find("version " + std::to_string(next)) != std::string::npos);
    CHECK(future.find("newer dl4cpp") != std::string::npos);
    thrown<VersionError>([&] { restore(assemble(parts(file), 0)); });
    // Versions 2 and 3 had version 4's layout: their files still read.
    CHECK(bitIdentical(values(restore(assemble(parts(file), 2)).params()), values(net.params())));
    CHECK(bitIdentical(values(restore(assemble(parts(file), 3)).params()), values(net.params())));

    // Parameters of another configuration: the count disagrees.
    auto mismatched = parts(file);
    mismatched[1].second.resize(mismatched[1].second.size() - 4);
    const std::string params = thrown<DataMismatchError>([&] { restore(assemble(mismatched)); });
    CHECK(params.find(std::to_string(net.numParams() - 1) + " parameters") != std::string::npos);
    auto badState = parts(file);
    badState[2].second.resize(badState[2].second.size() + 4);
    thrown<DataMismatchError>([&] { restore(assemble(badState)); });
    // ... unless the updater state is not asked for.
    CHECK(bitIdentical(values(restore(assemble(badState), false).params()), values(net.params())));
    auto ragged = parts(file);
    ragged[1].second.push_back(std::byte{0});
    thrown<DataFormatError>([&] { restore(assemble(ragged)); });

    auto noCounters = parts(file);
    noCounters.pop_back();
    CHECK(thrown<DataFormatError>([&] { restore(assemble(noCounters)); }).find("CNTR") !=
          std::string::npos);
    auto twice = parts(file);
    twice.push_back(twice[1]);
    CHECK(thrown<DataFormatError>([&] { restore(assemble(twice)); }).find("twice") !=
          std::string::npos);
    auto unknown = parts(file);
    unknown[2].first = "ZZZZ";
    CHECK(thrown<DataFormatError>([&] {
            restore(assemble(unknown));
          }).find("unknown section ZZZZ") != std::string::npos);

    // A configuration that is valid JSON but not a valid configuration names its JSON path.
    auto badConf = parts(file);
    std::string json(reinterpret_cast<const char*>(badConf[0].second.data()),
                     badConf[0].second.size());
    json.replace(json.find("\"RELU\""), 6, "\"MISH\"");  // one of DL4J's that dl4cpp lacks
    badConf[0].second.assign(reinterpret_cast<const std::byte*>(json.data()),
                             reinterpret_cast<const std::byte*>(json.data()) + json.size());
    const std::string conf = thrown<ConfigError>([&] { restore(assemble(badConf)); });
    CHECK(conf.find("test.dl4cpp") != std::string::npos);
    CHECK(conf.find("$.layers[0].activation") != std::string::npos);

    const std::string missing =
        thrown<DataNotFoundError>([] { MultiLayerNetwork::load("/nonexistent/model.dl4cpp"); });
    CHECK(missing.find("/nonexistent/model.dl4cpp") != std::string::npos);
  }

  TEST_CASE("a failed write leaves the previous file byte-identical and no temporary behind") {
    TempDir dir;
    const auto path = dir / "model.dl4cpp";
    trained(Sgd(0.1), 1).save(path);
    const std::vector<std::byte> before = fileBytes(path);
    MultiLayerNetwork bigger = trained(Adam(0.01), 3);  // with Adam's state: a larger file

    // Fail mid-write: a file-size limit below the new file's size makes write() fail with EFBIG.
    {
      struct sigaction ignore {
      }, previous{};
      ignore.sa_handler = SIG_IGN;
      ::sigaction(SIGXFSZ, &ignore, &previous);
      rlimit saved{};
      ::getrlimit(RLIMIT_FSIZE, &saved);
      rlimit limited = saved;
      limited.rlim_cur = before.size() / 2;
      ::setrlimit(RLIMIT_FSIZE, &limited);
      std::string message;
      try {
        bigger.save(path);
      } catch (const IoError& e) {
        message = e.what();
      }
      ::setrlimit(RLIMIT_FSIZE, &saved);
      ::sigaction(SIGXFSZ, &previous, nullptr);
      CHECK(message.find("cannot write") != std::string::npos);
      CHECK(message.find("model.dl4cpp.tmp-") != std::string::npos);
    }
    CHECK(fileBytes(path) == before);
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1);

    // Into a directory that does not exist.
    const std::string missingDir =
        thrown<OutputPathError>([&] { bigger.save(dir / "no-such-dir" / "m.dl4cpp"); });
    CHECK(missingDir.find("no-such-dir") != std::string::npos);
    // Onto a path that is a directory: refused before anything is written, the directory stays.
    std::filesystem::create_directory(dir / "occupied");
    std::filesystem::create_directory(dir / "occupied" / "inside");
    thrown<OutputPathError>([&] { bigger.save(dir / "occupied"); });
    CHECK(std::filesystem::is_directory(dir / "occupied" / "inside"));
    CHECK(fileBytes(path) == before);
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 2);

    // A successful save replaces the file.
    bigger.save(path);
    CHECK(fileBytes(path) == ModelSerializer::toBytes(bigger, true));
  }

  TEST_CASE("layer state is the STAT section: present exactly when the layers have state") {
    registerBatchStatsLayer();
    MultiLayerNetwork net(batchStatsNet(3));
    net.init();
    net.layerState().fill(0.75f);
    const std::vector<std::byte> file = ModelSerializer::toBytes(net, true);
    const std::vector<Section> s = sections(file);
    REQUIRE(s.size() == 5);
    CHECK(s[3].tag == "STAT");
    CHECK(s[3].length == static_cast<size_t>(net.layerState().numel()) * 4);
    CHECK(values(restore(file).layerState()) == values(net.layerState()));

    auto withoutState = parts(file);
    withoutState.erase(withoutState.begin() + 3);
    CHECK(thrown<DataMismatchError>([&] {
            restore(assemble(withoutState));
          }).find("no STAT section") != std::string::npos);
    auto shortState = parts(file);
    shortState[3].second.resize(shortState[3].second.size() - 4);
    CHECK(thrown<DataMismatchError>([&] {
            restore(assemble(shortState));
          }).find("9 layer state values") != std::string::npos);
    // Version 1 had no layer state: there STAT is an unknown section.
    CHECK(thrown<DataFormatError>([&] {
            restore(assemble(parts(file), 1));
          }).find("unknown section STAT") != std::string::npos);
    // A stateless model has none.
    CHECK(sections(ModelSerializer::toBytes(trained(Sgd(0.1), 1), true)).size() == 4);
  }

  TEST_CASE("saving needs an initialised model") {
    MultiLayerNetwork net(smallConvNet(Sgd(0.1)));
    thrown<ConfigError>([&] { ModelSerializer::toBytes(net, true); });
  }

  TEST_CASE("the committed version-1 fixture stays readable") {
    // Written once by the version-1 writer, which is gone: never regenerated.
    REQUIRE(readLe(fileBytes(kFixtureV1), 8, 4) == 1);
    const MultiLayerNetwork expected = fixtureNetwork();
    MultiLayerNetwork loaded = MultiLayerNetwork::load(kFixtureV1);
    CHECK(loaded.getConfiguration() == expected.getConfiguration());
    const std::vector<float> p = values(loaded.params()), s = values(loaded.updaterState());
    REQUIRE(static_cast<int64_t>(p.size()) == expected.numParams());
    REQUIRE(s.size() == values(expected.updaterState()).size());
    for (size_t i = 0; i < p.size(); ++i) REQUIRE(p[i] == fixtureParam(static_cast<int64_t>(i)));
    for (size_t i = 0; i < s.size(); ++i) REQUIRE(s[i] == fixtureState(static_cast<int64_t>(i)));
    CHECK(loaded.getIterationCount() == 7);
    CHECK(loaded.getEpochCount() == 2);
    CHECK(loaded.getMinibatchesInEpoch() == 3);
    CHECK(loaded.score() == 0.625);
    const Tensor x = convBatch(0).features;
    MultiLayerNetwork reference = fixtureNetwork();
    CHECK(bitIdentical(values(loaded.output(x)), values(reference.output(x))));
  }

}  // TEST_SUITE

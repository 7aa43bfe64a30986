// The peer benchmark's shared pieces (bench/peers): the libtorch program's own MNIST reader must
// hand out exactly the batches MnistDataSetIterator does, or the comparison trains the two
// libraries on different data; the option parser and the order hash must behave as documented.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "MnistEpoch.h"
#include "PeerProtocol.h"
#include "iterators/MnistDataSetIterator.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

// Compares the epoch that MnistDataSetIterator(128, numExamples, ..., shuffle, seed 123) gives
// with readMnist + firstEpochOrder, batch by batch, every pixel and label.
void checkSameEpoch(int numExamples) {
  const std::string dir = MnistDataSetIterator::defaultDataDirectory();
  std::unique_ptr<MnistDataSetIterator> iterator;
  try {
    iterator =
        std::make_unique<MnistDataSetIterator>(128, numExamples, false, true, true, 123, dir);
  } catch (const DataNotFoundError& e) {
    FAIL("real MNIST missing (scripts/get-mnist.sh): " << std::string(e.what()));
  }
  const peers::MnistSplit split = peers::readMnist(dir, true, numExamples);
  const std::vector<int64_t> order = peers::firstEpochOrder(split.count, peers::PeerOptions::kSeed);
  REQUIRE(split.count == iterator->totalExamples());
  REQUIRE(split.imageSize == 784);

  int64_t position = 0, pixelMismatches = 0, labelMismatches = 0;
  while (iterator->hasNext()) {
    const DataSet batch = iterator->next();
    for (int64_t r = 0; r < batch.numExamples(); ++r, ++position) {
      const int64_t example = order[static_cast<size_t>(position)];
      const uint8_t* px = split.pixels.data() + example * split.imageSize;
      for (int64_t c = 0; c < split.imageSize; ++c)
        if (batch.features.at(r * 784 + c) != static_cast<float>(px[c]) / 255.0f) ++pixelMismatches;
      if (batch.labels.at(r * 10 + split.labels[static_cast<size_t>(example)]) != 1.0f)
        ++labelMismatches;
    }
  }
  CHECK(position == split.count);
  CHECK(pixelMismatches == 0);
  CHECK(labelMismatches == 0);
}

std::vector<char*> argvOf(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return argv;
}

peers::PeerOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "peer");
  std::vector<char*> argv = argvOf(args);
  return peers::parsePeerOptions(static_cast<int>(argv.size()), argv.data());
}

std::string parseError(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("bench/peers") {
  TEST_CASE(
      "peers: libtorch's MNIST epoch equals MnistDataSetIterator(128, true, 123), whole training "
      "set") {
    checkSameEpoch(0);
  }

  TEST_CASE(
      "peers: libtorch's MNIST epoch equals MnistDataSetIterator's on the first 1000 examples") {
    checkSameEpoch(1000);
  }

  TEST_CASE("peers: firstEpochOrder is the pinned shuffle of MnistDataSetIterator") {
    // The order MnistDataSetIterator's own test pins for 10 examples and seed 12345.
    CHECK(peers::firstEpochOrder(10, 12345) == std::vector<int64_t>{3, 1, 7, 4, 9, 2, 0, 8, 5, 6});
  }

  TEST_CASE("peers: LabelOrderHash is 64-bit FNV-1a") {
    peers::LabelOrderHash empty;
    CHECK(empty.value() == 0xcbf29ce484222325ull);  // the FNV offset basis
    peers::LabelOrderHash a;
    a.add('a');
    CHECK(a.value() == 0xaf63dc4c8601ec8cull);  // FNV-1a 64 of "a"
    peers::LabelOrderHash x, y;
    for (int label : {1, 2}) x.add(label);
    for (int label : {2, 1}) y.add(label);
    CHECK(x.value() != y.value());  // the order counts, not only the multiset
  }

  TEST_CASE("peers: options parse, with errors that name the flag") {
    const peers::PeerOptions defaults = parse({});
    CHECK(defaults.threads == 1);
    CHECK(defaults.trainExamples == 0);
    CHECK(defaults.dataDir == MnistDataSetIterator::defaultDataDirectory());
    const peers::PeerOptions set = parse(
        {"--threads", "2", "--data-dir", "/d", "--train-examples", "512", "--min-accuracy", "0.5"});
    CHECK(set.threads == 2);
    CHECK(set.dataDir == "/d");
    CHECK(set.trainExamples == 512);
    CHECK(set.minAccuracy == 0.5);
    CHECK(parseError({"--thread", "2"}) == "unknown argument '--thread' (see --help)");
    CHECK(parseError({"--threads"}) == "missing value after --threads");
    CHECK(parseError({"--threads", "two"}) == "--threads expects an integer, got 'two'");
    CHECK(parseError({"--threads", "1.5"}) == "--threads expects an integer, got '1.5'");
    CHECK(parseError({"--threads", "0"}) == "--threads must be >= 1, got 0");
    CHECK(parse({"--network", "resnet"}).network == "resnet");
    CHECK(parse({"--network", "resnet"}).dataDir == "/usr/share/datasets/fashion-mnist");
    CHECK(parse({"--network", "charlstm"}).network == "charlstm");
    CHECK(parseError({"--network", "resnet18"}) ==
          "--network must be lenet, lenetgraph, batchnorm, vgg, resnet, resnet50 or charlstm, got "
          "'resnet18'");
  }

  TEST_CASE("peers: ResNet-50 runs 4 timed steps by default, train-examples / 16 when set") {
    CHECK(parse({"--network", "resnet50"}).resNet50Steps() == 4);
    CHECK(parse({"--network", "resnet50", "--train-examples", "160"}).resNet50Steps() == 10);
    CHECK(parse({"--network", "resnet50", "--train-examples", "8"}).resNet50Steps() == 1);
  }

  TEST_CASE("peers: the synthetic ResNet-50 batches are fixed, from 0 to 1, over 1000 classes") {
    constexpr int64_t values = 16 * 3 * 224 * 224;
    std::vector<float> a(values), b(values), c(values);
    std::vector<int64_t> la(16), lb(16), lc(16);
    peers::syntheticImageNetBatch(0, a.data(), la.data());
    peers::syntheticImageNetBatch(0, b.data(), lb.data());
    peers::syntheticImageNetBatch(1, c.data(), lc.data());
    CHECK(a == b);  // both programs compute the same batch
    CHECK(la == lb);
    CHECK(a != c);  // and each step its own
    CHECK(la != lc);
    double sum = 0;
    bool inRange = true;
    for (float v : a) {
      inRange = inRange && v >= 0.0f && v < 1.0f;
      sum += v;
    }
    CHECK(inRange);
    CHECK(sum / values == doctest::Approx(0.5).epsilon(0.01));
    for (int64_t label : la) CHECK((label >= 0 && label < 1000));
    // Step 0's labels: (r * 7919) % 1000.
    CHECK(la[0] == 0);
    CHECK(la[1] == 919);
    CHECK(lc[0] == (16 * 7919) % 1000);
  }
}

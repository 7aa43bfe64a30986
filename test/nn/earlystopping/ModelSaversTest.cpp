#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <fstream>

#include "TempDir.h"
#include "nn/earlystopping/EarlyStoppingTestUtil.h"
#include "nn/util/ModelFileTestUtil.h"

using namespace dl4cpp;
using testutil::VectorIterator;

namespace {

// A model with updater state (Adam after a few steps) and counters worth keeping.
MultiLayerNetwork trainedModel(int epochs) {
  MultiLayerNetwork m = testutil::smallModel(Adam(0.01));
  VectorIterator train(testutil::batches(4, 8));
  m.fit(train, epochs);
  return m;
}

void checkSame(const Model& a, const MultiLayerNetwork& b) {
  CHECK(testutil::bitIdentical(a.params().toVector(), b.params().toVector()));
  CHECK(testutil::bitIdentical(a.updaterState().toVector(), b.updaterState().toVector()));
  CHECK(a.getIterationCount() == b.getIterationCount());
  CHECK(a.getEpochCount() == b.getEpochCount());
  CHECK(a.configurationJson() == b.configurationJson());
}

}  // namespace

TEST_SUITE("nn/earlystopping") {
  TEST_CASE("InMemoryModelSaver: keeps copies, hands out copies") {
    InMemoryModelSaver saver;
    CHECK_FALSE(saver.getBestModel());
    CHECK_FALSE(saver.getLatestModel());
    MultiLayerNetwork model = trainedModel(1);
    saver.saveBestModel(model);
    const auto savedParams = model.params().toVector();
    VectorIterator more(testutil::batches(4, 8, 5));
    model.fit(more);  // training on does not reach the saved copy
    saver.saveLatestModel(model);

    auto best = saver.getBestModel();
    REQUIRE(best);
    CHECK(testutil::bitIdentical(best->params().toVector(), savedParams));
    best->setParams(Tensor(Shape{best->numParams()}));  // nor does changing what was handed out
    CHECK(testutil::bitIdentical(saver.getBestModel()->params().toVector(), savedParams));
    checkSame(*saver.getLatestModel(), model);
  }

  TEST_CASE("LocalFileModelSaver: bestModel.bin and latestModel.bin load as saved") {
    testutil::TempDir dir;
    LocalFileModelSaver saver(dir / "run" / "models");  // created on the first save
    CHECK_FALSE(saver.getBestModel());
    const MultiLayerNetwork best = trainedModel(1);
    const MultiLayerNetwork latest = trainedModel(2);
    saver.saveBestModel(best);
    saver.saveLatestModel(latest);
    CHECK(saver.bestModelPath() == dir / "run" / "models" / "bestModel.bin");
    CHECK(std::filesystem::is_regular_file(saver.latestModelPath()));
    checkSame(*saver.getBestModel(), best);
    checkSame(*saver.getLatestModel(), latest);
    // Plain model files: MultiLayerNetwork::load reads them too.
    checkSame(MultiLayerNetwork::load(saver.bestModelPath()), best);
    // Saving again replaces the file (atomically, by MultiLayerNetwork::save).
    saver.saveBestModel(latest);
    checkSame(*saver.getBestModel(), latest);
  }

  TEST_CASE("LocalFileModelSaver: a directory that cannot be made is an IoError naming it") {
    testutil::TempDir dir;
    std::ofstream(dir / "file") << "not a directory";
    // Known at construction: refused before training.
    CHECK_THROWS_WITH_AS(LocalFileModelSaver(dir / "file" / "models"),
                         doctest::Contains(("cannot write early-stopping models to " +
                                            (dir / "file" / "models").string() +
                                            ": a component of the path is not a directory")
                                               .c_str()),
                         OutputPathError);
    // Found only when saving (the folder above became a file meanwhile).
    LocalFileModelSaver saver(dir / "later" / "models");
    std::ofstream(dir / "later") << "not a directory";
    const std::string expected =
        "LocalFileModelSaver: cannot create the directory " + (dir / "later" / "models").string();
    CHECK_THROWS_WITH_AS(saver.saveBestModel(trainedModel(1)), doctest::Contains(expected.c_str()),
                         IoError);
    CHECK_THROWS_AS(LocalFileModelSaver(""), ConfigError);
  }
}

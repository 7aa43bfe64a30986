#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <vector>

#include "TempDir.h"
#include "iterators/AsyncDataSetIterator.h"
#include "iterators/CSVRecordReader.h"
#include "iterators/ListDataSetIterator.h"
#include "iterators/NormalizerMinMaxScaler.h"
#include "iterators/NormalizerStandardize.h"
#include "iterators/RecordReaderDataSetIterator.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

// 4 examples of 3 feature columns: 1..4, a constant 5, and -10, 0, 10, 40; labels the row index.
DataSet table() {
  return DataSet(Tensor::fromVector(Shape{4, 3}, {1, 5, -10, 2, 5, 0, 3, 5, 10, 4, 5, 40}),
                 Tensor::fromVector(Shape{4, 1}, {0, 1, 2, 3}));
}

// The features of every batch of an epoch, row after row.
std::vector<float> epochFeatures(DataSetIterator& it) {
  std::vector<float> out;
  while (it.hasNext()) {
    const DataSet b = it.next();
    out.insert(out.end(), b.features.data(), b.features.data() + b.features.numel());
  }
  return out;
}

void checkClose(const std::vector<float>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("value " << i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  }
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("NormalizerStandardize: per-column mean and population std, as computed by hand") {
    ListDataSetIterator it(table(), 3);  // two batches: the statistics span them
    auto normalizer = std::make_shared<NormalizerStandardize>();
    CHECK_FALSE(normalizer->isFitted());
    normalizer->fit(it);
    // Column 0: mean 2.5, variance (2.25+0.25+0.25+2.25)/4 = 1.25. Column 2: mean 10, variance
    // (400+100+0+900)/4 = 350.
    const double s0 = std::sqrt(1.25), s2 = std::sqrt(350.0);
    CHECK(normalizer->getMean() == std::vector<double>{2.5, 5, 10});
    CHECK(normalizer->getStd()[0] == doctest::Approx(s0));
    CHECK(normalizer->getStd()[1] == 0);
    CHECK(normalizer->getStd()[2] == doctest::Approx(s2));
    CHECK(it.hasNext());  // fit() leaves the iterator at the start of an epoch
    it.setPreProcessor(normalizer);
    checkClose(epochFeatures(it), {-1.5 / s0, 0, -20 / s2, -0.5 / s0, 0, -10 / s2, 0.5 / s0, 0, 0,
                                   1.5 / s0, 0, 30 / s2});
    it.reset();
    CHECK(it.next().labels.at(1) == 1);  // labels untouched
  }

  TEST_CASE("NormalizerMinMaxScaler: each column to [0, 1] or a given range, as by hand") {
    ListDataSetIterator it(table(), 3);
    auto scaler = std::make_shared<NormalizerMinMaxScaler>();
    scaler->fit(it);
    CHECK(scaler->getMin() == std::vector<double>{1, 5, -10});
    CHECK(scaler->getMax() == std::vector<double>{4, 5, 40});
    it.setPreProcessor(scaler);
    checkClose(epochFeatures(it), {0, 0, 0, 1.0 / 3, 0, 0.2, 2.0 / 3, 0, 0.4, 1, 0, 1});
    auto symmetric = std::make_shared<NormalizerMinMaxScaler>(-1, 1);
    it.setPreProcessor(nullptr);
    it.reset();
    symmetric->fit(it);
    DataSet outside(Tensor::fromVector(Shape{1, 3}, {7, 5, -60}), Tensor());
    symmetric->transform(outside);  // beyond the fitted range: mapped, not clipped
    checkClose(outside.features.toVector(), {3, -1, -3});
    CHECK_THROWS_AS(NormalizerMinMaxScaler(1, 1), ConfigError);
    CHECK_THROWS_AS(NormalizerMinMaxScaler(0, std::numeric_limits<double>::infinity()),
                    ConfigError);
  }

  TEST_CASE("Normalizers: as the pre-processor of a CSV iterator, fitted on a streamed file") {
    testutil::TempDir dir;
    std::ofstream(dir / "t.csv") << "x,y,class\n1,10,0\n3,30,1\n5,20,1\n";
    CSVRecordReader reader(1);
    reader.initialize(dir / "t.csv");
    RecordReaderDataSetIterator it(reader, 2, 2, 2);
    auto scaler = std::make_shared<NormalizerMinMaxScaler>();
    scaler->fit(it);
    it.setPreProcessor(scaler);
    checkClose(epochFeatures(it), {0, 0, 0.5, 1, 1, 0.5});
  }

  TEST_CASE("Normalizers: AsyncDataSetIterator applies its own pre-processor") {
    ListDataSetIterator source(table(), 3);
    auto scaler = std::make_shared<NormalizerMinMaxScaler>();
    scaler->fit(source);
    AsyncDataSetIterator async(source, 2);
    async.setPreProcessor(scaler);
    checkClose(epochFeatures(async), {0, 0, 0, 1.0 / 3, 0, 0.2, 2.0 / 3, 0, 0.4, 1, 0, 1});
  }

  TEST_CASE("Normalizers: bad use and bad data are typed errors") {
    NormalizerStandardize normalizer;
    DataSet batch = table();
    CHECK_THROWS_WITH_AS(normalizer.transform(batch), doctest::Contains("before fit()"),
                         ConfigError);
    ListDataSetIterator it(table(), 2);
    normalizer.fit(it);
    DataSet narrow(Tensor(Shape{2, 2}), Tensor());
    CHECK_THROWS_WITH_AS(normalizer.transform(narrow),
                         "NormalizerStandardize: the batch has 2 feature columns, the normalizer "
                         "was fitted on 3",
                         DataMismatchError);
    ListDataSetIterator empty(std::vector<DataSet>{}, 2);
    CHECK_THROWS_AS(normalizer.fit(empty), DataError);
    ListDataSetIterator withNan(
        DataSet(Tensor::fromVector(Shape{2, 2}, {1, 2, 3, std::nanf("")}), Tensor()), 2);
    CHECK_THROWS_WITH_AS(normalizer.fit(withNan),
                         doctest::Contains("batch 0, row 1, column 1 holds a non-finite value"),
                         DataError);
    CHECK(normalizer.getMean().size() == 3);  // a failed fit keeps the previous statistics
  }
}

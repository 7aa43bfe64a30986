#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "iterators/ListDataSetIterator.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

// n examples of 3 features and 2 label columns; example i has features (first+i)*10 + {0,1,2}
// and labels {first+i, -(first+i)}, so every row says which example it is.
DataSet examples(int64_t n, int64_t first = 0) {
  std::vector<float> f, l;
  for (int64_t i = 0; i < n; ++i) {
    const float id = static_cast<float>(first + i);
    for (int c = 0; c < 3; ++c) f.push_back(id * 10 + static_cast<float>(c));
    l.push_back(id);
    l.push_back(-id);
  }
  return DataSet(Tensor::fromVector(Shape{n, 3}, f), Tensor::fromVector(Shape{n, 2}, l));
}

// The example ids of a batch, read from its label column 0.
std::vector<int> ids(const DataSet& ds) {
  std::vector<int> out;
  for (int64_t r = 0; r < ds.numExamples(); ++r) {
    const int id = static_cast<int>(ds.labels.at(r * 2));
    CHECK(ds.labels.at(r * 2 + 1) == -static_cast<float>(id));
    for (int c = 0; c < 3; ++c) CHECK(ds.features.at(r * 3 + c) == static_cast<float>(id * 10 + c));
    out.push_back(id);
  }
  return out;
}

std::vector<std::vector<int>> epoch(ListDataSetIterator& it) {
  std::vector<std::vector<int>> batches;
  while (it.hasNext()) batches.push_back(ids(it.next()));
  return batches;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("DataSet: numExamples and validation of features against labels") {
    CHECK(DataSet().numExamples() == 0);
    CHECK(DataSet().empty());
    CHECK(examples(4).numExamples() == 4);
    CHECK_THROWS_AS(DataSet(Tensor(Shape{4, 3}), Tensor(Shape{5, 2})), DataMismatchError);
    CHECK_THROWS_AS(DataSet(Tensor(), Tensor(Shape{5, 2})), DataMismatchError);
    CHECK_NOTHROW(DataSet(Tensor(Shape{4, 3}), Tensor()));  // unsupervised: no labels
    DataSet bad;
    bad.features = Tensor(Shape{2, 784});
    bad.labels = Tensor(Shape{3, 10});
    try {
      bad.validate("MyIterator");
      FAIL("validate() accepted 2 feature rows with 3 label rows");
    } catch (const DataMismatchError& e) {
      const std::string msg = e.what();
      CHECK(msg.find("MyIterator") != std::string::npos);
      CHECK(msg.find("[2, 784]") != std::string::npos);
      CHECK(msg.find("[3, 10]") != std::string::npos);
    }
  }

  TEST_CASE("DataSet: merge concatenates in order, rows and copy") {
    const DataSet m = DataSet::merge({examples(2, 0), DataSet(), examples(3, 2)});
    CHECK(m.features.shape() == Shape{5, 3});
    CHECK(ids(m) == std::vector<int>{0, 1, 2, 3, 4});
    CHECK(ids(m.rows(1, 3)) == std::vector<int>{1, 2});
    DataSet c = m.copy();
    c.features.fill(0);
    CHECK(m.features.at(3) == 10.0f);  // the copy has its own storage
    CHECK(DataSet::merge({}).empty());
    CHECK_THROWS_AS(
        DataSet::merge({examples(2), DataSet(Tensor(Shape{1, 4}), Tensor(Shape{1, 2}))}),
        DataMismatchError);
    CHECK_THROWS_AS(DataSet::merge({examples(2), DataSet(Tensor(Shape{1, 3}), Tensor())}),
                    DataMismatchError);
  }

  TEST_CASE("ListDataSetIterator: one DataSet split into batches, last partial batch kept") {
    ListDataSetIterator it(examples(7), 3);
    CHECK(it.batch() == 3);
    CHECK(it.totalExamples() == 7);
    CHECK(it.inputColumns() == 3);
    CHECK(it.totalOutcomes() == 2);
    CHECK(it.resetSupported());
    CHECK(epoch(it) == std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6}});
    CHECK_FALSE(it.hasNext());
    CHECK_THROWS_AS(it.next(), DataError);
    it.reset();
    CHECK(epoch(it) == std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6}});
  }

  TEST_CASE("ListDataSetIterator: single-example DataSets are concatenated and re-batched") {
    std::vector<DataSet> list;
    for (int i = 0; i < 5; ++i) list.push_back(examples(1, i));
    ListDataSetIterator it(list, 2);
    CHECK(it.totalExamples() == 5);
    CHECK(epoch(it) == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4}});
  }

  TEST_CASE("ListDataSetIterator: multi-example DataSets are re-batched across boundaries") {
    ListDataSetIterator it({examples(2, 0), examples(3, 2), examples(1, 5)}, 4);
    CHECK(epoch(it) == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5}});
    ListDataSetIterator defaults({examples(25)});
    CHECK(defaults.batch() == 10);
    CHECK(epoch(defaults).size() == 3);
  }

  TEST_CASE("ListDataSetIterator: batches are copies the caller may modify") {
    ListDataSetIterator it(examples(4), 4);
    DataSet b = it.next();
    b.features.fill(-1);
    b.labels.fill(-1);
    it.reset();
    CHECK(ids(it.next()) == std::vector<int>{0, 1, 2, 3});
  }

  TEST_CASE("ListDataSetIterator: keeps per-example shapes of rank > 2") {
    DataSet images(Tensor(Shape{5, 1, 2, 2}), Tensor(Shape{5, 10}));
    ListDataSetIterator it(images, 2);
    CHECK(it.inputColumns() == 4);
    CHECK(it.totalOutcomes() == 10);
    CHECK(it.next().features.shape() == Shape{2, 1, 2, 2});
  }

  TEST_CASE("ListDataSetIterator: empty input, bad batch, mismatched parts") {
    ListDataSetIterator empty(std::vector<DataSet>{}, 4);
    CHECK_FALSE(empty.hasNext());
    CHECK(empty.totalExamples() == 0);
    CHECK_THROWS_AS(empty.next(), DataError);
    CHECK_THROWS_AS(ListDataSetIterator(examples(3), 0), ConfigError);
    CHECK_THROWS_AS(ListDataSetIterator({examples(3), DataSet(Tensor(Shape{1, 5}), Tensor())}, 2),
                    DataMismatchError);
  }
}

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "nn/core/Error.h"
#include "nn/eval/Evaluation.h"

using namespace dl4cpp;

namespace {

// The hand-worked example: 10 examples of 3 classes, as (actual, predicted):
//   (0,0) (0,0) (0,1) (1,1) (1,1) (1,2) (2,1) (2,2) (2,2) (2,2)
// Confusion matrix (rows actual, columns predicted):
//          p0 p1 p2 | row total
//   a0      2  1  0 |  3
//   a1      0  2  1 |  3
//   a2      0  1  3 |  4
//   column  2  4  4 | 10
// TP = diagonal       = [2, 2, 3]
// FP = column - TP    = [0, 2, 1]
// FN = row - TP       = [1, 1, 1]
// TN = 10-row-col+TP  = [10-3-2+2, 10-3-4+2, 10-4-4+3] = [7, 5, 5]
// accuracy  = (2+2+3)/10 = 0.7
// precision = [2/2, 2/4, 3/4] = [1, 0.5, 0.75]        macro = 2.25/3 = 0.75
// recall    = [2/3, 2/3, 3/4]                         macro = (8/12+8/12+9/12)/3 = 25/36
// f1        = 2pr/(p+r):
//   class 0: 2*1*(2/3) / (5/3)     = 4/5
//   class 1: 2*(1/2)*(2/3) / (7/6) = 4/7
//   class 2: 3/4
//   macro = (112 + 80 + 105)/140 / 3 = 297/420 = 99/140
const int kActual[10] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 2};
const int kPredicted[10] = {0, 0, 1, 1, 1, 2, 1, 2, 2, 2};

// Rows [begin, end) of the example as (labels, predictions) tensors. Row 0's prediction is a tie
// between classes 0 and 1 (must resolve to 0), row 3's a tie between 1 and 2 (must resolve to 1).
std::pair<Tensor, Tensor> exampleRows(int begin, int end) {
  const std::vector<std::vector<float>> probs = {
      {0.4f, 0.4f, 0.2f}, {0.8f, 0.1f, 0.1f}, {0.3f, 0.6f, 0.1f}, {0.1f, 0.45f, 0.45f},
      {0.2f, 0.7f, 0.1f}, {0.1f, 0.2f, 0.7f}, {0.3f, 0.5f, 0.2f}, {0.0f, 0.0f, 1.0f},
      {0.2f, 0.3f, 0.5f}, {0.1f, 0.1f, 0.8f}};
  std::vector<float> labels, predictions;
  for (int i = begin; i < end; ++i) {
    for (int c = 0; c < 3; ++c) labels.push_back(c == kActual[i] ? 1.0f : 0.0f);
    predictions.insert(predictions.end(), probs[static_cast<size_t>(i)].begin(),
                       probs[static_cast<size_t>(i)].end());
  }
  const int64_t n = end - begin;
  return {Tensor::fromVector({n, 3}, labels), Tensor::fromVector({n, 3}, predictions)};
}

void checkHandExample(const Evaluation& e) {
  REQUIRE(e.numClasses() == 3);
  CHECK(e.getNumRowCounter() == 10);
  const int64_t expected[3][3] = {{2, 1, 0}, {0, 2, 1}, {0, 1, 3}};
  for (int a = 0; a < 3; ++a)
    for (int p = 0; p < 3; ++p) CHECK(e.getConfusionMatrix().count(a, p) == expected[a][p]);
  CHECK(e.getConfusionMatrix().total() == 10);
  CHECK(e.getConfusionMatrix().actualTotal(2) == 4);
  CHECK(e.getConfusionMatrix().predictedTotal(1) == 4);

  const int64_t tp[3] = {2, 2, 3}, fp[3] = {0, 2, 1}, fn[3] = {1, 1, 1}, tn[3] = {7, 5, 5};
  for (int c = 0; c < 3; ++c) {
    CHECK(e.truePositives(c) == tp[c]);
    CHECK(e.falsePositives(c) == fp[c]);
    CHECK(e.falseNegatives(c) == fn[c]);
    CHECK(e.trueNegatives(c) == tn[c]);
  }

  CHECK(e.accuracy() == doctest::Approx(0.7));
  CHECK(e.precision(0) == doctest::Approx(1.0));
  CHECK(e.precision(1) == doctest::Approx(0.5));
  CHECK(e.precision(2) == doctest::Approx(0.75));
  CHECK(e.recall(0) == doctest::Approx(2.0 / 3));
  CHECK(e.recall(1) == doctest::Approx(2.0 / 3));
  CHECK(e.recall(2) == doctest::Approx(0.75));
  CHECK(e.f1(0) == doctest::Approx(0.8));
  CHECK(e.f1(1) == doctest::Approx(4.0 / 7));
  CHECK(e.f1(2) == doctest::Approx(0.75));
  CHECK(e.precision() == doctest::Approx(0.75));
  CHECK(e.recall() == doctest::Approx(25.0 / 36));
  CHECK(e.f1() == doctest::Approx(99.0 / 140));
  CHECK(e.averagePrecisionNumClassesExcluded() == 0);
  CHECK(e.averageRecallNumClassesExcluded() == 0);
  CHECK(e.averageF1NumClassesExcluded() == 0);
}

}  // namespace

TEST_SUITE("eval") {
  TEST_CASE("Evaluation: hand-computed 3-class confusion matrix and metrics") {
    Evaluation e;  // classes inferred from the first call
    CHECK(e.numClasses() == 0);
    auto [l1, p1] = exampleRows(0, 4);
    auto [l2, p2] = exampleRows(4, 10);
    e.eval(l1, p1);
    CHECK(e.numClasses() == 3);
    CHECK(e.getNumRowCounter() == 4);
    e.eval(l2, p2);
    checkHandExample(e);
  }

  TEST_CASE("Evaluation: eval(actual, predicted) gives the same counts as tensors") {
    Evaluation e(3);
    for (int i = 0; i < 10; ++i) e.eval(kActual[i], kPredicted[i]);
    checkHandExample(e);
  }

  TEST_CASE("Evaluation: merge of per-thread evaluations equals one evaluation") {
    Evaluation a(3), b;
    auto [l1, p1] = exampleRows(0, 5);
    auto [l2, p2] = exampleRows(5, 10);
    a.eval(l1, p1);
    b.eval(l2, p2);
    a.merge(b);
    checkHandExample(a);
    CHECK(b.getNumRowCounter() == 5);  // the merged-in evaluation is unchanged

    Evaluation empty;  // merging into / from an evaluation without classes
    empty.merge(a);
    checkHandExample(empty);
    a.merge(Evaluation());
    checkHandExample(a);

    Evaluation four(4);
    CHECK_THROWS_AS(a.merge(four), DataMismatchError);
    checkHandExample(a);
  }

  TEST_CASE("Evaluation: shape mismatch throws ShapeError naming both shapes") {
    Evaluation e;
    const Tensor labels({4, 3});
    const Tensor predictions({4, 2});
    try {
      e.eval(labels, predictions);
      FAIL("expected ShapeError");
    } catch (const ShapeError& err) {
      const std::string msg = err.what();
      CHECK(msg.find("[4, 3]") != std::string::npos);
      CHECK(msg.find("[4, 2]") != std::string::npos);
    }
    CHECK(e.numClasses() == 0);
    CHECK(e.getNumRowCounter() == 0);

    Evaluation three(3);  // same shapes, but not the class count
    CHECK_THROWS_AS(three.eval(Tensor({2, 4}), Tensor({2, 4})), ShapeError);
    CHECK_THROWS_AS(three.eval(Tensor({6}), Tensor({6})), ShapeError);
  }

  TEST_CASE("Evaluation: bad single examples, NaN predictions, bad construction") {
    Evaluation unknown;
    CHECK_THROWS_AS(unknown.eval(0, 1), ConfigError);
    Evaluation e(3);
    CHECK_THROWS_AS(e.eval(3, 0), DataError);
    CHECK_THROWS_AS(e.eval(0, -1), DataError);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const Tensor labels = Tensor::fromVector({2, 3}, {1, 0, 0, 0, 1, 0});
    const Tensor predictions = Tensor::fromVector({2, 3}, {0.9f, 0.05f, 0.05f, nan, 0.5f, 0.5f});
    CHECK_THROWS_AS(e.eval(labels, predictions), DataError);
    CHECK(e.getNumRowCounter() == 0);  // a failed call adds nothing
    CHECK_THROWS_AS(Evaluation(0), ConfigError);
    CHECK_THROWS_AS(Evaluation(std::vector<std::string>{}), ConfigError);
  }

  TEST_CASE("Evaluation: classes with undefined metrics are excluded from macro averages") {
    // 3 classes, class 2 neither predicted nor present: (0,0) (0,1) (1,1).
    // precision = [1/1, 1/2, 0/0]  -> macro over classes 0,1 = 0.75, 1 excluded
    // recall    = [1/2, 1/1, 0/0]  -> macro = 0.75, 1 excluded
    // f1        = [2*1*0.5/1.5, 2*0.5*1/1.5, undefined] = [2/3, 2/3, -] -> macro 2/3
    Evaluation e(3);
    e.eval(0, 0);
    e.eval(0, 1);
    e.eval(1, 1);
    CHECK(e.precision() == doctest::Approx(0.75));
    CHECK(e.recall() == doctest::Approx(0.75));
    CHECK(e.f1() == doctest::Approx(2.0 / 3));
    CHECK(e.precision(2) == 0.0);  // per class, 0/0 reads as 0
    CHECK(e.recall(2) == 0.0);
    CHECK(e.f1(2) == 0.0);
    CHECK(e.averagePrecisionNumClassesExcluded() == 1);
    CHECK(e.averageRecallNumClassesExcluded() == 1);
    CHECK(e.averageF1NumClassesExcluded() == 1);

    // A class with examples that is never predicted: precision 0/0 (excluded), recall 0/1 = 0
    // (included); f1 needs both, so it is excluded from the f1 average.
    // (0,0) (2,0): precision = [1/2, -, -], recall = [1/1, -, 0/1]
    Evaluation g(3);
    g.eval(0, 0);
    g.eval(2, 0);
    CHECK(g.precision() == doctest::Approx(0.5));
    CHECK(g.recall() == doctest::Approx(0.5));  // (1 + 0) / 2
    CHECK(g.f1() == doctest::Approx(2 * 0.5 * 1 / 1.5));
    CHECK(g.averagePrecisionNumClassesExcluded() == 2);
    CHECK(g.averageRecallNumClassesExcluded() == 1);
    CHECK(g.averageF1NumClassesExcluded() == 2);

    const std::string s = e.stats();
    CHECK(s.find(" Precision:       0.7500\t(1 class excluded from average)") != std::string::npos);
    CHECK(s.find("Warning: 1 class was never predicted by the model and was excluded from "
                 "average precision\nClasses excluded from average precision: [2]\n") !=
          std::string::npos);
    CHECK(s.find("Classes excluded from average recall: [2]") != std::string::npos);
    CHECK(e.stats(true, true).find("Warning") == std::string::npos);

    // Nothing seen yet: the averages are 0, not NaN.
    Evaluation none(3);
    CHECK(none.accuracy() == 0.0);
    CHECK(none.precision() == 0.0);
    CHECK(none.recall() == 0.0);
    CHECK(none.f1() == 0.0);
    // Every class excluded: (0,1) only -> class 0 never predicted, class 1 never present.
    Evaluation bad(2);
    bad.eval(0, 1);
    CHECK(std::isnan(bad.f1()));
  }

  TEST_CASE("Evaluation: stats() in DL4J's format") {
    Evaluation e(3);
    for (int i = 0; i < 10; ++i) e.eval(kActual[i], kPredicted[i]);
    const std::string expected =
        "\n"
        "\n========================Evaluation Metrics========================"
        "\n # of classes:    3"
        "\n Accuracy:        0.7000"
        "\n Precision:       0.7500"
        "\n Recall:          0.6944"
        "\n F1 Score:        0.7071"
        "\nPrecision, recall & F1: macro-averaged (equally weighted avg. of 3 classes)"
        "\n\n"
        "\n=========================Confusion Matrix=========================\n"
        " 0 1 2\n"
        "-------\n"
        " 2 1 0 | 0 = 0\n"
        " 0 2 1 | 1 = 1\n"
        " 0 1 3 | 2 = 2\n"
        "\nConfusion matrix format: Actual (rowClass) predicted as (columnClass) N times"
        "\n==================================================================";
    CHECK(e.stats() == expected);

    Evaluation named(std::vector<std::string>{"cat", "dog", "bird"});
    named.eval(2, 2);
    CHECK(named.numClasses() == 3);
    const std::string s = named.stats();
    CHECK(s.find(" 0 0 1 | 2 = bird\n") != std::string::npos);
    CHECK(s.find(" Accuracy:        1.0000") != std::string::npos);
  }

  TEST_CASE("Evaluation: confusion matrix column width follows the largest count") {
    // MNIST-like: 10 classes, largest count 1135 -> 4 digits, columns 5 wide, divider 5*10+1.
    Evaluation e(10);
    for (int i = 0; i < 1135; ++i) e.eval(1, 1);
    for (int i = 0; i < 975; ++i) e.eval(0, 0);
    e.eval(0, 2);
    const std::string m = e.confusionMatrix();
    CHECK(m.rfind("    0    1    2    3    4    5    6    7    8    9\n" + std::string(51, '-') +
                      "\n  975    0    1    0    0    0    0    0    0    0"
                      " | 0 = 0\n",
                  0) == 0);
    CHECK(m.find("    0 1135    0") != std::string::npos);
    CHECK(e.stats().find(" # of classes:    10") != std::string::npos);
  }

  TEST_CASE("Evaluation: a single column is the binary case") {
    // label 1 / prediction > 0.5 is class 1: (1, 0.9) (0, 0.2) (1, 0.3) (0, 0.7)
    // -> (1,1) (0,0) (1,0) (0,1)
    Evaluation e;
    e.eval(Tensor::fromVector({4, 1}, {1, 0, 1, 0}),
           Tensor::fromVector({4, 1}, {0.9f, 0.2f, 0.3f, 0.7f}));
    CHECK(e.numClasses() == 2);
    for (int a = 0; a < 2; ++a)
      for (int p = 0; p < 2; ++p) CHECK(e.getConfusionMatrix().count(a, p) == 1);
    CHECK(e.accuracy() == doctest::Approx(0.5));
  }

  TEST_CASE("Evaluation: reset keeps classes and forgets counts") {
    Evaluation e(3);
    e.eval(1, 2);
    e.reset();
    CHECK(e.numClasses() == 3);
    CHECK(e.getNumRowCounter() == 0);
    CHECK(e.getConfusionMatrix().count(1, 2) == 0);
  }
}

#include <doctest/doctest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "TempDir.h"
#include "iterators/AsyncDataSetIterator.h"
#include "iterators/CSVSequenceRecordReader.h"
#include "iterators/NumberedFileInputSplit.h"
#include "iterators/SequenceRecordReaderDataSetIterator.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using AlignmentMode = SequenceRecordReaderDataSetIterator::AlignmentMode;

namespace {

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data(), t.data() + t.numel());
}

// Sequence files features/0.csv ... and labels/0.csv ..., with readers over them.
struct SequenceFiles {
  testutil::TempDir dir;
  CSVSequenceRecordReader features, labels;

  SequenceFiles(const std::vector<std::string>& featureFiles,
                const std::vector<std::string>& labelFiles = {}) {
    std::filesystem::create_directories(dir / "features");
    std::filesystem::create_directories(dir / "labels");
    for (size_t i = 0; i < featureFiles.size(); ++i)
      std::ofstream(featurePath(i), std::ios::binary) << featureFiles[i];
    for (size_t i = 0; i < labelFiles.size(); ++i)
      std::ofstream(labelPath(i), std::ios::binary) << labelFiles[i];
    features.initialize(NumberedFileInputSplit((dir / "features/%d.csv").string(), 0,
                                               static_cast<int64_t>(featureFiles.size()) - 1));
    if (!labelFiles.empty())
      labels.initialize(NumberedFileInputSplit((dir / "labels/%d.csv").string(), 0,
                                               static_cast<int64_t>(labelFiles.size()) - 1));
  }
  std::string featurePath(size_t i) const {
    return (dir / ("features/" + std::to_string(i) + ".csv")).string();
  }
  std::string labelPath(size_t i) const {
    return (dir / ("labels/" + std::to_string(i) + ".csv")).string();
  }
};

// An in-memory reader that cannot tell its number of sequences in advance.
class ListSequenceReader : public SequenceRecordReader {
 public:
  explicit ListSequenceReader(std::vector<SequenceRecord> sequences)
      : sequences_(std::move(sequences)) {}
  void initialize(const InputSplit&) override { next_ = 0; }
  bool hasNext() override { return next_ < sequences_.size(); }
  SequenceRecord sequenceRecord() override {
    if (!hasNext()) throw DataError("ListSequenceReader: no sequence left");
    return sequences_[next_++];
  }
  void reset() override { next_ = 0; }

 private:
  std::vector<SequenceRecord> sequences_;
  size_t next_ = 0;
};

SequenceRecord sequence(const std::string& name, std::vector<std::vector<std::string>> steps) {
  SequenceRecord s;
  s.file = name;
  for (size_t t = 0; t < steps.size(); ++t) s.lines.push_back(static_cast<int64_t>(t + 1));
  s.steps = std::move(steps);
  return s;
}

template <typename E>
std::string errorOf(DataSetIterator& it) {
  try {
    while (it.hasNext()) it.next();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("SequenceRecordReaderDataSetIterator: two readers, one-hot labels [N, C, T]") {
    // Three sequences of two time steps, two feature columns; one class per step.
    SequenceFiles f({"1,2\n3,4\n", "5,6\n7,8\n", "9,10\n11,12\n"}, {"0\n2\n", "1\n1\n", "2\n0\n"});
    SequenceRecordReaderDataSetIterator it(f.features, f.labels, 2, 3);
    CHECK(it.batch() == 2);
    CHECK(it.inputColumns() == 2);
    CHECK(it.totalOutcomes() == 3);
    CHECK(it.totalExamples() == 3);
    CHECK(it.alignmentMode() == AlignmentMode::EQUAL_LENGTH);
    REQUIRE(it.hasNext());
    DataSet b = it.next();
    CHECK(b.features.shape() == Shape{2, 2, 2});
    // [example][column][step]
    CHECK(values(b.features) == std::vector<float>{1, 3, 2, 4, 5, 7, 6, 8});
    CHECK(b.labels.shape() == Shape{2, 3, 2});
    CHECK(values(b.labels) == std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0});
    CHECK_FALSE(b.hasMasks());
    b = it.next();
    CHECK(b.numExamples() == 1);
    CHECK(values(b.features) == std::vector<float>{9, 11, 10, 12});
    CHECK(values(b.labels) == std::vector<float>{0, 1, 0, 0, 1, 0});
    CHECK_FALSE(it.hasNext());
    CHECK_THROWS_AS(it.next(), DataError);
    it.reset();
    CHECK(values(it.next().features) == std::vector<float>{1, 3, 2, 4, 5, 7, 6, 8});
  }

  TEST_CASE(
      "SequenceRecordReaderDataSetIterator: sequences of different lengths are padded "
      "and masked") {
    SequenceFiles f({"1\n2\n3\n", "4\n", "5\n6\n"}, {"1\n1\n1\n", "0\n", "1\n0\n"});
    SequenceRecordReaderDataSetIterator it(f.features, f.labels, 3, 2);
    DataSet b = it.next();
    CHECK(b.features.shape() == Shape{3, 1, 3});
    CHECK(values(b.features) == std::vector<float>{1, 2, 3, 4, 0, 0, 5, 6, 0});
    CHECK(values(b.featuresMask) == std::vector<float>{1, 1, 1, 1, 0, 0, 1, 1, 0});
    CHECK(values(b.labelsMask) == values(b.featuresMask));
    CHECK(values(b.labels) ==
          std::vector<float>{0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0});
    // The same as merging the examples one by one (DataSet::merge pads at the end too).
    SequenceRecordReaderDataSetIterator single(f.features, f.labels, 1, 2);
    std::vector<DataSet> parts;
    while (single.hasNext()) parts.push_back(single.next());
    const DataSet merged = DataSet::merge(parts);
    CHECK(values(merged.features) == values(b.features));
    CHECK(values(merged.labels) == values(b.labels));
    CHECK(values(merged.featuresMask) == values(b.featuresMask));
    CHECK(values(merged.labelsMask) == values(b.labelsMask));
  }

  TEST_CASE("SequenceRecordReaderDataSetIterator: ALIGN_START and ALIGN_END") {
    // Many-to-one: a label only for the whole sequence.
    SequenceFiles f({"1,10\n2,20\n3,30\n", "4,40\n5,50\n"}, {"1\n", "0\n"});
    SequenceRecordReaderDataSetIterator start(f.features, f.labels, 2, 2, false,
                                              AlignmentMode::ALIGN_START);
    DataSet b = start.next();
    CHECK(b.features.shape() == Shape{2, 2, 3});
    CHECK(values(b.features) == std::vector<float>{1, 2, 3, 10, 20, 30, 4, 5, 0, 40, 50, 0});
    CHECK(values(b.featuresMask) == std::vector<float>{1, 1, 1, 1, 1, 0});
    CHECK(values(b.labels) == std::vector<float>{0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0});
    CHECK(values(b.labelsMask) == std::vector<float>{1, 0, 0, 1, 0, 0});

    SequenceRecordReaderDataSetIterator end(f.features, f.labels, 2, 2, false,
                                            AlignmentMode::ALIGN_END);
    b = end.next();
    CHECK(values(b.features) == std::vector<float>{1, 2, 3, 10, 20, 30, 0, 4, 5, 0, 40, 50});
    CHECK(values(b.featuresMask) == std::vector<float>{1, 1, 1, 0, 1, 1});
    CHECK(values(b.labels) == std::vector<float>{0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0});
    CHECK(values(b.labelsMask) == std::vector<float>{0, 0, 1, 0, 0, 1});

    // Equal lengths everywhere: nothing to mask in any mode.
    SequenceFiles g({"1\n2\n"}, {"0\n1\n"});
    SequenceRecordReaderDataSetIterator aligned(g.features, g.labels, 1, 2, false,
                                                AlignmentMode::ALIGN_END);
    CHECK_FALSE(aligned.next().hasMasks());
  }

  TEST_CASE("SequenceRecordReaderDataSetIterator: regression takes the label columns as they are") {
    SequenceFiles f({"1\n2\n"}, {"0.5,-1\n1.5,-2\n"});
    SequenceRecordReaderDataSetIterator it(f.features, f.labels, 4, -1, true);
    CHECK(it.totalOutcomes() == 2);
    const DataSet b = it.next();
    CHECK(b.labels.shape() == Shape{1, 2, 2});
    CHECK(values(b.labels) == std::vector<float>{0.5F, 1.5F, -1, -2});
  }

  TEST_CASE("SequenceRecordReaderDataSetIterator: one reader, the label a column of each line") {
    SequenceFiles f({"1,0,10\n2,1,20\n", "3,1,30\n"});
    SequenceRecordReaderDataSetIterator it(f.features, 2, 2, 1);
    CHECK(it.inputColumns() == 2);
    CHECK(it.totalOutcomes() == 2);
    DataSet b = it.next();
    CHECK(b.features.shape() == Shape{2, 2, 2});
    CHECK(values(b.features) == std::vector<float>{1, 2, 10, 20, 3, 0, 30, 0});
    CHECK(values(b.labels) == std::vector<float>{1, 0, 0, 1, 0, 0, 1, 0});
    CHECK(values(b.featuresMask) == std::vector<float>{1, 1, 1, 0});
    CHECK(values(b.labelsMask) == std::vector<float>{1, 1, 1, 0});

    SequenceRecordReaderDataSetIterator regression(f.features, 2, -1, 2, true);
    CHECK(regression.totalOutcomes() == 1);
    b = regression.next();
    CHECK(values(b.features) == std::vector<float>{1, 2, 0, 1, 3, 0, 1, 0});
    CHECK(values(b.labels) == std::vector<float>{10, 20, 30, 0});
  }

  TEST_CASE("SequenceRecordReaderDataSetIterator: pre-processor, shared readers, async") {
    struct Double : DataSetPreProcessor {
      void preProcess(DataSet& batch) const override {
        for (int64_t i = 0; i < batch.features.numel(); ++i) batch.features.data()[i] *= 2;
      }
    };
    auto features = std::make_shared<CSVSequenceRecordReader>();
    auto labels = std::make_shared<CSVSequenceRecordReader>();
    SequenceFiles f({"1\n", "2\n", "3\n"}, {"0\n", "1\n", "0\n"});
    features->initialize(NumberedFileInputSplit((f.dir / "features/%d.csv").string(), 0, 2));
    labels->initialize(NumberedFileInputSplit((f.dir / "labels/%d.csv").string(), 0, 2));
    auto it = std::make_unique<SequenceRecordReaderDataSetIterator>(features, labels, 2, 2);
    features.reset();
    labels.reset();
    it->setPreProcessor(std::make_shared<Double>());
    AsyncDataSetIterator async(std::move(it), 2);
    std::vector<float> seen;
    for (int epoch = 0; epoch < 2; ++epoch) {
      while (async.hasNext())
        for (float v : values(async.next().features)) seen.push_back(v);
      async.reset();
    }
    CHECK(seen == std::vector<float>{2, 4, 6, 2, 4, 6});
    CHECK_THROWS_AS(
        SequenceRecordReaderDataSetIterator(std::shared_ptr<SequenceRecordReader>(), 2, 2, 0),
        ConfigError);
  }

  TEST_CASE("SequenceRecordReaderDataSetIterator: a bad value names file, line and column") {
    // The first sequence is read at construction: its errors come from the constructor.
    SequenceFiles first({"1,2\n3,x\n"}, {"0\n1\n"});
    CHECK_THROWS_WITH_AS(
        SequenceRecordReaderDataSetIterator(first.features, first.labels, 2, 2),
        (first.featurePath(0) + ": line 2, column 2: 'x' is not a finite number").c_str(),
        DataFormatError);
    SequenceFiles bad({"1,2\n", "1,2\n3,x\n"}, {"0\n", "0\n1\n"});
    SequenceRecordReaderDataSetIterator later(bad.features, bad.labels, 1, 2);
    later.next();
    CHECK(errorOf<DataFormatError>(later) ==
          bad.featurePath(1) + ": line 2, column 2: 'x' is not a finite number");

    SequenceFiles cls({"1\n", "2\n3\n"}, {"0\n", "1\n2\n"});
    SequenceRecordReaderDataSetIterator classes(cls.features, cls.labels, 1, 2);
    CHECK(errorOf<DataFormatError>(classes) ==
          cls.labelPath(1) + ": line 2, column 1: class '2' is not an integer in [0, 2)");

    SequenceFiles wide({"1\n"}, {"0,1\n"});
    CHECK_THROWS_WITH_AS(
        SequenceRecordReaderDataSetIterator(wide.features, wide.labels, 1, 2),
        (wide.labelPath(0) + ": line 1: a classification label file holds one column (the class "
                             "index at each time step), this one holds 2; for several label values "
                             "per step use regression = true")
            .c_str(),
        DataFormatError);

    SequenceFiles widths({"1,2\n", "1,2,3\n"}, {"0\n", "1\n"});
    SequenceRecordReaderDataSetIterator w(widths.features, widths.labels, 1, 2);
    CHECK(errorOf<DataFormatError>(w) ==
          widths.featurePath(1) + ": line 1: 3 columns where the first feature sequence (" +
              widths.featurePath(0) + ") has 2: every feature sequence has the same columns");

    // The readers' own errors pass through: a ragged file, an empty one.
    SequenceFiles ragged({"1,2\n", "1,2\n3\n"}, {"0\n", "0\n1\n"});
    SequenceRecordReaderDataSetIterator r(ragged.features, ragged.labels, 1, 2);
    CHECK(errorOf<DataFormatError>(r) ==
          ragged.featurePath(1) +
              ": line 2: 1 field where the sequence's first time step (line 1) has 2: every line "
              "of a sequence file is one time step with the same columns");
    SequenceFiles empty({"1\n", ""}, {"0\n", "1\n"});
    SequenceRecordReaderDataSetIterator e(empty.features, empty.labels, 1, 2);
    CHECK(errorOf<DataFormatError>(e) ==
          empty.featurePath(1) +
              ": the sequence file holds no time step: a sequence needs at least one line");
  }

  TEST_CASE("SequenceRecordReaderDataSetIterator: label index out of range") {
    SequenceFiles f({"1,2\n3,4\n"});
    CHECK_THROWS_WITH_AS(
        SequenceRecordReaderDataSetIterator(f.features, 2, 3, 2),
        (f.featurePath(0) +
         ": line 1, column 1: label column 3 (labelIndex 2) is beyond the record's 2 columns")
            .c_str(),
        DataFormatError);
    SequenceFiles one({"1\n"});
    CHECK_THROWS_WITH_AS(SequenceRecordReaderDataSetIterator(one.features, 2, 3, 0),
                         doctest::Contains("no feature column is left"), DataFormatError);
    CHECK_THROWS_AS(SequenceRecordReaderDataSetIterator(f.features, 2, 3, -1), ConfigError);
  }

  TEST_CASE("SequenceRecordReaderDataSetIterator: features and labels that do not pair up") {
    // EQUAL_LENGTH with a label sequence of another length: both files named.
    SequenceFiles f({"1\n2\n", "1\n2\n3\n"}, {"0\n1\n", "0\n1\n"});
    SequenceRecordReaderDataSetIterator it(f.features, f.labels, 1, 2);
    it.next();
    CHECK(errorOf<DataMismatchError>(it) ==
          "SequenceRecordReaderDataSetIterator: the feature sequence " + f.featurePath(1) +
              " holds 3 time steps but its label sequence " + f.labelPath(1) +
              " holds 2 time steps; with AlignmentMode::EQUAL_LENGTH they must be equal "
              "(ALIGN_START or ALIGN_END pad the shorter one and mask the padding)");
    // The same files align in the other modes.
    SequenceRecordReaderDataSetIterator start(f.features, f.labels, 2, 2, false,
                                              AlignmentMode::ALIGN_START);
    CHECK(values(start.next().labelsMask) == std::vector<float>{1, 1, 0, 1, 1, 0});

    // Different numbers of files: known at construction.
    SequenceFiles counts({"1\n", "2\n", "3\n"}, {"0\n", "1\n"});
    CHECK_THROWS_WITH_AS(
        SequenceRecordReaderDataSetIterator(counts.features, counts.labels, 2, 2),
        doctest::Contains(("the features reader holds 3 sequences (3 sequence files (" +
                           counts.featurePath(0) + " ...)) but the labels reader holds 2")
                              .c_str()),
        DataMismatchError);

    // Readers that cannot count: found where the shorter one ends, in the first epoch.
    ListSequenceReader features(
        {sequence("f0", {{"1"}}), sequence("f1", {{"2"}}), sequence("f2", {{"3"}})});
    ListSequenceReader labels({sequence("l0", {{"0"}}), sequence("l1", {{"1"}})});
    SequenceRecordReaderDataSetIterator lazy(features, labels, 2, 2);
    CHECK(lazy.totalExamples() == -1);
    CHECK(errorOf<DataMismatchError>(lazy) ==
          "SequenceRecordReaderDataSetIterator: the labels reader ends after 2 sequences but "
          "the features reader holds more (the sequence reader's input and the sequence "
          "reader's input); the i-th feature sequence goes with the i-th label sequence");
    ListSequenceReader fewer({sequence("f0", {{"1"}}), sequence("f1", {{"2"}})});
    ListSequenceReader more(
        {sequence("l0", {{"0"}}), sequence("l1", {{"1"}}), sequence("l2", {{"1"}})});
    SequenceRecordReaderDataSetIterator moreLabels(fewer, more, 2, 2);
    CHECK(errorOf<DataMismatchError>(moreLabels) ==
          "SequenceRecordReaderDataSetIterator: the features reader ends after 2 sequences but "
          "the labels reader holds more (the sequence reader's input and the sequence "
          "reader's input); the i-th feature sequence goes with the i-th label sequence");
    // Counted once an epoch has been read.
    ListSequenceReader a({sequence("f0", {{"1"}}), sequence("f1", {{"2"}})});
    ListSequenceReader b({sequence("l0", {{"0"}}), sequence("l1", {{"1"}})});
    SequenceRecordReaderDataSetIterator counted(a, b, 1, 2);
    while (counted.hasNext()) counted.next();
    CHECK(counted.totalExamples() == 2);
  }

  TEST_CASE("SequenceRecordReaderDataSetIterator: bad settings and readers without data") {
    SequenceFiles f({"1\n"}, {"0\n"});
    CHECK_THROWS_AS(SequenceRecordReaderDataSetIterator(f.features, f.labels, 0, 2), ConfigError);
    CHECK_THROWS_AS(SequenceRecordReaderDataSetIterator(f.features, f.labels, 1, 0), ConfigError);
    CHECK_THROWS_WITH_AS(SequenceRecordReaderDataSetIterator(f.features, f.features, 1, 2),
                         doctest::Contains("the same reader is given for features and labels"),
                         ConfigError);
    ListSequenceReader none({}), noLabels({});
    CHECK_THROWS_WITH_AS(SequenceRecordReaderDataSetIterator(none, noLabels, 1, 2),
                         "SequenceRecordReaderDataSetIterator: the sequence reader's input holds "
                         "no sequence: there is nothing to make a batch of",
                         DataError);
  }
}

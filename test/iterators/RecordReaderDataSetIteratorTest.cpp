#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "TempDir.h"
#include "iterators/AsyncDataSetIterator.h"
#include "iterators/CSVRecordReader.h"
#include "iterators/RecordReaderDataSetIterator.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

struct CsvFile {
  testutil::TempDir dir;
  std::filesystem::path path;
  CSVRecordReader reader;
  explicit CsvFile(const std::string& content, int64_t skip = 0) : reader(skip) {
    path = dir / "data.csv";
    std::ofstream(path, std::ios::binary) << content;
    reader.initialize(path);
  }
};

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data(), t.data() + t.numel());
}

// `message` with every occurrence of `path` written as "FILE".
std::string withFile(std::string message, const std::string& path) {
  for (size_t at; (at = message.find(path)) != std::string::npos;)
    message.replace(at, path.size(), "FILE");
  return message;
}

// The message of the DataFormatError that reading every batch of `it` throws.
std::string epochError(DataSetIterator& it) {
  try {
    while (it.hasNext()) it.next();
  } catch (const DataFormatError& e) {
    return e.what();
  }
  return "(no DataFormatError)";
}

std::string classificationError(const std::string& content, int labelIndex = 2,
                                int numClasses = 3) {
  CsvFile f(content);
  try {
    RecordReaderDataSetIterator it(f.reader, 2, labelIndex, numClasses);
    return withFile(epochError(it), f.path.string());
  } catch (const DataFormatError& e) {
    return withFile(e.what(), f.path.string());
  }
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("RecordReaderDataSetIterator: classification batches with one-hot labels") {
    CsvFile f("count,x\n1,2,0\n3,+4,2\n 5 ,6e0,1\n", 1);
    RecordReaderDataSetIterator it(f.reader, 2, 2, 3);
    CHECK(it.inputColumns() == 2);
    CHECK(it.totalOutcomes() == 3);
    CHECK(it.batch() == 2);
    CHECK(it.totalExamples() == -1);  // not known until an epoch has been read
    REQUIRE(it.hasNext());
    DataSet b = it.next();
    CHECK(b.features.shape() == Shape{2, 2});
    CHECK(values(b.features) == std::vector<float>{1, 2, 3, 4});
    CHECK(values(b.labels) == std::vector<float>{1, 0, 0, 0, 0, 1});
    b = it.next();  // the last, partial batch is kept
    CHECK(values(b.features) == std::vector<float>{5, 6});
    CHECK(values(b.labels) == std::vector<float>{0, 1, 0});
    CHECK_FALSE(it.hasNext());
    CHECK_THROWS_AS(it.next(), DataError);
    CHECK(it.totalExamples() == 3);
    it.reset();
    CHECK(values(it.next().features) == std::vector<float>{1, 2, 3, 4});
  }

  TEST_CASE("RecordReaderDataSetIterator: regression takes a range of label columns as they are") {
    CsvFile f("1,2,3,4\n5,6,7,8\n");
    RecordReaderDataSetIterator it(f.reader, 10, 1, 2, true);
    CHECK(it.inputColumns() == 2);
    CHECK(it.totalOutcomes() == 2);
    const DataSet b = it.next();
    CHECK(values(b.features) == std::vector<float>{1, 4, 5, 8});
    CHECK(values(b.labels) == std::vector<float>{2, 3, 6, 7});
    CHECK_THROWS_AS(RecordReaderDataSetIterator(f.reader, 10, 1, 2, false), ConfigError);
    CHECK_THROWS_AS(RecordReaderDataSetIterator(f.reader, 10, 2, 1, true), ConfigError);
    CHECK_THROWS_AS(RecordReaderDataSetIterator(f.reader, 0, 1, 3), ConfigError);
    CHECK_THROWS_AS(RecordReaderDataSetIterator(f.reader, 1, -1, 3), ConfigError);
    CHECK_THROWS_AS(RecordReaderDataSetIterator(f.reader, 1, 1, 0), ConfigError);
  }

  TEST_CASE("RecordReaderDataSetIterator: runs behind AsyncDataSetIterator") {
    std::string content;
    for (int i = 0; i < 100; ++i) content += std::to_string(i) + "," + std::to_string(i % 2) + "\n";
    CsvFile f(content);
    RecordReaderDataSetIterator it(f.reader, 7, 1, 2);
    AsyncDataSetIterator async(it, 3);
    for (int epoch = 0; epoch < 2; ++epoch) {
      std::vector<float> seen;
      while (async.hasNext()) {
        const DataSet b = async.next();
        for (float v : values(b.features)) seen.push_back(v);
      }
      REQUIRE(seen.size() == 100);
      for (int i = 0; i < 100; ++i) CHECK(seen[i] == static_cast<float>(i));
      async.reset();
    }
  }

  TEST_CASE("RecordReaderDataSetIterator: a bad value names file, line and column") {
    const std::string file = "FILE";
    CHECK(classificationError("1,2,0\n3,4\n") ==
          file + ": line 2, column 3: the record has 2 columns, expected 3 (as on line 1 of " +
              file + ")");
    CHECK(classificationError("1,2,0\n3,4,1,9\n") ==
          file + ": line 2, column 4: the record has 4 columns, expected 3 (as on line 1 of " +
              file + ")");
    CHECK(classificationError("1,2,0\n3,abc,1\n") ==
          file + ": line 2, column 2: 'abc' is not a finite number");
    CHECK(classificationError("1,2,0\n\n3,,1\n") ==
          file + ": line 3, column 2: empty value where a number is expected");
    CHECK(classificationError("nan,2,0\n") ==
          file + ": line 1, column 1: 'nan' is not a finite number");
    CHECK(classificationError("1,-inf,0\n") ==
          file + ": line 1, column 2: '-inf' is not a finite number");
    CHECK(classificationError("1,1e39,0\n") ==
          file + ": line 1, column 2: '1e39' is not a finite number in float's range");
    CHECK(classificationError("1,2 3,0\n") ==
          file + ": line 1, column 2: '2 3' is not a finite number");
    CHECK(classificationError("1,2,3\n") ==
          file + ": line 1, column 3: class '3' is not an integer in [0, 3)");
    CHECK(classificationError("1,2,-1\n") ==
          file + ": line 1, column 3: class '-1' is not an integer in [0, 3)");
    CHECK(classificationError("1,2,0.5\n") ==
          file + ": line 1, column 3: class '0.5' is not an integer in [0, 3)");
    CHECK(classificationError("1,2\n", 2) ==
          file + ": line 1, column 1: label column 3 is beyond the record's 2 columns");
    CHECK(classificationError("1\n", 0) ==
          file +
              ": line 1, column 1: the record's 1 columns are all labels; no feature column "
              "is left");
  }

  TEST_CASE("RecordReaderDataSetIterator: a table without data rows is refused, naming the file") {
    CsvFile header("a,b,label\n", 1);
    CHECK_THROWS_WITH_AS(RecordReaderDataSetIterator(header.reader, 4, 2, 2),
                         ("RecordReaderDataSetIterator: " + header.path.string() +
                          " (past its 1 header line) holds no data rows: there is no record to "
                          "make a batch of")
                             .c_str(),
                         DataError);
    CsvFile empty("");
    CHECK_THROWS_WITH_AS(RecordReaderDataSetIterator(empty.reader, 4, 2, 2),
                         doctest::Contains((empty.path.string() + " holds no data rows").c_str()),
                         DataError);
    // Several files: named by their folder.
    testutil::TempDir dir;
    std::ofstream(dir / "a.csv") << "h1\n";
    std::ofstream(dir / "b.csv") << "h2\n";
    CSVRecordReader reader(1);
    reader.initialize(dir.path());
    CHECK_THROWS_WITH_AS(RecordReaderDataSetIterator(reader, 4, 0, 2),
                         doctest::Contains(("the 2 files of " + dir.path().string() +
                                            " (past each one's 1 header line) holds no data rows")
                                               .c_str()),
                         DataError);
  }

  TEST_CASE("RecordReaderDataSetIterator: a value in a message is bounded and escaped") {
    // A 1 MB cell: the message quotes 40 bytes of it and says how long it was.
    const std::string big = classificationError("1," + std::string(1 << 20, 'a') + ",0\n");
    CHECK(big == "FILE: line 1, column 2: '" + std::string(40, 'a') +
                     "...' (1048576 bytes) is not a finite number");
    // CR, ESC and NUL reach the message as \xNN, and nothing after them is lost.
    const std::string hostile =
        classificationError(std::string("1,\x1b[2J\rA\0B,0\n", 13) + "2,3,0\n");
    CHECK(hostile == "FILE: line 1, column 2: '\\x1b[2J\\x0dA\\x00B' is not a finite number");
  }

  TEST_CASE(
      "RecordReaderDataSetIterator: given the reader as a shared_ptr, the iterator keeps it "
      "alive") {
    testutil::TempDir dir;
    std::ofstream(dir / "data.csv", std::ios::binary) << "x,y,label\n1,2,0\n3,4,1\n5,6,2\n";
    const auto make = [&] {
      auto rr = std::make_shared<CSVRecordReader>(1);
      rr->initialize(FileSplit(dir / "data.csv"));
      return std::make_unique<RecordReaderDataSetIterator>(rr, 2, 2, 3);  // rr goes out of scope
    };
    const std::unique_ptr<RecordReaderDataSetIterator> it = make();
    CHECK(values(it->next().features) == std::vector<float>{1, 2, 3, 4});
    CHECK(values(it->next().labels) == std::vector<float>{0, 0, 1});
    it->reset();
    CHECK(values(it->next().labels) == std::vector<float>{1, 0, 0, 0, 1, 0});
    CHECK(it->getLabels().empty());

    auto values2 = std::make_shared<CSVRecordReader>(1);
    values2->initialize(FileSplit(dir / "data.csv"));
    RecordReaderDataSetIterator regression(values2, 3, 0, 1, true);
    CHECK(values(regression.next().labels) == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK_THROWS_AS(RecordReaderDataSetIterator(std::shared_ptr<RecordReader>(), 2, 2, 3),
                    ConfigError);
  }
}

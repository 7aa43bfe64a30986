#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "TempDir.h"
#include "iterators/CSVSequenceRecordReader.h"
#include "iterators/FileSplit.h"
#include "iterators/NumberedFileInputSplit.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

std::filesystem::path write(const testutil::TempDir& dir, const std::string& name,
                            const std::string& content) {
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

using Steps = std::vector<std::vector<std::string>>;

// The message of the error reading the next sequence of `reader` throws.
template <typename E>
std::string errorOf(SequenceRecordReader& reader) {
  try {
    reader.sequenceRecord();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("CSVSequenceRecordReader: one sequence per file, one time step per line") {
    testutil::TempDir dir;
    write(dir, "0.csv", "t,a,b\n1,2,3\r\n\n4,\"5,5\",6\n");
    write(dir, "1.csv", "t,a\n7,8\n");
    write(dir, "10.csv", "h\n9\n10\n11\n");
    write(dir, "2.csv", "h\n12\n");
    CSVSequenceRecordReader reader(1, ',');
    reader.initialize(NumberedFileInputSplit((dir.path() / "%d.csv").string(), 0, 1));
    CHECK(reader.numSequences() == 2);
    REQUIRE(reader.hasNext());
    SequenceRecord s = reader.sequenceRecord();
    CHECK(s.steps == Steps{{"1", "2", "3"}, {"4", "5,5", "6"}});
    CHECK(s.lines == std::vector<int64_t>{2, 4});
    CHECK(s.file == (dir / "0.csv").string());
    CHECK(s.length() == 2);
    s = reader.sequenceRecord();
    CHECK(s.steps == Steps{{"7", "8"}});
    CHECK_FALSE(reader.hasNext());
    CHECK_THROWS_AS(reader.sequenceRecord(), DataError);
    reader.reset();
    CHECK(reader.sequenceRecord().steps.size() == 2);

    // A folder: its files sorted by name, 10.csv before 2.csv (NumberedFileInputSplit's order is
    // numeric).
    CSVSequenceRecordReader all(1);
    all.initialize(FileSplit(dir.path()));
    std::vector<std::string> names;
    while (all.hasNext()) names.push_back(all.sequenceRecord().file);
    CHECK(names == std::vector<std::string>{(dir / "0.csv").string(), (dir / "1.csv").string(),
                                            (dir / "10.csv").string(), (dir / "2.csv").string()});
    // Another delimiter.
    CSVSequenceRecordReader tabs(0, '\t');
    tabs.initialize(FileSplit(write(dir, "t.tsv", "1\t2\n3\t4\n")));
    CHECK(tabs.sequenceRecord().steps == Steps{{"1", "2"}, {"3", "4"}});
  }

  TEST_CASE("CSVSequenceRecordReader: ragged lines and empty files name the file and line") {
    testutil::TempDir dir;
    const auto ragged = write(dir, "ragged.csv", "1,2,3\n4,5,6\n\n7,8\n");
    const auto empty = write(dir, "empty.csv", "");
    const auto header = write(dir, "header.csv", "a,b\n");
    CSVSequenceRecordReader reader;
    reader.initialize(InputSplit({ragged, empty, header}));
    CHECK(errorOf<DataFormatError>(reader) ==
          ragged.string() +
              ": line 4: 2 fields where the sequence's first time step (line 1) has 3: every line "
              "of a sequence file is one time step with the same columns");
    CHECK(errorOf<DataFormatError>(reader) ==
          empty.string() +
              ": the sequence file holds no time step: a sequence needs at least one line");
    // A header and nothing else is empty past the header.
    CSVSequenceRecordReader skip(1);
    skip.initialize(FileSplit(header));
    CHECK(errorOf<DataFormatError>(skip) ==
          header.string() +
              ": the sequence file holds no time step (past its 1 header line): a sequence needs "
              "at least one line");
    // A missing file of a numbered split is named when it is read.
    CSVSequenceRecordReader numbered;
    numbered.initialize(NumberedFileInputSplit((dir.path() / "seq_%d.csv").string(), 0, 0));
    CHECK_THROWS_WITH_AS(numbered.sequenceRecord(),
                         doctest::Contains((dir / "seq_0.csv").string().c_str()),
                         DataNotFoundError);
    // An unclosed quote: the parser's error, with line and column.
    CSVSequenceRecordReader quoted;
    quoted.initialize(FileSplit(write(dir, "q.csv", "1,2\n3,\"4\n")));
    CHECK_THROWS_WITH_AS(quoted.sequenceRecord(), doctest::Contains("q.csv: line 2, column 3"),
                         DataFormatError);
  }

  TEST_CASE("CSVSequenceRecordReader: bad settings and reading before initialize()") {
    CHECK_THROWS_AS(CSVSequenceRecordReader(-1), ConfigError);
    CHECK_THROWS_AS(CSVSequenceRecordReader(0, '\n'), ConfigError);
    CHECK_THROWS_AS(CSVSequenceRecordReader(0, ',', ','), ConfigError);
    CSVSequenceRecordReader reader;
    CHECK_THROWS_WITH_AS(reader.hasNext(), "CSVSequenceRecordReader: hasNext() before initialize()",
                         ConfigError);
    CHECK_THROWS_AS(reader.reset(), ConfigError);
    CHECK(reader.numSequences() == -1);
  }
}

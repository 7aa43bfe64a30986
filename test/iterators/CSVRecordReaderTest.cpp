#include <doctest/doctest.h>
#include <zlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "TempDir.h"
#include "iterators/CSVRecordReader.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

std::filesystem::path write(const testutil::TempDir& dir, const std::string& name,
                            const std::string& content) {
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// Every record of `path` as its fields, with the line each starts on appended as "@line".
std::vector<std::vector<std::string>> readAll(CSVRecordReader& reader,
                                              const std::filesystem::path& path) {
  reader.initialize(path);
  std::vector<std::vector<std::string>> out;
  while (reader.hasNext()) {
    Record r = reader.next();
    r.values.push_back("@" + std::to_string(r.line));
    out.push_back(r.values);
  }
  return out;
}

using Rows = std::vector<std::vector<std::string>>;

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("CSVRecordReader: fields, header lines, CRLF, empty lines and a missing last newline") {
    testutil::TempDir dir;
    const auto path = write(dir, "a.csv", "h1,h2\r\nx,y\r\n1,2\r\n\r\n\n3,,4\n5,6");
    CSVRecordReader reader(2);
    CHECK(readAll(reader, path) == Rows{{"1", "2", "@3"}, {"3", "", "4", "@6"}, {"5", "6", "@7"}});
    CSVRecordReader all;
    CHECK(readAll(all, path).size() == 5);
    CSVRecordReader tabs(0, '\t');
    CHECK(readAll(tabs, write(dir, "t.tsv", "a\tb,c\n")) == Rows{{"a", "b,c", "@1"}});
  }

  TEST_CASE("CSVRecordReader: RFC 4180 quoting") {
    testutil::TempDir dir;
    // A delimiter, a doubled quote and a CRLF inside quotes; an empty quoted field; a quote
    // inside an unquoted field is an ordinary character; a lone CR is data.
    const auto path =
        write(dir, "q.csv", "\"a,b\",\"say \"\"hi\"\"\",\"two\r\nlines\"\n\"\",x\"y,c\rd\n'q'\n");
    CSVRecordReader reader;
    CHECK(readAll(reader, path) == Rows{{"a,b", "say \"hi\"", "two\r\nlines", "@1"},
                                        {"", "x\"y", "c\rd", "@3"},
                                        {"'q'", "@4"}});
    CSVRecordReader single(0, ';', '\'');
    CHECK(readAll(single, write(dir, "s.csv", "'a;b';'it''s'\n")) == Rows{{"a;b", "it's", "@1"}});
  }

  TEST_CASE("CSVRecordReader: records spanning the read buffer, a UTF-8 BOM, gzip") {
    testutil::TempDir dir;
    // 70 000 rows cross the 64 KiB buffer at every kind of position, CRLF pairs included.
    std::string big = "\xef\xbb\xbfid,text\r\n";
    for (int i = 0; i < 70000; ++i)
      big += std::to_string(i) + ",\"v" + std::to_string(i) + "\r\n\"\"\"\r\n";
    const auto path = write(dir, "big.csv", big);
    CSVRecordReader reader;
    reader.initialize(path);
    REQUIRE(reader.hasNext());
    CHECK(reader.next().values == std::vector<std::string>{"id", "text"});
    int64_t n = 0;
    while (reader.hasNext()) {
      const Record r = reader.next();
      REQUIRE(r.values ==
              std::vector<std::string>{std::to_string(n), "v" + std::to_string(n) + "\r\n\""});
      REQUIRE(r.line == 2 + 2 * n);
      ++n;
    }
    CHECK(n == 70000);

    const auto gz = dir / "small.csv.gz";
    gzFile f = gzopen(gz.c_str(), "wb");
    const std::string text = "1,2\n3,4\n";
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
    CSVRecordReader gzReader;
    CHECK(readAll(gzReader, gz) == Rows{{"1", "2", "@1"}, {"3", "4", "@2"}});
  }

  TEST_CASE("CSVRecordReader: a directory is read file by file in sorted order, reset restarts") {
    testutil::TempDir dir;
    std::filesystem::create_directory(dir / "d");
    write(dir, "d/b.csv", "h\n3\n");
    write(dir, "d/a.csv", "h\n1\n2\n");
    CSVRecordReader reader(1);
    reader.initialize(FileSplit(dir / "d"));
    std::vector<std::string> seen;
    while (reader.hasNext()) {
      const Record r = reader.next();
      seen.push_back(std::filesystem::path(r.file).filename().string() + ":" + r.values[0]);
    }
    CHECK(seen == std::vector<std::string>{"a.csv:1", "a.csv:2", "b.csv:3"});
    CHECK_THROWS_AS(reader.next(), DataError);
    reader.reset();
    CHECK(reader.next().values[0] == "1");
  }

  TEST_CASE("CSVRecordReader: bad input is a typed error naming file, line and column") {
    testutil::TempDir dir;
    CSVRecordReader reader;
    const auto open = write(dir, "open.csv", "1,2\n3,\"abc\n4,5\n");
    CHECK_THROWS_WITH_AS(
        readAll(reader, open),
        (open.string() + ": line 2, column 3: unterminated quoted field: the quote opened here "
                         "is never closed")
            .c_str(),
        DataFormatError);
    const auto after = write(dir, "after.csv", "1,2\n\"ab\"c,3\n");
    CHECK_THROWS_WITH_AS(
        readAll(reader, after),
        (after.string() + ": line 2, column 5: 'c' after the closing quote of a field (expected "
                          "the delimiter or the end of the line)")
            .c_str(),
        DataFormatError);
    const std::string missing = (dir / "missing.csv").string();
    CHECK_THROWS_WITH_AS(reader.initialize(missing), doctest::Contains(missing.c_str()),
                         DataNotFoundError);
    std::filesystem::create_directory(dir / "empty");
    CHECK_THROWS_AS(reader.initialize(dir / "empty"), DataNotFoundError);
    CSVRecordReader fresh;
    CHECK_THROWS_AS(fresh.hasNext(), ConfigError);
    CHECK_THROWS_AS(CSVRecordReader(-1), ConfigError);
    CHECK_THROWS_AS(CSVRecordReader(0, ',', ','), ConfigError);
    CHECK_THROWS_AS(CSVRecordReader(0, '\n'), ConfigError);
  }

  TEST_CASE("CSVRecordReader: a record longer than the limit is an error, not unbounded memory") {
    testutil::TempDir dir;
    const auto path =
        write(dir, "long.csv", "1\n\"" + std::string(CsvRecordParser::kMaxRecordBytes + 1, 'x'));
    CSVRecordReader reader;
    CHECK_THROWS_WITH_AS(readAll(reader, path),
                         doctest::Contains("the record starting on line 2 is longer than"),
                         DataFormatError);
  }
}

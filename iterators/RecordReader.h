#pragma once
// RecordReader: a source of records (rows of text fields), as DataVec's RecordReader. A record
// carries where it came from, so that whoever converts its fields (RecordReaderDataSetIterator)
// can name the file, line and column of a value that does not convert.
//
// Contract: initialize() (re)starts reading a FileSplit from its beginning; hasNext() says whether
// next() has a record left and may read ahead, so it throws the reader's errors; next() when
// hasNext() is false throws DataError; reset() starts again from the first record.
#include <cstdint>
#include <string>
#include <vector>

#include "iterators/FileSplit.h"

namespace dl4cpp {

struct Record {
  std::vector<std::string> values;  // the fields, in column order
  std::string file;                 // the file the record was read from
  int64_t line = 0;                 // 1-based line of the file on which the record starts
};

class RecordReader {
 public:
  virtual ~RecordReader() = default;

  virtual void initialize(const FileSplit& split) = 0;
  virtual bool hasNext() = 0;
  virtual Record next() = 0;
  virtual void reset() = 0;
  // "data.csv", "the 3 files of data/", with whatever the reader leaves out ("past its 1 header
  // line").
  virtual std::string describeSource() const { return "the record reader's input"; }

 protected:
  RecordReader() = default;
  RecordReader(const RecordReader&) = default;
  RecordReader& operator=(const RecordReader&) = default;
};

}  // namespace dl4cpp

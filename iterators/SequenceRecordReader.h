#pragma once
// SequenceRecordReader: a source of sequences, as DataVec's SequenceRecordReader: each
// sequence is a list of time steps, each step a record of text fields. A sequence carries where
// it came from, so that whoever converts its fields (SequenceRecordReaderDataSetIterator) can name
// the file, line and column of a value that does not convert.
//
// Contract: initialize() (re)starts reading an InputSplit (FileSplit, NumberedFileInputSplit) from
// its first sequence; hasNext() says whether sequenceRecord() has a sequence left;
// sequenceRecord() when hasNext() is false throws DataError; reset() starts again from the first
// sequence.
#include <cstdint>
#include <string>
#include <vector>

#include "iterators/InputSplit.h"

namespace dl4cpp {

struct SequenceRecord {
  // One record per time step, in order; each the step's fields in column order.
  std::vector<std::vector<std::string>> steps;
  std::vector<int64_t> lines;  // lines[t]: the 1-based line of the file step t starts on
  std::string file;            // the file the sequence was read from

  int64_t length() const { return static_cast<int64_t>(steps.size()); }
};

class SequenceRecordReader {
 public:
  virtual ~SequenceRecordReader() = default;

  virtual void initialize(const InputSplit& split) = 0;
  virtual bool hasNext() = 0;
  // DataVec's sequenceRecord(): the next sequence.
  virtual SequenceRecord sequenceRecord() = 0;
  virtual void reset() = 0;
  // Sequences per pass, or -1 when the reader cannot tell before reading them.
  virtual int64_t numSequences() const { return -1; }
  // "the 3 files of data/", with whatever the reader leaves out ("past each one's 1 header
  // line").
  virtual std::string describeSource() const { return "the sequence reader's input"; }

 protected:
  SequenceRecordReader() = default;
  SequenceRecordReader(const SequenceRecordReader&) = default;
  SequenceRecordReader& operator=(const SequenceRecordReader&) = default;
};

}  // namespace dl4cpp

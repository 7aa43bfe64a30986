// Replays the committed corpus of the ONNX importer's fuzz target (test/fuzz/onnx_import_fuzz.cpp,
// scripts/fuzz.sh onnx_import_fuzz) through the same code the target runs, so every input it ever
// crashed on stays fixed in the ordinary test suite.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "TestPaths.h"
#include "fuzz/OnnxImportFuzzInput.h"
#include "nn/core/AtomicFile.h"
#include "nn/onnx/OnnxExportTestUtil.h"

using namespace dl4cpp;

namespace {

const std::filesystem::path kCorpus = testutil::testDataDir() / "onnx-import-corpus";

std::vector<std::filesystem::path> corpusFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("OnnxImportCorpus: every input is imported whole or refused with a dl4cpp error") {
  const auto files = corpusFiles();
  REQUIRE(files.size() >= 60);
  int imported = 0, seeds = 0;
  for (const auto& file : files) {
    CAPTURE(file.filename().string());
    const std::vector<std::byte> bytes = readWholeFile(file, "a corpus file");
    bool ok = false;
    CHECK_NOTHROW(ok = fuzz::importOnnxInput(bytes));
    const std::string name = file.filename().string();
    // The seeds written by make_import_cases.py and exported by dl4cpp are valid models, except
    // those it writes for the importer to refuse (bad_*).
    if (name.starts_with("seed-") && !name.starts_with("seed-bad_")) {
      ++seeds;
      CHECK(ok);
    }
    imported += ok ? 1 : 0;
  }
  CHECK(seeds >= 40);
  MESSAGE(files.size() << " corpus inputs, " << imported << " imported");
}

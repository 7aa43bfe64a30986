// ONNX's own backend node tests (the cases Debian's python3-onnx generates), run through the
// importer: each case of an operator the importer maps is imported and run on the case's inputs
// and compared with its expected outputs (within 1e-4 + 1e-3 |expected|, ONNX's backend tests
// use rtol 1e-3). Each case is reported as passed, refused (the importer's ModelExchangeError:
// a form of the operator it does not map, e.g. 1-D or 3-D windows), skipped (an operator it
// does not map) or failed (imported, but computing something else, or another error); the test
// fails if any case fails. test/nn/onnx/node_test_cases.py prepares the cases.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "TempDir.h"
#include "TestPaths.h"
#include "nn/onnx/OnnxImport.h"

using namespace dl4cpp;

namespace {

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, by);) parts.push_back(part);
  if (!text.empty() && text.back() == by) parts.emplace_back();
  return parts;
}

Shape shapeOf(const std::string& text) {
  Shape shape;
  for (const auto& d : split(text, 'x')) shape.push(std::stoll(d));
  return shape;
}

Tensor readRaw(const std::filesystem::path& path, const Shape& shape) {
  Tensor t(shape);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(t.data()), static_cast<std::streamsize>(t.numel() * 4));
  REQUIRE(in.gcount() == t.numel() * 4);
  return t;
}

// Empty when `actual` matches `expected`, else why not.
std::string compare(const Tensor& expected, const Tensor& actual) {
  if (expected.shape() != actual.shape()) return "output shape differs";
  const std::vector<float> e = expected.toVector(), a = actual.toVector();
  for (size_t i = 0; i < e.size(); ++i)
    if (!(std::abs(e[i] - a[i]) <= 1e-4f + 1e-3f * std::abs(e[i])))
      return "value " + std::to_string(i) + ": expected " + std::to_string(e[i]) + ", got " +
             std::to_string(a[i]);
  return {};
}

}  // namespace

TEST_SUITE("nn/onnx") {
  TEST_CASE("OnnxImport: ONNX's backend node tests of the imported operators") {
    if (std::system("/usr/bin/python3 -c 'import onnx.backend.test' >/dev/null 2>&1") != 0) {
      std::cout << "skipped: /usr/bin/python3 cannot import onnx.backend.test (python3-onnx)\n";
      return;
    }
    testutil::TempDir dir;
    const auto script = testutil::ortScript().parent_path() / "node_test_cases.py";
    const std::string command =
        "/usr/bin/python3 '" + script.string() + "' '" + dir.path().string() + "' >/dev/null 2>&1";
    REQUIRE(std::system(command.c_str()) == 0);
    std::ifstream manifest(dir / "cases.txt");
    REQUIRE(manifest);
    int passed = 0, refused = 0, skipped = 0, failed = 0;
    std::string passedList;
    for (std::string line; std::getline(manifest, line);) {
      const auto f = split(line, '|');
      REQUIRE(f.size() == 5);
      const std::string& name = f[0];
      if (!f[2].empty()) {
        ++skipped;
        continue;
      }
      std::string outcome;
      try {
        ComputationGraph graph = onnx::importModel(dir / name / "model.onnx");
        std::vector<Tensor> inputs;
        const auto inShapes = split(f[3], ';'), outShapes = split(f[4], ';');
        for (size_t i = 0; i < inShapes.size(); ++i)
          inputs.push_back(
              readRaw(dir / name / ("in" + std::to_string(i) + ".bin"), shapeOf(inShapes[i])));
        const std::vector<Tensor> outputs = graph.output(inputs);
        if (outputs.size() != outShapes.size()) outcome = "failed: number of outputs";
        for (size_t i = 0; outcome.empty() && i < outShapes.size(); ++i) {
          const std::string why = compare(
              readRaw(dir / name / ("out" + std::to_string(i) + ".bin"), shapeOf(outShapes[i])),
              outputs[i]);
          if (!why.empty()) outcome = "failed: " + why;
        }
      } catch (const ModelExchangeError& e) {
        outcome = std::string("refused: ") + e.what();
      } catch (const std::exception& e) {
        outcome = std::string("failed: ") + e.what();
      }
      if (outcome.empty()) {
        ++passed;
        passedList += " " + name;
        std::cout << "  passed  " << name << "\n";
      } else if (outcome.rfind("refused", 0) == 0) {
        ++refused;
        std::cout << "  " << name << ": " << outcome << "\n";
      } else {
        ++failed;
        std::cout << "  FAILED  " << name << ": " << outcome << "\n";
      }
    }
    std::cout << "ONNX node tests: " << passed << " passed, " << refused
              << " refused by the importer, " << skipped << " skipped (operators not imported), "
              << failed << " failed\n";
    CHECK(failed == 0);
    CHECK(passed > 0);
  }
}

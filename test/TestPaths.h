#pragma once
// Where the tests find the checkout's files: test/data (the committed fixtures and corpora) and the
// ONNX Runtime runner script. The paths are compiled into TestPaths.cpp alone, so that no other
// test source's compile command names the checkout's location and a compiler cache serves every
// clone of the same commit.
#include <filesystem>

namespace testutil {

const std::filesystem::path& testDataDir();
// test/nn/onnx/ort_run.js (builds with ONNX; empty otherwise).
const std::filesystem::path& ortScript();

}  // namespace testutil

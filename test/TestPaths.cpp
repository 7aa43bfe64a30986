#include "TestPaths.h"

namespace testutil {

const std::filesystem::path& testDataDir() {
  static const std::filesystem::path dir = DL4CPP_TEST_DATA_DIR;
  return dir;
}

const std::filesystem::path& ortScript() {
#ifdef DL4CPP_TEST_ORT_SCRIPT
  static const std::filesystem::path script = DL4CPP_TEST_ORT_SCRIPT;
#else
  static const std::filesystem::path script;
#endif
  return script;
}

}  // namespace testutil

#pragma once
// The CSV tables of Debian's python3-sklearn (iris, wine, breast cancer), real data for tests that
// train on it. Their first line is not column names but "<rows>,<features>,<class names...>".
#include <filesystem>
#include <iostream>

namespace testutil {

inline const std::filesystem::path kSklearnData =
    "/usr/lib/python3/dist-packages/sklearn/datasets/data";

// False (after printing the skip line CTest looks for) when python3-sklearn is not installed.
inline bool haveSklearnData() {
  if (std::filesystem::exists(kSklearnData / "iris.csv")) return true;
  std::cout << "skipped: " << kSklearnData.string()
            << " not found (install python3-sklearn: scripts/install-deps.sh)\n";
  return false;
}

}  // namespace testutil

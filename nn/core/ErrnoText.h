#pragma once
// The text of an errno value for error messages, as strerror gives it, but safe while other
// threads do the same: strerror may return a buffer that all threads share, and the library reads
// files from loader, worker and inference threads at once.
#include <string>

namespace dl4cpp {

std::string errnoText(int err);

}  // namespace dl4cpp

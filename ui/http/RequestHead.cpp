#include "ui/http/RequestHead.h"

#include <algorithm>
#include <cctype>

namespace dl4cpp::http {

RequestHeadScanner::State RequestHeadScanner::scan(std::string_view received) {
  if (headBytes_ != 0) return State::Complete;
  const size_t end = std::min(received.size(), maxBytes_);
  for (; scanned_ < end; ++scanned_) {
    const size_t i = scanned_;
    if (received[i] != '\n') continue;
    const bool emptyLine = i >= 1 && received[i - 1] == '\r' && (i == 1 || received[i - 2] == '\n');
    if (emptyLine) {
      headBytes_ = i + 1;
      return State::Complete;
    }
    if (++lines_ > maxLines_ + 1) return State::TooManyLines;
  }
  return received.size() >= maxBytes_ ? State::TooLong : State::Incomplete;
}

bool declaresBody(std::string_view head) {
  for (size_t line = head.find('\n'); line != std::string_view::npos;
       line = head.find('\n', line + 1)) {
    const std::string_view rest = head.substr(line + 1);
    for (const std::string_view name : {"content-length:", "transfer-encoding:"})
      if (rest.size() >= name.size() &&
          std::equal(name.begin(), name.end(), rest.begin(), [](char a, char b) {
            return a == std::tolower(static_cast<unsigned char>(b));
          }))
        return true;
  }
  return false;
}

}  // namespace dl4cpp::http

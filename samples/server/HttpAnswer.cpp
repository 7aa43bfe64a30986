#include "server/HttpAnswer.h"

#include <fmt/format.h>

namespace samples::server {

std::string printable(std::string_view raw, size_t maxBytes) {
  std::string text;
  for (const char c : raw.substr(0, maxBytes)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '\\')
      text += c;
    else
      text += fmt::format("\\x{:02x}", byte);
  }
  if (raw.size() > maxBytes) text += "...";
  return text;
}

}  // namespace samples::server

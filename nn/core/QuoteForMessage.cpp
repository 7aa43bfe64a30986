#include "nn/core/QuoteForMessage.h"

namespace dl4cpp {

std::string escapeForMessage(std::string_view text, size_t maxBytes, char alsoEscape) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string_view shown = text.substr(0, maxBytes);
  std::string out;
  out.reserve(shown.size() + 3);
  for (const char c : shown) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '\\' && (alsoEscape == '\0' || c != alsoEscape)) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  if (text.size() > shown.size()) out += "...";
  return out;
}

std::string quoteForMessage(std::string_view text, size_t maxBytes, char quote) {
  std::string out(1, quote);
  out += escapeForMessage(text, maxBytes, quote);
  out += quote;
  if (text.size() > maxBytes) out += " (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace dl4cpp

#pragma once
// The server's error answers: a JSON object {"error": reason} whatever the client sent, and the
// quoting of client bytes inside reasons.
#include <dl4cpp/nn/util/QuoteForMessage.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace samples::server {

// Client bytes quoted in a message: the library's escapeForMessage (nn/util/QuoteForMessage.h):
// printable ASCII is kept, any other byte (and the backslash) becomes \xNN, and at most
// `maxBytes` of input are shown (then "..."): the message stays short, printable and valid UTF-8
// whatever was sent.
inline std::string printable(std::string_view raw, size_t maxBytes = 64) {
  return dl4cpp::escapeForMessage(raw, maxBytes);
}

// {"error": reason} as JSON text. Bytes of `reason` that are not valid UTF-8 become U+FFFD, so
// serialising never fails.
std::string errorJson(std::string_view reason);

// A whole HTTP/1.1 answer carrying errorJson(reason) and "Connection: close": what the
// connection layer sends for requests it refuses before httplib parses them (408, 413, 431, 503).
std::string closingErrorAnswer(int status, std::string_view reason);

}  // namespace samples::server

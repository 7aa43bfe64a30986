#pragma once
// The inference server's error answers: a JSON object {"error": reason} whatever the client sent
// (errorJson, from the connection layer all dl4cpp servers share), and the quoting of client bytes
// inside reasons.
#include <cstddef>
#include <string>
#include <string_view>

#include "nn/core/QuoteForMessage.h"
#include "ui/http/ErrorAnswer.h"

namespace samples::server {

using dl4cpp::http::errorJson;

// Client bytes quoted in a message: the library's escapeForMessage (nn/core/QuoteForMessage.h):
// printable ASCII is kept, any other byte (and the backslash) becomes \xNN, and at most
// `maxBytes` of input are shown (then "..."): the message stays short, printable and valid UTF-8
// whatever was sent.
inline std::string printable(std::string_view raw, size_t maxBytes = 64) {
  return dl4cpp::escapeForMessage(raw, maxBytes);
}

}  // namespace samples::server

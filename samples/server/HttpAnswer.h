#pragma once
// The inference server's error answers: a JSON object {"error": reason} whatever the client sent
// (errorJson, from the connection layer all dl4cpp servers share), and the quoting of client bytes
// inside reasons.
#include <dl4cpp/ui/http/ErrorAnswer.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace samples::server {

using dl4cpp::http::errorJson;

// Client bytes quoted in a message: printable ASCII is kept, any other byte becomes \xNN, and at
// most `maxBytes` of input are shown (then "..."): the message stays short, printable and valid
// UTF-8 whatever was sent.
std::string printable(std::string_view raw, size_t maxBytes = 64);

}  // namespace samples::server

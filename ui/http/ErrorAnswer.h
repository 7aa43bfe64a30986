#pragma once
// The error answers of dl4cpp's HTTP servers: a JSON object {"error": reason} whatever the client
// sent.
#include <string>
#include <string_view>

namespace dl4cpp::http {

// {"error": reason} as JSON text. Bytes of `reason` that are not valid UTF-8 become U+FFFD, so
// serialising never fails.
std::string errorJson(std::string_view reason);

// A whole HTTP/1.1 answer carrying errorJson(reason) and "Connection: close": what the
// connection layer sends for requests it refuses before httplib parses them (408, 413, 431, 503).
std::string closingErrorAnswer(int status, std::string_view reason);

}  // namespace dl4cpp::http

#pragma once
// What the inference server checks in a request head before it reads any of the body: the
// endpoint and method, and how the body is framed and encoded. Bodies are read only for
// POST /predict, framed by a valid Content-Length within the limit or by chunked encoding, and
// not compressed (a compressed body could expand far beyond the body limit inside httplib's
// decompressor, before any handler sees it).
#include <httplib.h>

#include <cstddef>
#include <optional>
#include <string>

namespace samples::server {

struct Refusal {
  int status;
  std::string reason;
  std::string allow;  // 405: the methods the endpoint takes
};

std::optional<Refusal> checkRequestHead(const httplib::Request& request, size_t maxBodyBytes);

}  // namespace samples::server

#include "server/RequestCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>

#include "server/HttpAnswer.h"

namespace samples::server {
namespace {

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

// The endpoints and the methods each takes (HEAD /health is answered as GET without the body).
struct Endpoint {
  std::string_view path;
  std::string_view methods[2];
};
constexpr Endpoint kEndpoints[] = {{"/health", {"GET", "HEAD"}}, {"/predict", {"POST", ""}}};

std::optional<Refusal> checkFraming(const httplib::Request& request, size_t maxBodyBytes) {
  const size_t lengths = request.get_header_value_count("Content-Length");
  const size_t encodings = request.get_header_value_count("Transfer-Encoding");
  if (lengths > 1 || encodings > 1)
    return Refusal{400, "more than one Content-Length or Transfer-Encoding header", ""};
  if (lengths == 1 && encodings == 1)
    return Refusal{400, "both Content-Length and Transfer-Encoding: send one of them", ""};
  const bool takesBody = request.method == "POST";
  if (encodings == 1) {
    const std::string encoding = request.get_header_value("Transfer-Encoding");
    if (!equalsIgnoringCase(encoding, "chunked"))
      return Refusal{501,
                     fmt::format("Transfer-Encoding '{}' is not supported: send the body chunked "
                                 "or with a Content-Length",
                                 printable(encoding)),
                     ""};
    if (!takesBody) return Refusal{400, fmt::format("{} takes no body", request.method), ""};
    return std::nullopt;
  }
  if (lengths == 0) {
    if (!takesBody) return std::nullopt;
    return Refusal{411, "a POST body needs a Content-Length or chunked Transfer-Encoding", ""};
  }
  const std::string text = request.get_header_value("Content-Length");
  uint64_t length = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), length);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    return Refusal{400, fmt::format("Content-Length '{}' is not a byte count", printable(text)),
                   ""};
  if (!takesBody && length > 0)
    return Refusal{400, fmt::format("{} takes no body", request.method), ""};
  if (length > maxBodyBytes)
    return Refusal{
        413,
        fmt::format("the body of {} bytes exceeds the limit of {} bytes", length, maxBodyBytes),
        ""};
  return std::nullopt;
}

}  // namespace

std::optional<Refusal> checkRequestHead(const httplib::Request& request, size_t maxBodyBytes) {
  const auto endpoint = std::find_if(std::begin(kEndpoints), std::end(kEndpoints),
                                     [&](const Endpoint& e) { return e.path == request.path; });
  if (endpoint == std::end(kEndpoints))
    return Refusal{404,
                   fmt::format("no endpoint '{}': the server answers GET /health and POST /predict",
                               printable(request.path)),
                   ""};
  if (request.method.empty() ||
      std::find(std::begin(endpoint->methods), std::end(endpoint->methods), request.method) ==
          std::end(endpoint->methods)) {
    const std::string allow =
        endpoint->methods[1].empty()
            ? std::string(endpoint->methods[0])
            : fmt::format("{}, {}", endpoint->methods[0], endpoint->methods[1]);
    return Refusal{
        405, fmt::format("{} takes {}, not {}", request.path, allow, printable(request.method)),
        allow};
  }
  if (auto refusal = checkFraming(request, maxBodyBytes)) return refusal;
  const std::string coding = request.get_header_value("Content-Encoding");
  if (request.has_header("Content-Encoding") && !equalsIgnoringCase(coding, "identity"))
    return Refusal{415,
                   fmt::format("Content-Encoding '{}' is not accepted: send the body "
                               "uncompressed",
                               printable(coding)),
                   ""};
  return std::nullopt;
}

}  // namespace samples::server

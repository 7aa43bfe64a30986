#include "ui/http/ErrorAnswer.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace dl4cpp::http {
namespace {

std::string_view reasonPhrase(int status) {
  switch (status) {
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

}  // namespace

std::string errorJson(std::string_view reason) {
  return nlohmann::json{{"error", reason}}.dump(-1, ' ', false,
                                                nlohmann::json::error_handler_t::replace);
}

std::string closingErrorAnswer(int status, std::string_view reason) {
  const std::string body = errorJson(reason);
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
      "Connection: close\r\n\r\n{}",
      status, reasonPhrase(status), body.size(), body);
}

}  // namespace dl4cpp::http

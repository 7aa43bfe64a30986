#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "server/HttpAnswer.h"

using samples::server::closingErrorAnswer;
using samples::server::errorJson;
using samples::server::printable;

TEST_SUITE("samples") {
  TEST_CASE("HttpAnswer: client bytes are quoted as printable ASCII, shortened") {
    CHECK(printable("image/png") == "image/png");
    CHECK(printable("a\xff\"\\\r\n") == "a\\xff\"\\x5c\\x0d\\x0a");
    CHECK(printable(std::string(100, 'x'), 8) == "xxxxxxxx...");
  }

  TEST_CASE("HttpAnswer: an error reason that is not UTF-8 still gives valid JSON") {
    const std::string json = errorJson("bad \xc3\x28 byte");
    CHECK(nlohmann::json::parse(json)["error"] == "bad \xef\xbf\xbd( byte");
  }

  TEST_CASE("HttpAnswer: the answers the connection layer sends close the connection") {
    const std::string answer = closingErrorAnswer(431, "too many headers");
    const std::string body = R"({"error":"too many headers"})";
    CHECK(answer ==
          "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
          "Content-Length: " +
              std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  }
}

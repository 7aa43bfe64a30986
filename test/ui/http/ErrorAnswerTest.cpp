#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ui/http/ErrorAnswer.h"

using dl4cpp::http::closingErrorAnswer;
using dl4cpp::http::errorJson;

TEST_SUITE("ui") {
  TEST_CASE("ErrorAnswer: an error reason that is not UTF-8 still gives valid JSON") {
    const std::string json = errorJson("bad \xc3\x28 byte");
    CHECK(nlohmann::json::parse(json)["error"] == "bad \xef\xbf\xbd( byte");
  }

  TEST_CASE("ErrorAnswer: the answers the connection layer sends close the connection") {
    const std::string answer = closingErrorAnswer(431, "too many headers");
    const std::string body = R"({"error":"too many headers"})";
    CHECK(answer ==
          "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
          "Content-Length: " +
              std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  }
}

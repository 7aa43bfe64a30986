#include <doctest/doctest.h>

#include <string>

#include "ui/http/RequestHead.h"

using dl4cpp::http::declaresBody;
using dl4cpp::http::RequestHeadScanner;
using State = RequestHeadScanner::State;

TEST_SUITE("ui") {
  TEST_CASE(
      "RequestHead: the head ends at the first empty line, whether it arrives whole or byte by "
      "byte") {
    const std::string request =
        "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}GET";
    const size_t headBytes = request.find("\r\n\r\n") + 4;
    RequestHeadScanner whole(1024, 10);
    CHECK(whole.scan(request) == State::Complete);
    CHECK(whole.headBytes() == headBytes);

    RequestHeadScanner piecewise(1024, 10);
    for (size_t n = 1; n < headBytes; ++n)
      CHECK(piecewise.scan(std::string_view(request).substr(0, n)) == State::Incomplete);
    CHECK(piecewise.scan(std::string_view(request).substr(0, headBytes)) == State::Complete);
    CHECK(piecewise.headBytes() == headBytes);

    piecewise.reset();
    CHECK(piecewise.scan("GET / HTTP/1.1\r\n") == State::Incomplete);
  }

  TEST_CASE(
      "RequestHead: an empty line ends the head only after a line feed, as httplib reads it") {
    RequestHeadScanner scanner(1024, 10);
    // A line ending in a bare "\n" is skipped by httplib, and the "\r\n" after it ends the head.
    CHECK(scanner.scan("GET / HTTP/1.1\r\nA: b\n\r\n") == State::Complete);
    CHECK(scanner.headBytes() == 23);
    scanner.reset();
    CHECK(scanner.scan("\r\n") == State::Complete);  // an empty request line: httplib refuses it
    scanner.reset();
    CHECK(scanner.scan("GET / HTTP/1.1\r\nA: b\r\r\n") == State::Incomplete);
  }

  TEST_CASE("RequestHead: more header lines or bytes than allowed") {
    std::string head = "GET / HTTP/1.1\r\n";
    for (int i = 0; i < 3; ++i) head += "A: b\r\n";
    RequestHeadScanner three(1024, 3);
    CHECK(three.scan(head + "\r\n") == State::Complete);
    RequestHeadScanner two(1024, 2);
    CHECK(two.scan(head + "\r\n") == State::TooManyLines);

    RequestHeadScanner small(32, 10);
    CHECK(small.scan(std::string(31, 'a')) == State::Incomplete);
    CHECK(small.scan(std::string(32, 'a')) == State::TooLong);
    RequestHeadScanner exact(32, 10);
    const std::string fits = "GET / HTTP/1.1\r\nA: bcdefghij\r\n\r\n";
    REQUIRE(fits.size() == 32);
    CHECK(exact.scan(fits + "more") == State::Complete);
  }

  TEST_CASE(
      "RequestHead: a head declares a body with a Content-Length or Transfer-Encoding header") {
    CHECK(declaresBody("POST /predict HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"));
    CHECK(declaresBody("POST /predict HTTP/1.1\r\ntransfer-ENCODING: chunked\r\n\r\n"));
    CHECK(!declaresBody("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
    CHECK(!declaresBody("GET /content-length: HTTP/1.1\r\nX-Content-Length: 5\r\n\r\n"));
  }
}

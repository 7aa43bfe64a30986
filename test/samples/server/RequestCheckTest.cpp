#include <doctest/doctest.h>
#include <httplib.h>

#include "server/RequestCheck.h"

using samples::server::checkRequestHead;

namespace {

httplib::Request request(const std::string& method, const std::string& path,
                         httplib::Headers headers = {}) {
  httplib::Request r;
  r.method = method;
  r.path = path;
  r.headers = std::move(headers);
  return r;
}

int statusOf(const httplib::Request& r) {
  const auto refusal = checkRequestHead(r, 1000);
  return refusal ? refusal->status : 0;
}

}  // namespace

TEST_SUITE("samples") {
  TEST_CASE("RequestCheck: the endpoints take their methods and properly framed bodies") {
    CHECK(statusOf(request("GET", "/health")) == 0);
    CHECK(statusOf(request("HEAD", "/health")) == 0);
    CHECK(statusOf(request("POST", "/predict", {{"Content-Length", "1000"}})) == 0);
    CHECK(statusOf(request("POST", "/predict", {{"Transfer-Encoding", "Chunked"}})) == 0);
    CHECK(statusOf(request("POST", "/predict",
                           {{"Content-Length", "10"}, {"Content-Encoding", "identity"}})) == 0);
  }

  TEST_CASE("RequestCheck: each refusal, with its status") {
    CHECK(statusOf(request("GET", "/")) == 404);
    CHECK(statusOf(request("POST", "/health", {{"Content-Length", "0"}})) == 405);
    CHECK(statusOf(request("GET", "/predict")) == 405);
    CHECK(statusOf(request("POST", "/predict")) == 411);
    CHECK(statusOf(request("POST", "/predict", {{"Content-Length", "1001"}})) == 413);
    for (const char* length : {"", "-1", "+5", "12x", "0x10", "99999999999999999999999"}) {
      CAPTURE(length);
      CHECK(statusOf(request("POST", "/predict", {{"Content-Length", length}})) == 400);
    }
    CHECK(statusOf(request("POST", "/predict",
                           {{"Content-Length", "5"}, {"Content-Length", "5"}})) == 400);
    CHECK(statusOf(request("POST", "/predict",
                           {{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}})) == 400);
    CHECK(statusOf(request("POST", "/predict", {{"Transfer-Encoding", "gzip"}})) == 501);
    CHECK(statusOf(request("POST", "/predict",
                           {{"Content-Length", "5"}, {"Content-Encoding", "gzip"}})) == 415);
    CHECK(statusOf(request("GET", "/health", {{"Content-Length", "1"}})) == 400);
    CHECK(statusOf(request("GET", "/health", {{"Transfer-Encoding", "chunked"}})) == 400);
  }

  TEST_CASE(
      "RequestCheck: reasons quote client bytes printably, and 405 names the methods allowed") {
    const auto notFound = checkRequestHead(request("GET", "/\xff\x01"), 1000);
    REQUIRE(notFound);
    CHECK(notFound->reason.find("'/\\xff\\x01'") != std::string::npos);
    const auto wrongMethod = checkRequestHead(request("PUT", "/health"), 1000);
    REQUIRE(wrongMethod);
    CHECK(wrongMethod->allow == "GET, HEAD");
  }
}

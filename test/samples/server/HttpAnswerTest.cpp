#include <doctest/doctest.h>

#include <string>

#include "server/HttpAnswer.h"

using samples::server::printable;

TEST_SUITE("samples") {
  TEST_CASE("HttpAnswer: client bytes are quoted as printable ASCII, shortened") {
    CHECK(printable("image/png") == "image/png");
    CHECK(printable("a\xff\"\\\r\n") == "a\\xff\"\\x5c\\x0d\\x0a");
    CHECK(printable(std::string(100, 'x'), 8) == "xxxxxxxx...");
  }
}

// quoteForMessage / escapeForMessage: user data in error messages, bounded and escaped.
#include <doctest/doctest.h>

#include <string>

#include "nn/core/QuoteForMessage.h"

using namespace dl4cpp;

TEST_SUITE("QuoteForMessage") {
  TEST_CASE("QuoteForMessage: printable ASCII is kept, every other byte is \\xNN") {
    CHECK(quoteForMessage("12.5kg") == "'12.5kg'");
    CHECK(quoteForMessage("") == "''");
    // CR, LF, tab, ESC, DEL, the backslash, bytes beyond ASCII.
    CHECK(escapeForMessage("a\rb\nc\td\x1b[2Je\x7f\\\xc3\xa9") ==
          "a\\x0db\\x0ac\\x09d\\x1b[2Je\\x7f\\x5c\\xc3\\xa9");
    // A NUL does not cut the text (nor the message it ends up in).
    const std::string withNul("ab\0cd", 5);
    CHECK(quoteForMessage(withNul) == "'ab\\x00cd'");
    // The quote character is escaped inside the quotes; other quotes are plain.
    CHECK(quoteForMessage("it's") == "'it\\x27s'");
    CHECK(quoteForMessage("say \"hi\"", kMessageQuoteBytes, '"') == "\"say \\x22hi\\x22\"");
    CHECK(escapeForMessage("it's") == "it's");
  }

  TEST_CASE("QuoteForMessage: a long value is cut, with its size") {
    const std::string cell(1 << 20, 'x');
    const std::string quoted = quoteForMessage(cell);
    CHECK(quoted == "'" + std::string(40, 'x') + "...' (1048576 bytes)");
    CHECK(quoteForMessage(std::string(40, 'y')) == "'" + std::string(40, 'y') + "'");
    CHECK(quoteForMessage("abcdef", 3) == "'abc...' (6 bytes)");
    CHECK(escapeForMessage("abcdef", 3) == "abc...");
    // Escapes count against the input bytes shown, not the output: 40 control bytes show as 160.
    CHECK(escapeForMessage(std::string(100, '\x1b')).size() == 40 * 4 + 3);
  }
}

#pragma once
// User data in error messages. Every parser that names a value it refuses (a CSV cell, a JSON
// string, an HTTP header, a codec library's text about a file) quotes it through these, so that a
// message stays one short line of printable ASCII whatever the data holds: a 1 MB cell does not
// make a 1 MB what(), an escape sequence does not reach the terminal that prints it, a CR does not
// overwrite the start of the line, and a NUL does not cut the message short.
//
//   escapeForMessage("a\r\x1b[2J\\b")  -> a\x0d\x1b[2J\x5cb
//   quoteForMessage("12.5kg")          -> '12.5kg'
//   quoteForMessage(oneMegabyteCell)   -> '<its first 40 bytes>...' (1048576 bytes)
//
// Bytes 0x20 to 0x7e are kept, except the backslash (and the quote character), which are escaped
// like every other byte, as \xNN (lower-case hex): the shown text is unambiguous, and the same on
// every terminal and locale (bytes beyond ASCII, UTF-8 included, are escaped too).
#include <cstddef>
#include <string>
#include <string_view>

namespace dl4cpp {

// How many bytes of a value a message shows by default.
inline constexpr size_t kMessageQuoteBytes = 40;
// How much of a third-party parser's own message (nlohmann-json, libpng, libjpeg) is passed on:
// such messages may quote the data they stopped at.
inline constexpr size_t kLibraryMessageBytes = 240;

// At most `maxBytes` bytes of `text`, escaped; "..." appended when it was cut. `alsoEscape`, when
// not NUL, is escaped too (the quote character around the text).
std::string escapeForMessage(std::string_view text, size_t maxBytes = kMessageQuoteBytes,
                             char alsoEscape = '\0');

// `text` escaped and in `quote` characters ('...' by default; "..." where the data is JSON). When
// cut, the size of the whole is added after the closing quote: '<first bytes>...' (N bytes).
std::string quoteForMessage(std::string_view text, size_t maxBytes = kMessageQuoteBytes,
                            char quote = '\'');

}  // namespace dl4cpp

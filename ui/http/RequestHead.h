#pragma once
// Finds where a request head (request line and headers) ends in the bytes received so far. The
// end is the first empty line, as httplib's parser reads it: a line that is exactly "\r\n" after
// a '\n' (or "\r\n" as the very first line, which httplib then refuses as a malformed request).
// Scanning is incremental, so a client sending one byte at a time costs linear time, not
// quadratic.
#include <cstddef>
#include <string_view>

namespace dl4cpp::http {

class RequestHeadScanner {
 public:
  enum class State { Incomplete, Complete, TooManyLines, TooLong };

  // maxLines counts header lines (the request line comes on top); maxBytes the whole head.
  RequestHeadScanner(size_t maxBytes, size_t maxLines) : maxBytes_(maxBytes), maxLines_(maxLines) {}

  // `received`: every byte of this request so far; each call passes the bytes of the one before
  // and possibly more.
  State scan(std::string_view received);
  // After Complete: the head's length, its final empty line included.
  size_t headBytes() const { return headBytes_; }
  // Forgets the request scanned, for the next one on the same connection.
  void reset() { scanned_ = lines_ = headBytes_ = 0; }

 private:
  size_t maxBytes_, maxLines_;
  size_t scanned_ = 0;    // bytes of `received` already looked at
  size_t lines_ = 0;      // lines seen in them, the request line included
  size_t headBytes_ = 0;  // non-zero once the end was found
};

// Whether a whole head announces a body: it has a Content-Length or a Transfer-Encoding header
// (names compared without case, as httplib does). Requests without one are answered without
// reading anything more from the client.
bool declaresBody(std::string_view head);

}  // namespace dl4cpp::http

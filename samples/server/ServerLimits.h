#pragma once
// What one client may cost the inference server. The bounds hold however a client sends: a body
// with Content-Length or chunked, one byte at a time, or never finishing. docs/security.md lists
// them for users; mnist_inference_server exposes the timeouts as flags.
#include <chrono>
#include <cstddef>

namespace samples::server {

struct ServerLimits {
  // The request line and headers, up to the blank line that ends them: 431 beyond either bound.
  size_t maxHeadBytes = 16 * 1024;
  size_t maxHeaderLines = 100;
  // The body as the handler sees it (after chunked decoding): 413 beyond it.
  size_t maxBodyBytes = 1 << 20;
  // Chunk framing (chunk-size lines, extensions, trailer) allowed on the wire on top of
  // maxBodyBytes: a request may take at most maxHeadBytes + maxBodyBytes + this from the socket.
  size_t maxFramingBytes = 64 * 1024;
  // A connection with no request under way is closed after this.
  std::chrono::milliseconds idleTimeout{5000};
  // A request must arrive whole, head and body, within this of its first byte (else 408 and the
  // connection is closed): a client trickling bytes cannot hold a connection or a thread longer.
  std::chrono::milliseconds requestTimeout{10000};
  // An answer not taken by the client within this is dropped with its connection.
  std::chrono::milliseconds writeTimeout{5000};
  // After an error answer the connection is closed for writing and what the client still sends
  // is read and discarded, for at most this long and this many bytes, so that the client reads
  // the answer rather than a reset.
  std::chrono::milliseconds lingerTimeout{1000};
  size_t maxLingerBytes = 1 << 20;
  // Connections open at once; more are answered 503 and closed. Each costs a socket and at most
  // maxHeadBytes of buffer while waiting for its request.
  size_t maxConnections = 512;
  // Requests answered on one keep-alive connection before it is closed.
  size_t maxRequestsPerConnection = 1000;
  // Threads answering requests whose head has arrived whole (reading the body, decoding, waiting
  // for the model). Connections waiting for a request hold none.
  int httpThreads = 16;
  // Threads answering requests without a body (GET /health): these never wait for a client, so
  // slow bodies holding every one of the httpThreads cannot delay them.
  int bodilessHttpThreads = 2;
};

}  // namespace samples::server

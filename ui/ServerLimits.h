#pragma once
// What one client may cost a dl4cpp HTTP server: the training page (UIServer) and
// mnist_inference_server both answer through one connection layer that enforces these bounds,
// however a client sends: a body with Content-Length or chunked, one byte at a time, or never
// finishing. The defaults suit a service taking small uploads (mnist_inference_server uses them);
// UIServer::defaultLimits() are the page's. docs/security.md lists both for users.
#include <chrono>
#include <cstddef>

namespace dl4cpp {

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
  // Connections open at once, each a file descriptor of the process. A connection arriving at
  // the limit takes the place of the open one that would be closed soonest anyway: one waiting
  // for its next request, the longest waiting first, or one closing after an error answer. When
  // every connection has a request under way it is answered 503 and closed. The limit is never
  // exceeded by more than the one connection being accepted, and accepting pauses (rather than
  // retries at once) while the process is out of file descriptors.
  size_t maxConnections = 512;
  // Requests answered on one keep-alive connection before it is closed.
  size_t maxRequestsPerConnection = 1000;
  // Threads answering requests whose head has arrived whole (reading the body, decoding, waiting
  // for the model). Connections waiting for a request hold none.
  int httpThreads = 16;
  // Threads answering requests without a body (GET /health): these never wait for a client to send,
  // so slow bodies holding every one of the httpThreads cannot delay them.
  int bodilessHttpThreads = 2;
};

}  // namespace dl4cpp

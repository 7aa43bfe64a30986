// libFuzzer target for the HTTP servers' handling of client bytes (scripts/fuzz.sh
// server_request_fuzz builds and runs it): every input is sent on one connection to the inference
// server and on another to the training page, both on loopback, and what comes back is checked
// (ServerRequestFuzzInput.h). A broken contract, and any sanitizer report, is a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ServerRequestFuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const dl4cpp::fuzz::FuzzedServer server;
  dl4cpp::fuzz::exchange(server, std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

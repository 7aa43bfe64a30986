#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/ServerRequestFuzzInput.h"
#include "samples/server/PngTestUtil.h"

namespace {

const std::filesystem::path kCorpus = DL4CPP_TEST_DATA_DIR "/server-request-corpus";

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeFile(const std::string& name, const std::string& bytes) {
  std::ofstream(kCorpus / name, std::ios::binary) << bytes;
}

std::string post(const std::string& type, const std::string& body,
                 const std::string& extraHeaders = "") {
  return "POST /predict HTTP/1.1\r\nHost: localhost\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extraHeaders + "\r\n" +
         body;
}

std::string chunked(const std::string& body, size_t chunk) {
  std::string out;
  for (size_t at = 0; at < body.size(); at += chunk) {
    const std::string part = body.substr(at, chunk);
    char size[16];
    std::snprintf(size, sizeof(size), "%zx", part.size());
    out += std::string(size) + "\r\n" + part + "\r\n";
  }
  return out + "0\r\n\r\n";
}

// The seeds: requests the server answers 200 (seed-*) and the requests of the hardening issue,
// each refused with the status in its name (refused-NNN-*).
void writeSeeds() {
  std::string pixels = "{\"pixels\": [";
  std::vector<unsigned char> grey(784);
  for (size_t i = 0; i < grey.size(); ++i) {
    grey[i] = static_cast<unsigned char>(i * 7 % 256);
    pixels += (i ? "," : "") + std::to_string(grey[i]);
  }
  pixels += "]}";
  const std::string png = testutil::encodePng(grey, 28, 28);
  const std::string health = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n";
  writeFile("seed-health", health);
  writeFile("seed-head-health-http10", "HEAD /health HTTP/1.0\r\n\r\n");
  writeFile("seed-predict-json", post("application/json; charset=utf-8", pixels));
  writeFile("seed-predict-png", post("image/png", png));
  writeFile("seed-predict-chunked",
            "POST /predict HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: "
            "chunked\r\n\r\n" +
                chunked(pixels, 1000));
  writeFile("seed-predict-expect-continue",
            post("application/json", pixels, "Expect: 100-continue\r\n"));
  writeFile("seed-pipelined", health + post("image/png", png) + health);
  writeFile("refused-400-invalid-utf8-body",
            post("application/json", "{\"pixels\": [\"\xff\xfe\"]}"));
  writeFile("refused-400-invalid-utf8-key", post("application/json", "{\"pix\xc3\x28\": 1}"));
  writeFile("refused-400-invalid-utf8-content-type", post("application/\xff\xfejson", pixels));
  writeFile("refused-400-number-overflow", post("application/json", "{\"pixels\": [1e999]}"));
  writeFile("refused-400-png-as-json", post("application/json", png));
  writeFile("refused-400-bad-chunk-size",
            "POST /predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n");
  writeFile("refused-413-chunked-over-limit",
            "POST /predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" +
                chunked(std::string(9000, '['), 4096));
  writeFile(
      "refused-413-chunk-framing-over-budget",
      "POST /predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;" + std::string(12000, 'x'));
  writeFile("refused-413-content-length", post("application/json", std::string(9000, ' ')));
  writeFile("refused-415-gzip",
            post("application/json", "\x1f\x8b\x08", "Content-Encoding: gzip\r\n"));
  std::string manyHeaders = "GET /health HTTP/1.1\r\n";
  for (int i = 0; i < 40; ++i) manyHeaders += "X-A: b\r\n";
  writeFile("refused-431-header-lines", manyHeaders + "\r\n");
  writeFile("refused-431-header-bytes",
            "GET /health HTTP/1.1\r\nX-A: " + std::string(3000, 'b') + "\r\n\r\n");
  writeFile("refused-404-path", "GET /\xff/x HTTP/1.1\r\n\r\n");
  writeFile("refused-501-transfer-encoding",
            "POST /predict HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n");
}

}  // namespace

TEST_SUITE("samples") {
  TEST_CASE(
      "ServerRequestCorpus: the committed fuzz corpus replays through the fuzz target's exchange") {
    // Regenerate the seeds: DL4CPP_WRITE_FIXTURES=1 build/test/dl4cpp_tests
    // -tc="ServerRequestCorpus*"
    if (std::getenv("DL4CPP_WRITE_FIXTURES")) writeSeeds();

    const dl4cpp::fuzz::FuzzedServer server;
    int seeds = 0, refused = 0, files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
      const std::string name = entry.path().filename().string();
      CAPTURE(name);
      std::vector<int> statuses;
      CHECK_NOTHROW(statuses = dl4cpp::fuzz::exchange(server, readFile(entry.path())));
      if (name.rfind("seed-", 0) == 0) {
        CHECK(!statuses.empty());
        for (int status : statuses) CHECK((status == 200 || status == 100));
        ++seeds;
      } else if (name.rfind("refused-", 0) == 0) {
        REQUIRE(!statuses.empty());
        CHECK(statuses.back() == std::stoi(name.substr(8, 3)));
        ++refused;
      }
      ++files;
    }
    CHECK(seeds >= 5);
    CHECK(refused >= 10);
    CHECK(files >= seeds + refused);
  }
}

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "TestPaths.h"
#include "fuzz/ServerRequestFuzzInput.h"
#include "samples/server/PngTestUtil.h"

namespace {

const std::filesystem::path kCorpus = testutil::testDataDir() / "server-request-corpus";

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

// The seeds: requests the inference server answers 200 (seed-*) and the requests of the hardening
// issues, each refused with the status in its name (refused-NNN-*); the same for the training
// page (page-seed-*, page-refused-NNN-*).
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

  // The training page's: it answers GET and HEAD without a body, and refuses everything else
  // before reading a body.
  const std::string page = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  writeFile("page-seed-get", page);
  writeFile("page-seed-head-http10", "HEAD /stats.json HTTP/1.0\r\n\r\n");
  writeFile("page-seed-pipelined",
            page + "GET /charts HTTP/1.1\r\nHost: localhost\r\n\r\n" +
                "GET /stats.json HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n");
  writeFile("page-refused-405-post", post("application/json", pixels));
  writeFile("page-refused-405-post-without-length",
            "POST /stats.json HTTP/1.1\r\nHost: localhost\r\n\r\n");
  writeFile("page-refused-405-expect-continue",
            "PUT / HTTP/1.1\r\nContent-Length: 3221225472\r\nExpect: 100-continue\r\n\r\n");
  writeFile("page-refused-413-get-with-body",
            "GET /charts HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
  writeFile("page-refused-413-get-chunked",
            "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked("abc", 2));
  writeFile("page-refused-404-path", "GET /predict HTTP/1.1\r\n\r\n");
  writeFile("page-refused-431-header-lines", manyHeaders + "\r\n");
  writeFile("page-refused-400-request-line", "GET\r\n\r\n");
}

// Checks the statuses of a file named for what it expects: "seed-*" only 200 (or 100 Continue),
// "refused-NNN-*" ending in NNN. Returns whether the name said anything.
bool checkNamed(const std::string& name, const std::vector<int>& statuses) {
  if (name.rfind("seed-", 0) == 0) {
    CHECK(!statuses.empty());
    for (int status : statuses) CHECK((status == 200 || status == 100));
    return true;
  }
  if (name.rfind("refused-", 0) == 0) {
    REQUIRE(!statuses.empty());
    CHECK(statuses.back() == std::stoi(name.substr(8, 3)));
    return true;
  }
  return false;
}

}  // namespace

TEST_SUITE("samples") {
  TEST_CASE(
      "ServerRequestCorpus: the committed fuzz corpus replays through the fuzz target's exchange") {
    // Regenerate the seeds: DL4CPP_WRITE_FIXTURES=1 build/test/dl4cpp_tests
    // -tc="ServerRequestCorpus*"
    if (std::getenv("DL4CPP_WRITE_FIXTURES")) writeSeeds();

    const dl4cpp::fuzz::FuzzedServer server;
    int named = 0, pageNamed = 0, files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
      const std::string name = entry.path().filename().string();
      CAPTURE(name);
      // Every file goes to both servers and must keep both contracts; a name speaks for the
      // inference server, or with "page-" for the training page.
      dl4cpp::fuzz::Exchanged statuses;
      CHECK_NOTHROW(statuses = dl4cpp::fuzz::exchange(server, readFile(entry.path())));
      if (name.rfind("page-", 0) == 0)
        pageNamed += checkNamed(name.substr(5), statuses.page) ? 1 : 0;
      else
        named += checkNamed(name, statuses.inference) ? 1 : 0;
      ++files;
    }
    CHECK(named >= 15);
    CHECK(pageNamed >= 10);
    CHECK(files >= named + pageNamed);
  }
}

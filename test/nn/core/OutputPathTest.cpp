// The output-path rule (nn/core/OutputPath.h) and writeFileAtomically's use of it: links written
// through, what is not a regular file refused before any work, modes and owners kept, no
// temporary left behind.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "TempDir.h"
#include "nn/core/AtomicFile.h"
#include "nn/core/Error.h"
#include "nn/core/OutputPath.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/util/ModelFileTestUtil.h"

using namespace dl4cpp;
using testutil::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<std::byte> bytesOf(const std::string& text) {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return {p, p + text.size()};
}

void write(const fs::path& path, const std::string& text) {
  writeFileAtomically(path, bytesOf(text), "a test file");
}

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The names in `dir`, sorted.
std::vector<std::string> names(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

mode_t modeOf(const fs::path& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// The message of the OutputPathError `f` throws (a failed check when it throws anything else).
template <typename F>
std::string refusal(F f) {
  try {
    f();
  } catch (const OutputPathError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("expected OutputPathError, got: " << e.what());
    return {};
  }
  FAIL_CHECK("nothing was thrown");
  return {};
}

MultiLayerNetwork smallModel() {
  MultiLayerNetwork net(testutil::smallConvNet(Sgd(0.1)));
  net.init();
  return net;
}

}  // namespace

TEST_SUITE("OutputPath") {
  TEST_CASE("OutputPath: a FIFO is refused before any work and stays a FIFO") {
    TempDir dir;
    const fs::path fifo = dir / "model.dl4cpp";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string message = refusal([&] { smallModel().save(fifo); });
    CHECK(message.find(fifo.string()) != std::string::npos);
    CHECK(message.find("a FIFO") != std::string::npos);
    CHECK(message.find("a model file") != std::string::npos);
    CHECK(fs::is_fifo(fs::symlink_status(fifo)));
    CHECK(names(dir.path()) == std::vector<std::string>{"model.dl4cpp"});
    CHECK_THROWS_AS(checkOutputPath(fifo, "a model file"), OutputPathError);
  }

  TEST_CASE("OutputPath: a device node is refused and stays a device") {
    TempDir dir;
    const fs::path device = dir / "null";
    // /dev/null's numbers (1, 3); making one needs root or CAP_MKNOD.
    if (::mknod(device.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) {
      std::cout << "skipped: mknod is not permitted here (" << std::strerror(errno)
                << "); needs root or CAP_MKNOD" << std::endl;
      return;
    }
    const mode_t mode = modeOf(device);
    const std::string message = refusal([&] { smallModel().save(device); });
    CHECK(message.find("a character device") != std::string::npos);
    CHECK(fs::is_character_file(fs::symlink_status(device)));
    CHECK(modeOf(device) == mode);
    CHECK(names(dir.path()) == std::vector<std::string>{"null"});
  }

  TEST_CASE("OutputPath: the system's /dev/null is refused, also through a link") {
    TempDir dir;
    CHECK(refusal([] { write("/dev/null", "x"); }).find("a character device") != std::string::npos);
    fs::create_symlink("/dev/null", dir / "link-to-null");
    CHECK(refusal([&] {
            write(dir / "link-to-null", "x");
          }).find("(a symbolic link to /dev/null): it is a character device") != std::string::npos);
    CHECK(fs::is_character_file("/dev/null"));
    CHECK(fs::is_symlink(dir / "link-to-null"));
    CHECK(names(dir.path()) == std::vector<std::string>{"link-to-null"});
  }

  TEST_CASE("OutputPath: a socket and a directory are refused, with no temporary left") {
    TempDir dir;
    const fs::path socketPath = dir / "socket";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socketPath.c_str(), sizeof address.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    CHECK(refusal([&] { write(socketPath, "x"); }).find("a socket") != std::string::npos);
    ::close(fd);

    fs::create_directories(dir / "occupied" / "inside");
    const std::string message = refusal([&] { write(dir / "occupied", "x"); });
    CHECK(message.find("a directory") != std::string::npos);
    CHECK(fs::is_directory(dir / "occupied" / "inside"));
    CHECK(names(dir.path()) == std::vector<std::string>{"occupied", "socket"});
    // A path ending in '/' names a folder, whether or not one is there.
    CHECK(refusal([&] { write(dir / "new" / "", "x"); }).find("ends in '/'") != std::string::npos);
    CHECK(refusal([&] { write("", "x"); }).find("empty") != std::string::npos);
  }

  TEST_CASE("OutputPath: a symbolic link is written through and kept, chains too") {
    TempDir dir;
    fs::create_directory(dir / "real");
    write(dir / "real" / "model", "old");
    fs::create_symlink("real/model", dir / "link");   // relative to the link's folder
    fs::create_symlink(dir / "link", dir / "link2");  // absolute, to another link
    write(dir / "link2", "new");
    CHECK(fs::is_symlink(dir / "link"));
    CHECK(fs::is_symlink(dir / "link2"));
    CHECK(fs::read_symlink(dir / "link") == "real/model");
    CHECK(contents(dir / "real" / "model") == "new");
    CHECK(names(dir / "real") == std::vector<std::string>{"model"});
    CHECK(names(dir.path()) == std::vector<std::string>{"link", "link2", "real"});
    CHECK(resolveOutputPath(dir / "link2", "x").path == dir / "real" / "model");

    // A dangling link: its target is created, and the link then leads to it.
    fs::create_symlink("real/created", dir / "dangling");
    write(dir / "dangling", "made");
    CHECK(fs::is_symlink(dir / "dangling"));
    CHECK(contents(dir / "real" / "created") == "made");
  }

  TEST_CASE("OutputPath: a loop of links is refused, naming the path") {
    TempDir dir;
    fs::create_symlink("b", dir / "a");
    fs::create_symlink("a", dir / "b");
    const std::string message = refusal([&] { write(dir / "a", "x"); });
    CHECK(message.find((dir / "a").string()) != std::string::npos);
    CHECK(message.find("loop of symbolic links") != std::string::npos);
    CHECK(names(dir.path()) == std::vector<std::string>{"a", "b"});
    // A chain longer than the limit is refused the same way; one within it is followed.
    for (int i = 0; i < kMaxSymlinkHops + 1; ++i)
      fs::create_symlink("c" + std::to_string(i + 1), dir / ("c" + std::to_string(i)));
    CHECK(refusal([&] { write(dir / "c0", "x"); }).find("loop") != std::string::npos);
    write(dir / "c1", "x");  // 40 links, then the file
    CHECK(contents(dir / ("c" + std::to_string(kMaxSymlinkHops + 1))) == "x");
  }

  TEST_CASE("OutputPath: an existing file keeps its mode, a new one gets 0644 less the umask") {
    TempDir dir;
    const fs::path path = dir / "kept";
    write(path, "one");
    for (const mode_t mode : {0600, 0666, 0640, 0444}) {
      REQUIRE(::chmod(path.c_str(), mode) == 0);
      write(path, "two");
      CHECK(modeOf(path) == mode);
      CHECK(contents(path) == "two");
    }
    const mode_t previous = ::umask(027);
    write(dir / "new", "x");
    ::umask(previous);
    CHECK(modeOf(dir / "new") == 0640);
  }

  TEST_CASE("OutputPath: an existing file keeps its owner and group where permitted") {
    if (::geteuid() != 0) {
      std::cout << "skipped: changing a file's owner needs root" << std::endl;
      return;
    }
    TempDir dir;
    const fs::path path = dir / "owned";
    write(path, "one");
    REQUIRE(::chown(path.c_str(), 4321, 8765) == 0);
    REQUIRE(::chmod(path.c_str(), 02640) == 0);  // setgid: kept with the group it was given for
    write(path, "two");
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK(st.st_uid == 4321);
    CHECK(st.st_gid == 8765);
    CHECK((st.st_mode & 07777) == 02640);
  }

  TEST_CASE("OutputPath: a failed write leaves no temporary and the old file whole") {
    TempDir dir;
    const fs::path path = dir / "file";
    write(path, "old");
    // write() fails with EFBIG past the file-size limit (SIGXFSZ ignored meanwhile).
    struct sigaction ignore {
    }, previous{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGXFSZ, &ignore, &previous);
    rlimit saved{};
    ::getrlimit(RLIMIT_FSIZE, &saved);
    rlimit limited = saved;
    limited.rlim_cur = 1024;
    ::setrlimit(RLIMIT_FSIZE, &limited);
    std::string message;
    try {
      write(path, std::string(64 * 1024, 'x'));
    } catch (const IoError& e) {
      message = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &saved);
    ::sigaction(SIGXFSZ, &previous, nullptr);
    CHECK(message.find("cannot write") != std::string::npos);
    CHECK(contents(path) == "old");
    CHECK(names(dir.path()) == std::vector<std::string>{"file"});
  }

  TEST_CASE("OutputPath: checkOutputPath wants an existing, writable folder") {
    TempDir dir;
    const std::string missing =
        refusal([&] { checkOutputPath(dir / "no-such-dir" / "x.html", "an HTML report"); });
    CHECK(missing.find("cannot write an HTML report to " +
                       (dir / "no-such-dir" / "x.html").string()) != std::string::npos);
    CHECK(missing.find("the folder " + (dir / "no-such-dir").string() + " does not exist") !=
          std::string::npos);
    write(dir / "file", "x");
    CHECK(refusal([&] {
            checkOutputPath(dir / "file" / "x", "a model file");
          }).find("not a directory") != std::string::npos);
    const OutputTarget fresh = checkOutputPath(dir / "fresh", "a model file");
    CHECK_FALSE(fresh.exists);
    CHECK(fresh.path == dir / "fresh");
    CHECK(resolveOutputPath("relative-name", "a model file").path == "relative-name");
    CHECK(names(dir.path()) == std::vector<std::string>{"file"});  // checking writes nothing

    if (::geteuid() == 0) {
      // Root may write to a folder without write permission; a read-only file system refuses.
      std::cout << "note: running as root, the read-only folder case is not checked" << std::endl;
      return;
    }
    fs::create_directory(dir / "readonly");
    fs::permissions(dir / "readonly", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(refusal([&] {
            checkOutputPath(dir / "readonly" / "x", "a model file");
          }).find("files cannot be created in the folder") != std::string::npos);
    fs::permissions(dir / "readonly", fs::perms::owner_all);
  }

  TEST_CASE("OutputPath: checkOutputDirectory takes a folder or a place to create one") {
    TempDir dir;
    checkOutputDirectory(dir.path(), "checkpoints");
    checkOutputDirectory(dir / "a" / "b" / "c", "checkpoints");  // created later, under dir
    write(dir / "file", "x");
    CHECK(refusal([&] {
            checkOutputDirectory(dir / "file", "checkpoints");
          }).find("it is a regular file, not a folder") != std::string::npos);
    CHECK(refusal([&] {
            checkOutputDirectory(dir / "file" / "below", "checkpoints");
          }).find("not a directory") != std::string::npos);
    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    CHECK(refusal([&] {
            checkOutputDirectory(dir / "fifo", "the output folder (--out)");
          }).find("a FIFO, not a folder") != std::string::npos);
    fs::create_symlink("missing", dir / "dangling");
    CHECK(refusal([&] {
            checkOutputDirectory(dir / "dangling", "checkpoints");
          }).find("which does not exist") != std::string::npos);
    fs::create_directory(dir / "target");
    fs::create_symlink("target", dir / "linked");
    checkOutputDirectory(dir / "linked", "checkpoints");
  }
}

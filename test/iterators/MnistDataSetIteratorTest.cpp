#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "iterators/FifoTestUtil.h"
#include "iterators/MnistDataSetIterator.h"
#include "iterators/NormalizerMinMaxScaler.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
namespace fs = std::filesystem;

namespace {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("dl4cpp-mnist-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Sets an environment variable for the scope of the object, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

constexpr int kRows = 3, kCols = 3, kSize = kRows * kCols;

// Synthetic image i: pixel 0 is i (so a batch row tells which image it is), the rest a pattern
// that covers 0..255. Label of image i: (i * 7) % 10.
uint8_t pixel(int image, int j) {
  return j == 0 ? static_cast<uint8_t>(image) : static_cast<uint8_t>((image * 31 + j * 57) % 256);
}
uint8_t labelOf(int image) { return static_cast<uint8_t>((image * 7) % 10); }

void putBe32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

void writeBytes(const std::string& path, const std::vector<uint8_t>& bytes, bool gz) {
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
            static_cast<int>(bytes.size()));
    REQUIRE(gzclose(f) == Z_OK);
  } else {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
  }
}

// Writes <prefix>-images-idx3-ubyte[.gz] with `images` images and <prefix>-labels-idx1-ubyte[.gz]
// with `labels` labels (defaults to the same count) into dir.
void writeMnist(const std::string& dir, const std::string& prefix, int images, bool gz = false,
                int labels = -1) {
  if (labels < 0) labels = images;
  std::vector<uint8_t> img;
  putBe32(img, 0x00000803);
  putBe32(img, static_cast<uint32_t>(images));
  putBe32(img, kRows);
  putBe32(img, kCols);
  for (int i = 0; i < images; ++i)
    for (int j = 0; j < kSize; ++j) img.push_back(pixel(i, j));
  std::vector<uint8_t> lbl;
  putBe32(lbl, 0x00000801);
  putBe32(lbl, static_cast<uint32_t>(labels));
  for (int i = 0; i < labels; ++i) lbl.push_back(labelOf(i));
  const std::string suffix = gz ? ".gz" : "";
  writeBytes(dir + "/" + prefix + "-images-idx3-ubyte" + suffix, img, gz);
  writeBytes(dir + "/" + prefix + "-labels-idx1-ubyte" + suffix, lbl, gz);
}

// Index of the synthetic image in row r of a batch (pixel 0 holds it).
int imageIndex(const DataSet& ds, int64_t r) {
  return static_cast<int>(std::lround(ds.features.at(r * kSize) * 255.0f));
}

// Runs one epoch and returns the image indices in the order they came.
std::vector<int> epochOrder(MnistDataSetIterator& it) {
  std::vector<int> order;
  while (it.hasNext()) {
    const DataSet ds = it.next();
    for (int64_t r = 0; r < ds.numExamples(); ++r) order.push_back(imageIndex(ds, r));
  }
  return order;
}

bool isPermutation(std::vector<int> v, int n) {
  std::sort(v.begin(), v.end());
  std::vector<int> iota(static_cast<size_t>(n));
  std::iota(iota.begin(), iota.end(), 0);
  return v == iota;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

template <class E, class F>
std::string thrownMessage(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("threw the wrong exception type: " << std::string(e.what()));
  }
  FAIL("did not throw");
  return {};
}

// Opens real data; a missing data set fails the test with the iterator's instructions rather
// than letting it pass silently.
std::unique_ptr<MnistDataSetIterator> openReal(int batch, bool train, bool shuffle,
                                               const std::string& dir) {
  try {
    return std::make_unique<MnistDataSetIterator>(batch, 0, false, train, shuffle, 123, dir);
  } catch (const DataNotFoundError& e) {
    FAIL("real data set missing (this test needs it): " << std::string(e.what()));
  }
  return nullptr;
}

// Per-class example counts over one epoch; also checks every label row is one-hot.
std::array<int64_t, 10> classCounts(MnistDataSetIterator& it, int64_t* examples,
                                    double* pixelMean) {
  std::array<int64_t, 10> counts{};
  double pixelSum = 0;
  *examples = 0;
  bool oneHot = true, inRange = true;
  while (it.hasNext()) {
    const DataSet ds = it.next();
    const float* l = ds.labels.data();
    const float* f = ds.features.data();
    for (int64_t r = 0; r < ds.numExamples(); ++r) {
      int ones = 0;
      for (int c = 0; c < 10; ++c) {
        if (l[r * 10 + c] == 1.0f) {
          ++ones;
          ++counts[static_cast<size_t>(c)];
        } else if (l[r * 10 + c] != 0.0f) {
          oneHot = false;
        }
      }
      oneHot = oneHot && ones == 1;
    }
    for (int64_t i = 0; i < ds.features.numel(); ++i) {
      pixelSum += f[i];
      inRange = inRange && f[i] >= 0.0f && f[i] <= 1.0f;
    }
    *examples += ds.numExamples();
  }
  CHECK(oneHot);
  CHECK(inRange);
  *pixelMean = pixelSum / (static_cast<double>(*examples) * 784.0);
  return counts;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("MnistDataSetIterator: batches, with the last partial batch kept") {
    TempDir dir;
    writeMnist(dir.path(), "train", 23);
    MnistDataSetIterator it(5, 0, false, true, false, 1, dir.path());
    CHECK(it.batch() == 5);
    CHECK(it.totalExamples() == 23);
    CHECK(it.inputColumns() == kSize);
    CHECK(it.totalOutcomes() == 10);
    CHECK(it.asyncSupported());
    CHECK(it.resetSupported());
    std::vector<int64_t> sizes;
    while (it.hasNext()) {
      const DataSet ds = it.next();
      CHECK(ds.features.shape() == Shape{ds.numExamples(), kSize});
      CHECK(ds.labels.shape() == Shape{ds.numExamples(), 10});
      sizes.push_back(ds.numExamples());
    }
    CHECK(sizes == std::vector<int64_t>{5, 5, 5, 5, 3});
    CHECK_THROWS_AS(it.next(), DataError);
    it.reset();
    CHECK(it.hasNext());
    CHECK(it.next().numExamples() == 5);
  }

  TEST_CASE("MnistDataSetIterator: batches go through the pre-processor") {
    TempDir dir;
    writeMnist(dir.path(), "train", 7);
    MnistDataSetIterator it(4, 0, false, true, false, 1, dir.path());
    auto scaler = std::make_shared<NormalizerMinMaxScaler>(-1, 1);
    scaler->fit(it);
    it.setPreProcessor(scaler);
    float lowest = 1, highest = -1;
    while (it.hasNext()) {
      const DataSet ds = it.next();
      for (int64_t i = 0; i < ds.features.numel(); ++i) {
        lowest = std::min(lowest, ds.features.at(i));
        highest = std::max(highest, ds.features.at(i));
      }
    }
    CHECK(lowest == doctest::Approx(-1));  // [0, 1] pixels would never reach -1
    CHECK(highest == doctest::Approx(1));
  }

  TEST_CASE("MnistDataSetIterator: pixels scaled by 1/255 exactly, labels one-hot") {
    TempDir dir;
    writeMnist(dir.path(), "t10k", 30);
    MnistDataSetIterator it(7, 0, false, false, true, 99, dir.path());
    int seen = 0;
    while (it.hasNext()) {
      const DataSet ds = it.next();
      for (int64_t r = 0; r < ds.numExamples(); ++r, ++seen) {
        const int image = imageIndex(ds, r);
        REQUIRE(image >= 0);
        REQUIRE(image < 30);
        for (int j = 0; j < kSize; ++j)
          CHECK(ds.features.at(r * kSize + j) == static_cast<float>(pixel(image, j)) / 255.0f);
        for (int c = 0; c < 10; ++c)
          CHECK(ds.labels.at(r * 10 + c) == (c == labelOf(image) ? 1.0f : 0.0f));
      }
    }
    CHECK(seen == 30);
  }

  TEST_CASE("MnistDataSetIterator: binarize thresholds at pixel > 30") {
    TempDir dir;
    writeMnist(dir.path(), "train", 40);
    MnistDataSetIterator it(40, 0, true, true, false, 1, dir.path());
    const DataSet ds = it.next();
    for (int i = 0; i < 40; ++i)
      for (int j = 0; j < kSize; ++j)
        CHECK(ds.features.at(i * kSize + j) == (pixel(i, j) > 30 ? 1.0f : 0.0f));
  }

  TEST_CASE("MnistDataSetIterator: without shuffle the file order is kept every epoch") {
    TempDir dir;
    writeMnist(dir.path(), "train", 12);
    MnistDataSetIterator it(5, 0, false, true, false, 7, dir.path());
    std::vector<int> expected(12);
    std::iota(expected.begin(), expected.end(), 0);
    CHECK(epochOrder(it) == expected);
    it.reset();
    CHECK(epochOrder(it) == expected);
  }

  TEST_CASE("MnistDataSetIterator: same seed gives the same order, reset reshuffles") {
    TempDir dir;
    writeMnist(dir.path(), "train", 50);
    MnistDataSetIterator a(8, 0, false, true, true, 42, dir.path());
    MnistDataSetIterator b(8, 0, false, true, true, 42, dir.path());
    MnistDataSetIterator c(8, 0, false, true, true, 43, dir.path());
    const std::vector<int> a1 = epochOrder(a);
    CHECK(isPermutation(a1, 50));
    CHECK(a1 == epochOrder(b));
    CHECK(a1 != epochOrder(c));
    std::vector<int> identity(50);
    std::iota(identity.begin(), identity.end(), 0);
    CHECK(a1 != identity);

    a.reset();
    b.reset();
    const std::vector<int> a2 = epochOrder(a);
    CHECK(isPermutation(a2, 50));
    CHECK(a2 != a1);             // a new epoch, a new order
    CHECK(a2 == epochOrder(b));  // ... and the sequence of epochs is fixed by the seed
  }

  TEST_CASE("MnistDataSetIterator: shuffle order is pinned (stable across standard libraries)") {
    // mt19937_64 output is fixed by the C++ standard and the Fisher-Yates shuffle is ours, so this
    // order must never change; a change here silently changes every user's training run.
    TempDir dir;
    writeMnist(dir.path(), "train", 10);
    MnistDataSetIterator it(4, 0, false, true, true, 12345, dir.path());
    CHECK(epochOrder(it) == std::vector<int>{3, 1, 7, 4, 9, 2, 0, 8, 5, 6});
    it.reset();
    CHECK(epochOrder(it) == std::vector<int>{2, 4, 1, 6, 0, 9, 7, 5, 3, 8});
  }

  TEST_CASE("MnistDataSetIterator: numExamples takes the first examples of the file") {
    TempDir dir;
    writeMnist(dir.path(), "train", 20);
    MnistDataSetIterator it(3, 7, false, true, true, 5, dir.path());
    CHECK(it.totalExamples() == 7);
    CHECK(isPermutation(epochOrder(it), 7));
    for (int n : {0, -1, 20, 1000}) {
      MnistDataSetIterator all(3, n, false, true, true, 5, dir.path());
      CHECK(all.totalExamples() == 20);
      CHECK(isPermutation(epochOrder(all), 20));
    }
  }

  TEST_CASE("MnistDataSetIterator: reads .gz files, prefers raw files when both exist") {
    TempDir gzOnly;
    writeMnist(gzOnly.path(), "t10k", 11, true);
    MnistDataSetIterator it(4, 0, false, false, false, 1, gzOnly.path());
    CHECK(it.totalExamples() == 11);
    CHECK(it.imagesPath() == gzOnly.file("t10k-images-idx3-ubyte.gz"));
    std::vector<int> expected(11);
    std::iota(expected.begin(), expected.end(), 0);
    CHECK(epochOrder(it) == expected);

    TempDir both;
    writeMnist(both.path(), "t10k", 6, true);
    writeMnist(both.path(), "t10k", 9, false);
    MnistDataSetIterator raw(4, 0, false, false, false, 1, both.path());
    CHECK(raw.totalExamples() == 9);
    CHECK(raw.labelsPath() == both.file("t10k-labels-idx1-ubyte"));
  }

  TEST_CASE("MnistDataSetIterator: image/label count mismatch names both files and counts") {
    TempDir dir;
    writeMnist(dir.path(), "train", 12, false, 10);
    const std::string msg = thrownMessage<DataMismatchError>(
        [&] { MnistDataSetIterator it(4, 0, false, true, true, 1, dir.path()); });
    CHECK(contains(msg, dir.file("train-images-idx3-ubyte")));
    CHECK(contains(msg, dir.file("train-labels-idx1-ubyte")));
    CHECK(contains(msg, "12 images"));
    CHECK(contains(msg, "10 labels"));
  }

  TEST_CASE("MnistDataSetIterator: missing files say how to get the data") {
    TempDir dir;
    const std::string missing = dir.file("nowhere");
    const std::string msg = thrownMessage<DataNotFoundError>(
        [&] { MnistDataSetIterator it(4, 0, false, true, true, 1, missing); });
    CHECK(contains(msg, missing + "/train-images-idx3-ubyte"));
    CHECK(contains(msg, "scripts/get-mnist.sh " + missing));
    CHECK(contains(msg, "dataset-fashion-mnist"));
    // Test files absent while train files exist.
    writeMnist(dir.path(), "train", 3);
    CHECK_THROWS_AS(MnistDataSetIterator(4, 0, false, false, true, 1, dir.path()),
                    DataNotFoundError);
  }

  TEST_CASE(
      "MnistDataSetIterator: a directory or FIFO in a file's place is reported as what it is") {
    TempDir dir;
    writeMnist(dir.path(), "train", 3);
    fs::remove(dir.file("train-images-idx3-ubyte"));
    fs::create_directories(dir.file("train-images-idx3-ubyte"));
    const std::string msg = thrownMessage<DataFormatError>(
        [&] { MnistDataSetIterator it(4, 0, false, true, true, 1, dir.path()); });
    CHECK(contains(msg, dir.file("train-images-idx3-ubyte") + ": is a directory, not an IDX file"));
    // A regular .gz beside the directory is used.
    writeMnist(dir.path(), "train", 3, true);
    CHECK(MnistDataSetIterator(4, 0, false, true, true, 1, dir.path()).imagesPath() ==
          dir.file("train-images-idx3-ubyte.gz"));

    fs::remove(dir.file("train-labels-idx1-ubyte"));
    fs::remove(dir.file("train-labels-idx1-ubyte.gz"));
    CHECK(contains(testutil::errorOnFifo<DataFormatError>(
                       dir.file("train-labels-idx1-ubyte.gz"),
                       [&] { MnistDataSetIterator it(4, 0, false, true, true, 1, dir.path()); }),
                   dir.file("train-labels-idx1-ubyte.gz") + ": is a FIFO, not an IDX file"));
  }

  TEST_CASE("MnistDataSetIterator: invalid batch size is a ConfigError") {
    TempDir dir;
    writeMnist(dir.path(), "train", 3);
    CHECK_THROWS_AS(MnistDataSetIterator(0, 0, false, true, true, 1, dir.path()), ConfigError);
  }

  TEST_CASE("MnistDataSetIterator: default data directory follows DL4CPP_DATA_DIR, then HOME") {
    {
      ScopedEnv env("DL4CPP_DATA_DIR", "/data/sets");
      CHECK(MnistDataSetIterator::defaultDataDirectory() == "/data/sets/MNIST");
      CHECK(MnistDataSetIterator::defaultDataDirectory("FashionMNIST") ==
            "/data/sets/FashionMNIST");
    }
    {
      ScopedEnv env("DL4CPP_DATA_DIR", nullptr);
      ScopedEnv home("HOME", "/home/someone");
      CHECK(MnistDataSetIterator::defaultDataDirectory() == "/home/someone/.dl4cpp/data/MNIST");
    }
    CHECK(MnistDataSetIterator::fashionMnistDirectory() == "/usr/share/datasets/fashion-mnist");
  }

  TEST_CASE("MnistDataSetIterator: real MNIST in the default directory (60000 / 10000)") {
    // Needs scripts/get-mnist.sh to have been run; fails (with that instruction) otherwise.
    const std::string dir = MnistDataSetIterator::defaultDataDirectory();
    {
      auto train = openReal(128, true, true, dir);
      REQUIRE(train);
      CHECK(train->totalExamples() == 60000);
      CHECK(train->inputColumns() == 784);
      int64_t examples = 0;
      double mean = 0;
      const auto counts = classCounts(*train, &examples, &mean);
      CHECK(examples == 60000);
      CHECK(counts ==
            std::array<int64_t, 10>{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949});
      CHECK(mean == doctest::Approx(0.1307).epsilon(0.001));
    }
    {
      auto test = openReal(10, false, false, dir);
      REQUIRE(test);
      CHECK(test->totalExamples() == 10000);
      const DataSet first = test->next();
      std::vector<int> labels;
      for (int64_t r = 0; r < 10; ++r)
        for (int c = 0; c < 10; ++c)
          if (first.labels.at(r * 10 + c) == 1.0f) labels.push_back(c);
      CHECK(labels == std::vector<int>{7, 2, 1, 0, 4, 1, 4, 9, 5, 9});
      test->reset();
      int64_t examples = 0;
      double mean = 0;
      const auto counts = classCounts(*test, &examples, &mean);
      CHECK(examples == 10000);
      CHECK(counts ==
            std::array<int64_t, 10>{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009});
    }
    // The DL4J three-argument constructor uses the same default directory.
    MnistDataSetIterator dl4j(64, false, 1);
    CHECK(dl4j.totalExamples() == 10000);
    CHECK(dl4j.directory() == dir);
  }

  TEST_CASE("MnistDataSetIterator: Fashion-MNIST from /usr/share/datasets/fashion-mnist (gz)") {
    const std::string dir = MnistDataSetIterator::fashionMnistDirectory();
    auto train = openReal(1000, true, true, dir);
    REQUIRE(train);
    CHECK(train->imagesPath() == dir + "/train-images-idx3-ubyte.gz");
    int64_t examples = 0;
    double mean = 0;
    auto counts = classCounts(*train, &examples, &mean);
    CHECK(examples == 60000);
    for (int64_t c : counts) CHECK(c == 6000);

    auto test = openReal(10, false, false, dir);
    REQUIRE(test);
    CHECK(test->totalExamples() == 10000);
    const DataSet first = test->next();
    std::vector<int> labels;
    for (int64_t r = 0; r < 10; ++r)
      for (int c = 0; c < 10; ++c)
        if (first.labels.at(r * 10 + c) == 1.0f) labels.push_back(c);
    CHECK(labels == std::vector<int>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7});
    test->reset();
    counts = classCounts(*test, &examples, &mean);
    CHECK(examples == 10000);
    for (int64_t c : counts) CHECK(c == 1000);
  }
}

// DataVec's shape of the image pipeline: FileSplit(dir, ALLOWED_FORMATS, seed) +
// BalancedPathFilter(seed, formats, labelMaker) + sample() + ImageRecordReader(h, w, c,
// labelMaker).initialize(split, transform) + RecordReaderDataSetIterator(rr, batch, 1, n), over
// image folders written by ImageWriter.
#include <TempDir.h>
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "iterators/image/ImageWriter.h"

using namespace dl4cpp;
namespace fs = std::filesystem;

namespace {

void touch(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path).put('x');
}

// A 6x8 grey image, asymmetric so that a flip shows, brightness set by `value`.
Image ramp(float value) {
  Image image(1, 6, 8);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 8; ++x) image.at(0, y, x) = value + static_cast<float>(3 * x + 17 * y);
  return image;
}

// root/<label>/<i>.png with counts[label] images each; example i of label k has value 40k + i.
void writeClasses(const fs::path& root, const std::map<std::string, int>& counts) {
  int k = 0;
  for (const auto& [label, count] : counts) {
    fs::create_directories(root / label);
    for (int i = 0; i < count; ++i)
      ImageWriter::writePng(ramp(static_cast<float>(40 * k + i)),
                            root / label / (std::to_string(i) + ".png"));
    ++k;
  }
}

std::map<std::string, int> countByFolder(const std::vector<fs::path>& paths) {
  std::map<std::string, int> counts;
  for (const fs::path& path : paths) ++counts[path.parent_path().filename().string()];
  return counts;
}

struct Epoch {
  std::vector<float> features, labels;
};

Epoch readEpoch(DataSetIterator& it) {
  Epoch epoch;
  while (it.hasNext()) {
    const DataSet batch = it.next();
    epoch.features.insert(epoch.features.end(), batch.features.data(),
                          batch.features.data() + batch.features.numel());
    epoch.labels.insert(epoch.labels.end(), batch.labels.data(),
                        batch.labels.data() + batch.labels.numel());
  }
  return epoch;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE(
      "BalancedPathFilter(seed, formats, labelMaker): the same count of every label, "
      "interleaved, drawn by the seed") {
    testutil::TempDir dir;
    for (const auto& [label, count] : std::map<std::string, int>{{"a", 30}, {"b", 12}, {"c", 20}})
      for (int i = 0; i < count; ++i) touch(dir / label / (std::to_string(i) + ".png"));
    for (int i = 0; i < 5; ++i) touch(dir / "b" / (std::to_string(i) + ".txt"));
    const FileSplit all(dir.path(), uint64_t{5});  // every file, .txt included
    auto labelMaker = std::make_shared<ParentPathLabelGenerator>();

    const BalancedPathFilter pathFilter(42, NativeImageLoader::ALLOWED_FORMATS, labelMaker);
    const std::vector<fs::path> kept = pathFilter.filter(all.locations());
    REQUIRE(kept.size() == 36);  // 12 of each: b's count, its .txt files dropped
    CHECK(countByFolder(kept) == std::map<std::string, int>{{"a", 12}, {"b", 12}, {"c", 12}});
    // Interleaved: every run of three holds each label once, in one order.
    std::vector<std::string> order;
    for (size_t i = 0; i < 3; ++i) order.push_back(kept[i].parent_path().filename().string());
    for (size_t i = 0; i < kept.size(); ++i)
      CHECK(kept[i].parent_path().filename() == order[i % 3]);
    CHECK(std::set<std::string>(order.begin(), order.end()).size() == 3);
    // Drawn by the seed: the same paths for the same seed, others for another.
    CHECK(BalancedPathFilter(42, NativeImageLoader::ALLOWED_FORMATS, labelMaker)
              .filter(all.locations()) == kept);
    const std::vector<fs::path> other =
        BalancedPathFilter(43, NativeImageLoader::ALLOWED_FORMATS, labelMaker)
            .filter(all.locations());
    CHECK(std::set<fs::path>(other.begin(), other.end()) !=
          std::set<fs::path>(kept.begin(), kept.end()));
    // A cap per label; no extension list keeps every file (b then has 17).
    CHECK(BalancedPathFilter(42, NativeImageLoader::ALLOWED_FORMATS, labelMaker, 5)
              .filter(all.locations())
              .size() == 15);
    CHECK(countByFolder(BalancedPathFilter(42, {}, labelMaker).filter(all.locations())) ==
          std::map<std::string, int>{{"a", 17}, {"b", 17}, {"c", 17}});
    // The LabeledFileSplit constructor's filter takes paths too (parent folder labels).
    CHECK(BalancedPathFilter(42).filter(all.locations()).size() == 51);

    // sample(filter, 80, 20): two parts, each balanced to within one path per label.
    const std::vector<InputSplit> parts = all.sample(pathFilter, 80, 20);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].length() == 29);  // round(36 * 0.8)
    CHECK(parts[1].length() == 7);
    for (const InputSplit& part : parts) {
      const auto counts = countByFolder(part.locations());
      int low = 1 << 30, high = 0;
      for (const auto& [label, count] : counts) {
        low = std::min(low, count);
        high = std::max(high, count);
      }
      CHECK(counts.size() == 3);
      CHECK(high - low <= 1);
    }
  }

  TEST_CASE("PatternPathLabelGenerator: a piece of the base name, split at a regex") {
    const PatternPathLabelGenerator first("_", 0);
    CHECK(first.labelFor("data/cat_001.png") == "cat");
    CHECK(first.labelFor("data/dog.png") == "dog");  // no match: the whole base name
    CHECK(PatternPathLabelGenerator("[_-]", 1).labelFor("x/001-bird_a.b.jpg") == "bird");
    CHECK(PatternPathLabelGenerator("\\.", 1).labelFor("x/a.b.c.png") == "b");
    // Trailing empty pieces are dropped, as Java's split does.
    CHECK_THROWS_AS(PatternPathLabelGenerator("_", 1).labelFor("x/cat__.png"), DataError);
    const std::string message = [] {
      try {
        (void)PatternPathLabelGenerator("_", 2).labelFor("some/dir/cat_1.png");
      } catch (const DataError& e) {
        return std::string(e.what());
      }
      return std::string();
    }();
    CHECK(message.find("some/dir/cat_1.png") != std::string::npos);
    CHECK_THROWS_AS(PatternPathLabelGenerator("_", 0).labelFor("x/_cat.png"), DataError);
    CHECK_THROWS_AS(PatternPathLabelGenerator("(", 0), ConfigError);
    CHECK_THROWS_AS(PatternPathLabelGenerator("_", -1), ConfigError);
  }

  TEST_CASE(
      "ImageRecordReader(h, w, c, labelMaker): labels from the split's files, sorted, "
      "PatternPathLabelGenerator over a flat folder") {
    testutil::TempDir dir;
    for (const char* name : {"dog_1", "cat_2", "dog_3", "bird_4", "cat_5"})
      ImageWriter::writePng(ramp(10), dir / (std::string(name) + ".png"));
    auto labelMaker = std::make_shared<PatternPathLabelGenerator>("_", 0);
    ImageRecordReader rr(6, 8, 1, labelMaker);
    CHECK_FALSE(rr.initialized());
    CHECK(rr.numLabels() == 0);
    rr.initialize(FileSplit(dir.path(), NativeImageLoader::ALLOWED_FORMATS));
    CHECK(rr.initialized());
    CHECK(rr.getLabels() == std::vector<std::string>{"bird", "cat", "dog"});
    CHECK(rr.numLabels() == 3);
    CHECK(rr.size() == 5);
    RecordReaderDataSetIterator it(rr, 5, 1, rr.numLabels());
    const DataSet batch = it.next();
    // Sorted paths: bird_4, cat_2, cat_5, dog_1, dog_3.
    const std::vector<int> expected = {0, 1, 1, 2, 2};
    for (int64_t r = 0; r < 5; ++r)
      CHECK(batch.labels.at(r * 3 + expected[static_cast<size_t>(r)]) == 1.0f);

    // A split that lacks a class has fewer labels, as in DataVec.
    rr.initialize(InputSplit({dir / "cat_2.png", dir / "dog_1.png"}));
    CHECK(rr.getLabels() == std::vector<std::string>{"cat", "dog"});

    CHECK_THROWS_AS(rr.initialize(InputSplit(std::vector<fs::path>{})), DataNotFoundError);
    CHECK_THROWS_AS(ImageRecordReader(6, 8, 1, std::shared_ptr<const PathLabelGenerator>()),
                    ConfigError);
    CHECK_THROWS_AS(ImageRecordReader(6, 8, 2, labelMaker), ConfigError);
  }

  TEST_CASE(
      "RecordReaderDataSetIterator over an ImageRecordReader: the split's order, the batches "
      "of ImageDataSetIterator, any number of decode threads") {
    testutil::TempDir dir;
    writeClasses(dir.path(), {{"a", 9}, {"b", 7}, {"c", 8}});
    auto labelMaker = std::make_shared<ParentPathLabelGenerator>();
    const FileSplit split(dir.path(), NativeImageLoader::ALLOWED_FORMATS, 11);
    ImageRecordReader rr(3, 4, 1, labelMaker);
    rr.initialize(split, std::make_shared<FlipImageTransform>(uint64_t{11}));

    RecordReaderDataSetIterator it(rr, 5, 1, rr.numLabels());
    CHECK(it.batch() == 5);
    CHECK(it.inputColumns() == 12);
    CHECK(it.totalOutcomes() == 3);
    CHECK(it.totalExamples() == 24);
    CHECK_FALSE(it.asyncSupported());
    CHECK(it.getLabels() == std::vector<std::string>{"a", "b", "c"});

    // Rows follow the split's (seeded, shuffled) order.
    const Epoch first = readEpoch(it);
    REQUIRE(first.labels.size() == 24 * 3);
    for (size_t r = 0; r < 24; ++r) {
      const std::string folder = split.locations()[r].parent_path().filename().string();
      const size_t label = static_cast<size_t>(folder[0] - 'a');
      CHECK(first.labels[r * 3 + label] == 1.0f);
    }
    // The same as ImageDataSetIterator without shuffling, for 0 and 3 decode threads.
    for (int threads : {0, 3}) {
      ImageDataSetIterator direct(rr, 5, {.decodeThreads = threads, .shuffle = false});
      const Epoch reference = readEpoch(direct);
      CHECK(reference.features == first.features);
      CHECK(reference.labels == first.labels);
      RecordReaderDataSetIterator threaded(rr, 5, 1, 3, {.decodeThreads = threads});
      CHECK(readEpoch(threaded).features == first.features);
    }
    // More decode threads than prefetched batches: the prefetch grows to one batch a thread.
    RecordReaderDataSetIterator eight(rr, 2, 1, 3, {.decodeThreads = 8});
    CHECK(readEpoch(eight).features == first.features);
    // initialize(split) without a transform keeps the reader's.
    rr.initialize(split);
    RecordReaderDataSetIterator kept(rr, 5, 1, 3);
    CHECK(readEpoch(kept).features == first.features);
    // A new epoch: the same order (DataVec's), new augmentation draws.
    it.reset();
    const Epoch second = readEpoch(it);
    CHECK(second.labels == first.labels);
    CHECK(second.features != first.features);
    // .shuffle = true: a new order every epoch, drawn from .seed.
    RecordReaderDataSetIterator shuffled(rr, 5, 1, 3, {.shuffle = true, .seed = 3});
    CHECK(readEpoch(shuffled).labels != first.labels);

    // The pre-processor applies to every batch.
    RecordReaderDataSetIterator scaled(rr, 24, 1, 3);
    scaled.setPreProcessor(std::make_shared<ImagePreProcessingScaler>(0, 1));
    const DataSet all = scaled.next();
    for (size_t i = 0; i < first.features.size(); ++i)
      CHECK(all.features.data()[i] == doctest::Approx(first.features[i] / 255.0f));
    CHECK_FALSE(scaled.hasNext());
    CHECK_THROWS_AS(scaled.next(), DataError);

    // Owning form: the iterator keeps its reader alive.
    auto owned = std::make_shared<ImageRecordReader>(3, 4, 1, labelMaker);
    owned->initialize(split);
    RecordReaderDataSetIterator holding(std::move(owned), 8, 1, 3);
    CHECK(readEpoch(holding).labels == first.labels);
  }

  TEST_CASE(
      "RecordReaderDataSetIterator over an ImageRecordReader: labelIndex, numClasses and an "
      "uninitialized reader are ConfigErrors") {
    testutil::TempDir dir;
    writeClasses(dir.path(), {{"a", 2}, {"b", 2}});
    auto labelMaker = std::make_shared<ParentPathLabelGenerator>();
    ImageRecordReader rr(6, 8, 1, labelMaker);
    CHECK_THROWS_AS(RecordReaderDataSetIterator(rr, 2, 1, 2), ConfigError);  // not initialized
    rr.initialize(FileSplit(dir.path(), NativeImageLoader::ALLOWED_FORMATS, 1));
    CHECK_THROWS_AS(RecordReaderDataSetIterator(rr, 2, 0, 2), ConfigError);
    try {
      RecordReaderDataSetIterator it(rr, 2, 1, 10);
      FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).find("2 label(s) (a, b)") != std::string::npos);
    }
    CHECK_THROWS_AS(RecordReaderDataSetIterator(rr, 0, 1, 2), ConfigError);
    CHECK_THROWS_AS(RecordReaderDataSetIterator(rr, 2, 1, 2, {.decodeThreads = -1}), ConfigError);
    CHECK_THROWS_AS(
        RecordReaderDataSetIterator(std::shared_ptr<const ImageRecordReader>(), 2, 1, 2),
        ConfigError);
  }

  TEST_CASE(
      "DataVec faces: a broken image, an empty class folder and a file of another kind are "
      "errors naming the file or folder") {
    testutil::TempDir dir;
    writeClasses(dir / "data", {{"a", 4}, {"b", 4}});
    auto labelMaker = std::make_shared<ParentPathLabelGenerator>();
    {  // A truncated PNG: the batch holding it fails, naming the file.
      const fs::path broken = dir / "data/b/2.png";
      const auto size = fs::file_size(broken);
      fs::resize_file(broken, size / 2);
      ImageRecordReader rr(6, 8, 1, labelMaker);
      rr.initialize(FileSplit(dir / "data", NativeImageLoader::ALLOWED_FORMATS));
      RecordReaderDataSetIterator it(rr, 8, 1, 2);
      try {
        it.next();
        FAIL("expected DataError");
      } catch (const DataError& e) {
        CHECK(std::string(e.what()).find(broken.string()) != std::string::npos);
      }
      ImageWriter::writePng(ramp(1), broken);
    }
    {  // A file that is not an image, read because FileSplit(dir) takes every file.
      std::ofstream(dir / "data/a/notes.txt") << "not an image\n";
      ImageRecordReader rr(6, 8, 1, labelMaker);
      rr.initialize(FileSplit(dir / "data"));
      RecordReaderDataSetIterator it(rr, 16, 1, 2);
      try {
        it.next();
        FAIL("expected DataFormatError");
      } catch (const DataFormatError& e) {
        CHECK(std::string(e.what()).find("notes.txt") != std::string::npos);
      }
      // With ALLOWED_FORMATS it is skipped and counted, as a GIF is (not a format read here).
      touch(dir / "data/b/photo.gif");
      const FileSplit images(dir / "data", NativeImageLoader::ALLOWED_FORMATS);
      CHECK(images.length() == 8);
      CHECK(images.skippedFiles() == 2);
    }
    {  // An empty class folder.
      fs::create_directories(dir / "data/c");
      try {
        FileSplit split(dir / "data", NativeImageLoader::ALLOWED_FORMATS, 3);
        FAIL("expected DataError");
      } catch (const DataError& e) {
        CHECK(std::string(e.what()).find((dir / "data/c").string()) != std::string::npos);
      }
    }
  }

  TEST_CASE("DataVec faces: the same seed gives the same parts and the same batches") {
    testutil::TempDir dir;
    writeClasses(dir.path(), {{"a", 12}, {"b", 9}, {"c", 10}});
    const auto run = [&](uint64_t seed) {
      auto labelMaker = std::make_shared<ParentPathLabelGenerator>();
      FileSplit trainSplit(dir.path(), NativeImageLoader::ALLOWED_FORMATS, seed);
      BalancedPathFilter pathFilter(seed, NativeImageLoader::ALLOWED_FORMATS, labelMaker);
      std::vector<InputSplit> parts = trainSplit.sample(pathFilter, 80, 20);
      ImageRecordReader rr(6, 8, 1, labelMaker);
      rr.initialize(parts[0], std::make_shared<FlipImageTransform>(seed));
      RecordReaderDataSetIterator it(rr, 4, 1, rr.numLabels());
      return std::make_pair(parts[0].locations(), readEpoch(it).features);
    };
    const auto a = run(42), b = run(42), c = run(7);
    CHECK(a.first.size() == 22);  // round(27 * 0.8)
    CHECK(a.first == b.first);
    CHECK(a.second == b.second);
    CHECK(a.first != c.first);
    CHECK(a.second != c.second);
  }

  TEST_CASE(
      "FlipImageTransform(seed): DataVec's FlipImageTransform(rng), the seed changes the draws, "
      "an int does not compile") {
    static_assert(!std::is_constructible_v<FlipImageTransform, int>);
    static_assert(std::is_constructible_v<FlipImageTransform, uint64_t>);
    const Image source = ramp(0);
    const auto modes = [&](uint64_t seed) {
      const FlipImageTransform flip(seed);
      std::vector<std::vector<float>> results;
      for (uint64_t example = 0; example < 32; ++example) {
        Image image = source;
        ExampleRandom random(9, 0, example);
        flip.transform(image, random);
        results.push_back(image.pixels);
      }
      return results;
    };
    const auto a = modes(1), b = modes(1), c = modes(2);
    CHECK(a == b);
    CHECK(a != c);
    std::set<std::vector<float>> distinct(a.begin(), a.end());
    CHECK(distinct.size() == 4);  // none, horizontal, vertical, both
  }

  TEST_CASE("NativeImageLoader::asMatrix: one image as ImageRecordReader loads it") {
    testutil::TempDir dir;
    writeClasses(dir.path(), {{"a", 1}});
    const NativeImageLoader loader(3, 4, 3);
    const Tensor matrix = loader.asMatrix(dir / "a/0.png");
    CHECK(matrix.shape() == Shape{1, 3, 3, 4});
    const ImageRecordReader reader(3, 4, 3, LabeledFileSplit(dir.path()));
    std::vector<float> pixels(36);
    ExampleRandom random(0, 0, 0);
    reader.load(0, random, pixels.data());
    CHECK(std::vector<float>(matrix.data(), matrix.data() + 36) == pixels);
    CHECK_THROWS_AS(loader.asMatrix(dir / "missing.png"), DataNotFoundError);
    CHECK_THROWS_AS(NativeImageLoader(0, 4, 1), ConfigError);
  }
}

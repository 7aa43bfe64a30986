// ImageRecordReader + ImageDataSetIterator over real files: PNG and JPEG folders written by
// ImageWriter, decoded, augmented and resized in parallel.
#include <TempDir.h>
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "iterators/image/ImageWriter.h"

using namespace dl4cpp;
namespace fs = std::filesystem;

namespace {

// A grey image whose every pixel is `value`.
Image flat(int height, int width, float value) {
  Image image(1, height, width);
  std::fill(image.pixels.begin(), image.pixels.end(), value);
  return image;
}

// root/<label>/<i>.png: `count` 8x8 images per label, pixel value 10 * label + i.
void writeClasses(const fs::path& root, int labels, int count) {
  for (int label = 0; label < labels; ++label) {
    fs::create_directories(root / std::to_string(label));
    for (int i = 0; i < count; ++i)
      ImageWriter::writePng(flat(8, 8, static_cast<float>(10 * label + i)),
                            root / std::to_string(label) / (std::to_string(i) + ".png"));
  }
}

std::vector<std::vector<float>> epoch(ImageDataSetIterator& it) {
  std::vector<std::vector<float>> batches;
  while (it.hasNext()) {
    const DataSet batch = it.next();
    batches.emplace_back(batch.features.data(), batch.features.data() + batch.features.numel());
  }
  return batches;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE(
      "ImageRecordReader: every file decoded, resized to the asked size and labelled by its "
      "folder") {
    testutil::TempDir dir;
    writeClasses(dir.path(), 3, 4);
    const ImageRecordReader reader(4, 4, 3, LabeledFileSplit(dir.path()));
    CHECK(reader.size() == 12);
    CHECK(reader.imageShape().size() == 48);
    ImageDataSetIterator it(reader, 5, {.decodeThreads = 2, .shuffle = false});
    int64_t seen = 0;
    while (it.hasNext()) {
      const DataSet batch = it.next();
      CHECK(batch.features.shape() == Shape{batch.numExamples(), 3, 4, 4});
      for (int64_t r = 0; r < batch.numExamples(); ++r, ++seen) {
        const int label = static_cast<int>(seen / 4), i = static_cast<int>(seen % 4);
        const float* pixels = batch.features.data() + r * 48;
        // Grey repeated in three channels; an 8x8 -> 4x4 area mean of a flat image is exact.
        for (int k = 0; k < 48; ++k) CHECK(pixels[k] == static_cast<float>(10 * label + i));
        CHECK(batch.labels.data()[r * 3 + label] == 1.0f);
      }
    }
    CHECK(seen == 12);
  }

  TEST_CASE(
      "ImageRecordReader: augmented epochs are bit-identical for any number of decode "
      "threads") {
    testutil::TempDir dir;
    for (int label = 0; label < 2; ++label) {
      fs::create_directories(dir / std::to_string(label));
      for (int i = 0; i < 10; ++i) {
        Image image(1, 12, 10);
        for (size_t k = 0; k < image.pixels.size(); ++k)
          image.pixels[k] = static_cast<float>((k * 7 + static_cast<size_t>(i) * 13) % 256);
        ImageWriter::writePng(image, dir / std::to_string(label) / (std::to_string(i) + ".png"));
      }
    }
    const ImageRecordReader reader(
        8, 8, 1, LabeledFileSplit(dir.path()),
        std::make_shared<PipelineImageTransform>(std::vector<PipelineImageTransform::Step>{
            {std::make_shared<FlipImageTransform>(), 0.5},
            {std::make_shared<RotateImageTransform>(20.0), 0.7},
            {std::make_shared<RandomCropTransform>(9, 9), 1.0}}));
    ImageDataSetIterator reference(reader, 3,
                                   {.decodeThreads = 0, .prefetchBatches = 1, .seed = 11});
    const auto first = epoch(reference);
    reference.reset();
    const auto second = epoch(reference);
    CHECK(first != second);  // a new epoch: a new order and new draws
    for (int threads : {1, 2, 4}) {
      CAPTURE(threads);
      ImageDataSetIterator it(reader, 3,
                              {.decodeThreads = threads, .prefetchBatches = 4, .seed = 11});
      CHECK(epoch(it) == first);
      it.reset();
      CHECK(epoch(it) == second);
    }
  }

  TEST_CASE(
      "ImageRecordReader: a corrupt image and a text file with an image's name fail their "
      "batch with an error naming the file") {
    testutil::TempDir dir;
    writeClasses(dir.path(), 2, 3);
    std::ofstream(dir / "1" / "broken.png") << "\x89PNG\r\n\x1a\n but then nothing an image holds";
    const ImageRecordReader reader(8, 8, 1, LabeledFileSplit(dir.path()));
    ImageDataSetIterator it(reader, 2, {.decodeThreads = 2, .shuffle = false});
    const std::string broken = (dir / "1" / "broken.png").string();
    bool failed = false;
    try {
      while (it.hasNext()) it.next();
    } catch (const DataError& e) {
      failed = true;
      CHECK(std::string(e.what()).find(broken) != std::string::npos);
    }
    CHECK(failed);

    fs::remove(dir / "1" / "broken.png");
    std::ofstream(dir / "0" / "notes.jpg") << "a text file named like an image\n";
    const ImageRecordReader textReader(8, 8, 1, LabeledFileSplit(dir.path()));
    ImageDataSetIterator textIt(textReader, 8, {.decodeThreads = 1});
    const std::string notes = (dir / "0" / "notes.jpg").string();
    CHECK_THROWS_WITH_AS(textIt.next(), doctest::Contains(notes.c_str()), DataFormatError);
  }

  TEST_CASE("ImageRecordReader: sizes and channel counts it cannot make are ConfigErrors") {
    testutil::TempDir dir;
    writeClasses(dir.path(), 1, 1);
    const LabeledFileSplit split(dir.path());
    CHECK_THROWS_AS(ImageRecordReader(0, 4, 1, split), ConfigError);
    CHECK_THROWS_AS(ImageRecordReader(4, 4, 2, split), ConfigError);
  }
}

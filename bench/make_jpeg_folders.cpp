// Writes 224x224 RGB JPEGs cut from real photographs, in folders named by photograph, for the
// JPEG rows of the image-pipeline benchmark: python3-sklearn's china.jpg and flower.jpg (640x427),
// random square windows of 224 to 427 pixels at random positions, resized to 224x224 and written
// at quality 90.
//   bench_make_jpeg_folders --out DIR [--per-photo 500] [--seed 1] [--photos DIR]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "SampleSupport.h"
#include "iterators/image/ImageDecoder.h"
#include "iterators/image/ImageResize.h"
#include "iterators/image/ImageWriter.h"

using namespace dl4cpp;

namespace {

constexpr int kSide = 224;

// The side x side window of `photo` whose top-left corner is (top, left).
Image window(const Image& photo, int top, int left, int side) {
  Image out(photo.channels, side, side);
  for (int c = 0; c < photo.channels; ++c)
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x) out.at(c, y, x) = photo.at(c, top + y, left + x);
  return out;
}

}  // namespace

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      {{"out", "output root folder (required)"},
       {"per-photo", "images cut from each photograph (default 500)"},
       {"seed", "window seed (default 1)"},
       {"photos",
        "folder holding china.jpg and flower.jpg (default "
        "/usr/lib/python3/dist-packages/sklearn/datasets/images)"}});
  const std::filesystem::path out = options.getString("out", "");
  if (out.empty()) throw std::invalid_argument("--out is required (see --help)");
  const std::filesystem::path photos =
      options.getString("photos", "/usr/lib/python3/dist-packages/sklearn/datasets/images");
  const int64_t perPhoto = options.getInt("per-photo", 500);
  const uint64_t seed = static_cast<uint64_t>(options.getInt("seed", 1));

  for (const char* name : {"china", "flower"}) {
    const Image photo = ImageDecoder::decodeFile(photos / (std::string(name) + ".jpg"), 3);
    const int largest = std::min(photo.height, photo.width);
    std::filesystem::create_directories(out / name);
    for (int64_t i = 0; i < perPhoto; ++i) {
      ExampleRandom random(seed, 0, static_cast<uint64_t>(i));
      const int side = kSide + random.below(largest - kSide + 1);
      const int top = random.below(photo.height - side + 1);
      const int left = random.below(photo.width - side + 1);
      ImageWriter::writeJpeg(resize(window(photo, top, left, side), kSide, kSide),
                             out / name / fmt::format("{:05}.jpg", i), 90);
    }
  }
  std::cout << fmt::format("wrote {} {}x{} JPEGs per photograph into {}\n", perPhoto, kSide, kSide,
                           out.string());
  return 0;
}

int main(int argc, char** argv) {
  return samples::runSample("bench_make_jpeg_folders", [&] { return run(argc, argv); });
}

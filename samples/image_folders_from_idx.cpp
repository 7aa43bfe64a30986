// Writes an IDX image set (MNIST, Fashion-MNIST) as image files in folders named by class, the
// layout ImageRecordReader reads (root/<class>/<index>.png): real data for the image-folder sample
// and its tests. scripts/make-fashion-png.sh runs it on Debian's Fashion-MNIST.
//   image_folders_from_idx --images FILE --labels FILE --out DIR [--classes a,b,...]
//                          [--format png|jpg] [--limit N]
// --classes names the folders of labels 0, 1, ... (default the digits). Files are written without
// fsync (writeFileAtomically with Durability::Unsynced; two fsyncs a file made 70,000 files take
// minutes): whoever needs a finished tree marks it after a successful run, as
// scripts/make-fashion-png.sh does. Each file follows the library's output-path rule
// (nn/core/OutputPath.h), and --out is checked before the IDX files are read.
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <sstream>

#include "SampleSupport.h"
#include "iterators/IdxReader.h"
#include "iterators/image/ImageWriter.h"
#include "nn/core/AtomicFile.h"

using namespace dl4cpp;

namespace {

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  return items;
}

}  // namespace

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      {{"images", "IDX images file (gzip or raw)"},
       {"labels", "IDX labels file (gzip or raw)"},
       {"out", "output root folder"},
       {"classes", "folder names of labels 0, 1, ..., comma-separated (default 0,1,...,9)"},
       {"format", "png | jpg (default png)"},
       {"limit", "write only the first N images, 0 = all (default 0)"}});
  const std::string images = options.getString("images", "");
  const std::string labelsFile = options.getString("labels", "");
  const std::filesystem::path out = options.getString("out", "");
  if (images.empty() || labelsFile.empty() || out.empty())
    throw std::invalid_argument("--images, --labels and --out are required (see --help)");
  const std::vector<std::string> classes =
      splitList(options.getString("classes", "0,1,2,3,4,5,6,7,8,9"));
  const std::string format = options.getString("format", "png");
  if (format != "png" && format != "jpg")
    throw std::invalid_argument("--format must be png or jpg, not " + format);

  const IdxImages idx = IdxReader::readImages(images);
  const IdxLabels labels = IdxReader::readLabels(labelsFile, static_cast<int>(classes.size()));
  if (labels.count() != idx.count)
    throw DataMismatchError(fmt::format("{} holds {} images but {} holds {} labels", images,
                                        idx.count, labelsFile, labels.count()));
  const int64_t limit = options.getInt("limit", 0);
  const int64_t count = limit > 0 ? std::min(limit, idx.count) : idx.count;
  for (const std::string& name : classes) std::filesystem::create_directories(out / name);

  Image image(1, static_cast<int>(idx.rows), static_cast<int>(idx.cols));
  for (int64_t i = 0; i < count; ++i) {
    std::copy(idx.image(i), idx.image(i) + idx.imageSize(), image.pixels.begin());
    const std::filesystem::path file =
        out / classes[labels.labels[static_cast<size_t>(i)]] / fmt::format("{:05}.{}", i, format);
    writeFileAtomically(
        file, format == "png" ? ImageWriter::encodePng(image) : ImageWriter::encodeJpeg(image),
        format == "png" ? "a PNG image" : "a JPEG image", Durability::Unsynced);
  }
  std::cout << fmt::format("wrote {} {} images of {}x{} into {} ({} classes)\n", count, format,
                           idx.rows, idx.cols, out.string(), classes.size());
  return 0;
}

int main(int argc, char** argv) {
  return samples::runSample("image_folders_from_idx", [&] { return run(argc, argv); });
}

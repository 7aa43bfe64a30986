// Images per second through the image pipeline (read, decode, augment, resize, batch) against the
// number of decode threads: an ImageRecordReader over a folder tree, batched by an
// ImageDataSetIterator whose epochs are read and thrown away. Every thread count runs --repeats
// times, interleaved with the others so drift of a noisy machine spreads evenly; the table reports
// medians. Thread count 0 decodes on the calling thread (no prefetch), the baseline.
//   bench_image_pipeline --data-dir DIR [--height 28] [--width 28] [--channels 1]
//                        [--threads 0,1,2,4] [--batch 64] [--augment 1] [--max-per-class 0]
//                        [--repeats 3] [--json PATH]
// scripts/make-fashion-png.sh and scripts/make-bench-jpegs.sh write the folders the docs use.
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "AugmentationPipeline.h"
#include "Median.h"
#include "SampleSupport.h"

using bench::median;

using namespace dl4cpp;

namespace {

std::vector<int> parseThreadCounts(const std::string& text) {
  std::vector<int> counts;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    const int n = std::stoi(item, &used);
    if (used != item.size() || n < 0)
      throw std::invalid_argument("--threads expects counts >= 0 separated by commas, got '" +
                                  text + "'");
    counts.push_back(n);
  }
  return counts;
}

// Seconds to read one epoch of `reader` with `threads` decode threads.
double epochSeconds(const ImageRecordReader& reader, int batch, int threads) {
  ImageDataSetIterator it(reader, batch,
                          {.decodeThreads = threads, .prefetchBatches = std::max(4, 2 * threads)});
  const auto start = std::chrono::steady_clock::now();
  int64_t examples = 0;
  while (it.hasNext()) examples += it.next().numExamples();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (examples != reader.size())
    throw std::runtime_error(fmt::format("read {} examples, expected {}", examples, reader.size()));
  return seconds;
}

}  // namespace

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      {{"data-dir", "root of the labelled image folders (required)"},
       {"height", "output height (default 28)"},
       {"width", "output width (default 28)"},
       {"channels", "output channels: 1, 3 or 4 (default 1)"},
       {"threads", "decode thread counts to compare, comma-separated (default 0,1,2,4)"},
       {"batch", "examples per batch (default 64)"},
       {"augment", "1 = the samples' augmentation pipeline, 0 = none (default 1)"},
       {"max-per-class", "read at most N images of each class, 0 = all (default 0)"},
       {"repeats", "epochs per thread count (default 3)"},
       {"json", "also write the results to this file"}});
  const std::string dir = options.getString("data-dir", "");
  if (dir.empty()) throw std::invalid_argument("--data-dir is required (see --help)");
  const int height = static_cast<int>(options.getInt("height", 28));
  const int width = static_cast<int>(options.getInt("width", 28));
  const int channels = static_cast<int>(options.getInt("channels", 1));
  const int batch = static_cast<int>(options.getInt("batch", 64));
  const int repeats = static_cast<int>(options.getInt("repeats", 3));
  const bool augment = options.getInt("augment", 1) != 0;
  const std::vector<int> threadCounts = parseThreadCounts(options.getString("threads", "0,1,2,4"));
  if (repeats < 1) throw std::invalid_argument("--repeats must be >= 1");

  LabeledFileSplit split(dir);
  if (const int64_t cap = options.getInt("max-per-class", 0); cap > 0)
    split = BalancedPathFilter(1, cap).filter(split);
  const ImageRecordReader reader(height, width, channels, split,
                                 augment ? samples::augmentationPipeline() : nullptr);
  std::cout << samples::cpuIsaLine()
            << fmt::format("{}: {} images in {} classes -> {}x{}x{}, batch {}, augmentation {}\n",
                           dir, split.size(), split.numLabels(), channels, height, width, batch,
                           augment ? "on" : "off");

  std::vector<std::vector<double>> rates(threadCounts.size());
  for (int r = 0; r < repeats; ++r)
    for (size_t i = 0; i < threadCounts.size(); ++i)
      rates[i].push_back(static_cast<double>(split.size()) /
                         epochSeconds(reader, batch, threadCounts[i]));

  std::cout << fmt::format("\n{:>14} {:>14} {:>10}\n", "decode threads", "images/s", "vs 0");
  std::string json = "{\"results\": [";
  const double base = median(rates[0]);
  for (size_t i = 0; i < threadCounts.size(); ++i) {
    const double rate = median(rates[i]);
    std::cout << fmt::format("{:>14} {:>14.0f} {:>9.2f}x\n", threadCounts[i], rate, rate / base);
    json += fmt::format("{}{{\"threads\": {}, \"images_per_second\": {:.1f}}}", i ? ", " : "",
                        threadCounts[i], rate);
  }
  json += fmt::format(
      "], \"images\": {}, \"height\": {}, \"width\": {}, \"channels\": {}, "
      "\"augment\": {}, \"repeats\": {}}}\n",
      split.size(), height, width, channels, augment, repeats);
  samples::writeJsonIfRequested(options, json);
  return 0;
}

int main(int argc, char** argv) {
  return samples::runSample("bench_image_pipeline", [&] { return run(argc, argv); });
}

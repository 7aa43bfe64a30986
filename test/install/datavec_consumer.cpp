// Built by scripts/check-install.sh against an installed dl4cpp: DataVec's image pipeline as DL4J's
// examples write it (FileSplit, ParentPathLabelGenerator, BalancedPathFilter, sample(),
// ImageRecordReader, RecordReaderDataSetIterator, ImagePreProcessingScaler), ported line for line,
// trains a small convolutional network with ParallelWrapper (2 workers) on an image folder it
// writes first; exits 1 unless the held-out loss goes down.
#include <dl4cpp/dl4cpp.h>
#include <dl4cpp/iterators/image/ImageWriter.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

using namespace dl4cpp;
namespace fs = std::filesystem;

namespace {

// dir/<class>/<i>.png: three classes of 16x16 grey images, a bright bar across the top, the
// middle or the bottom, with noise.
void writeImages(const fs::path& dir) {
  uint32_t state = 12345;
  for (int label = 0; label < 3; ++label) {
    const fs::path folder = dir / ("class" + std::to_string(label));
    fs::create_directories(folder);
    for (int i = 0; i < 40; ++i) {
      Image image(1, 16, 16);
      for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 16; ++x) {
          state = state * 1664525u + 1013904223u;
          const float noise = static_cast<float>(state >> 24) / 4.0f;
          image.at(0, y, x) = (y / 6 == label ? 180.0f : 20.0f) + noise;
        }
      ImageWriter::writePng(image, folder / (std::to_string(i) + ".png"));
    }
  }
}

}  // namespace

int main() {
  std::string pattern = (fs::temp_directory_path() / "dl4cpp-datavec.XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    std::perror("datavec consumer: mkdtemp");
    return 1;
  }
  const fs::path trainDir = pattern;
  int status = 1;
  try {
    writeImages(trainDir);
    MultiLayerNetwork model(
        NeuralNetConfiguration::Builder()
            .seed(123)
            .updater(Adam(1e-3))
            .list()
            .layer(ConvolutionLayer::Builder(3, 3).nOut(8).activation(Activation::RELU).build())
            .layer(
                SubsamplingLayer::Builder(PoolingType::MAX).kernelSize(2, 2).stride(2, 2).build())
            .layer(OutputLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD)
                       .nOut(3)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::convolutional(16, 16, 1))
            .build());
    model.init();
    const MultiLayerNetwork untrained = model.clone();
    auto wrapper =
        parallel::ParallelWrapper::Builder(model).workers(2).averagingFrequency(1).build();

    // DL4J: Random rng = new Random(42); the seed stands for it.
    const uint64_t seed = 42;
    auto labelMaker = std::make_shared<ParentPathLabelGenerator>();
    FileSplit trainSplit(trainDir, NativeImageLoader::ALLOWED_FORMATS, seed);
    BalancedPathFilter pathFilter(seed, NativeImageLoader::ALLOWED_FORMATS, labelMaker);
    std::vector<InputSplit> parts = trainSplit.sample(pathFilter, 80, 20);
    ImageRecordReader rr(16, 16, 1, labelMaker);
    rr.initialize(parts[0], std::make_shared<FlipImageTransform>(seed));
    RecordReaderDataSetIterator it(rr, 16, 1, rr.numLabels());
    it.setPreProcessor(std::make_shared<ImagePreProcessingScaler>(0, 1));
    std::vector<std::string> labels = rr.getLabels();
    wrapper.fit(it, 5);

    ImageRecordReader testReader(16, 16, 1, labelMaker);
    testReader.initialize(parts[1]);
    RecordReaderDataSetIterator testIterator(testReader, 100, 1, testReader.numLabels());
    testIterator.setPreProcessor(std::make_shared<ImagePreProcessingScaler>(0, 1));
    const DataSet heldOut = testIterator.next();
    MultiLayerNetwork before = untrained.clone();
    const double lossBefore = before.score(heldOut), lossAfter = model.score(heldOut);
    std::printf(
        "dl4cpp datavec consumer: %zu labels, %lld training and %lld held-out images, held-out "
        "loss %.4f -> %.4f\n",
        labels.size(), static_cast<long long>(parts[0].length()),
        static_cast<long long>(parts[1].length()), lossBefore, lossAfter);
    if (labels.size() == 3 && std::isfinite(lossAfter) && lossAfter < lossBefore)
      status = 0;
    else
      std::fprintf(stderr, "datavec consumer: unexpected labels or a loss that did not go down\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "datavec consumer: %s\n", e.what());
  }
  std::error_code ignored;
  fs::remove_all(trainDir, ignored);
  return status;
}

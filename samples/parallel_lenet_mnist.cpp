// LeNet on MNIST trained by ParallelWrapper: DL4J's multi-GPU tutorial (MultiGpuLenetMnistExample)
// in C++. Workers are replicas on every visible GPU (--device cuda, the default when there is one)
// or on the CPU (--device cpu). With --cluster mpi, every process of an MPI job trains its shard
// of each epoch with its own workers, and the ranks average together (docs/cluster.md):
//   parallel_lenet_mnist [--workers 2] [--averaging-frequency 3] [--prefetch 24] [--epochs 1]
//                        [--save PATH] [--ui-port N] [--report PATH]
//                        [--outer-updater nesterovs:0.7:0.9] [--failure-policy drop-worker]
//                        [--checkpoint-dir DIR [--checkpoint-every N] [--resume auto]]
//                        [--mode shared-gradients [--threshold-algorithm adaptive]]
//                        [--network batchnorm|resnet --dataset fashion] [--eval-every N]
//                        [--target-accuracy A]
//   mpirun -np 2 parallel_lenet_mnist --cluster mpi --workers 1
// --eval-every N evaluates the test set every N iterations (rank 0), printing one line each
// ("eval: iteration I, training seconds T, accuracy A"; T leaves the evaluations out), and the
// first time the accuracy reached --target-accuracy: scripts/bench-slow-links.sh reads them.
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "BatchNormConfiguration.h"
#include "LenetConfiguration.h"
#include "LongRunFlags.h"
#include "ResidualConfiguration.h"
#include "SampleSupport.h"
#include "TrainingUi.h"

using namespace dl4cpp;

namespace {

// Evaluates the root model every `every` iterations; the training time it reports leaves its own
// evaluations out (the other ranks wait for rank 0 meanwhile, so they lose the same time).
class EvaluatingListener final : public TrainingListener {
 public:
  EvaluatingListener(Model& model, DataSetIterator& test, int64_t every, double target)
      : model_(&model), test_(&test), every_(every), target_(target) {}
  void iterationDone(const Model&, const IterationInfo& info) override {
    if (info.iteration / every_ == last_ / every_) return;
    last_ = info.iteration;
    evaluateNow(info.iteration);
  }
  void evaluateNow(int64_t iteration) {
    const auto start = std::chrono::steady_clock::now();
    const double trained = seconds(start - begin_) - evaluating_;
    test_->reset();
    const double accuracy = model_->evaluate(*test_).accuracy();
    std::cout << fmt::format("eval: iteration {}, training seconds {:.3f}, accuracy {:.4f}\n",
                             iteration, trained, accuracy);
    if (target_ > 0 && accuracy >= target_ && !reached_) {
      reached_ = true;
      std::cout << fmt::format("target accuracy {:.4f} reached: iteration {}, {:.3f} s\n", target_,
                               iteration, trained);
    }
    evaluating_ += seconds(std::chrono::steady_clock::now() - start);
  }
  bool reached() const { return reached_; }

 private:
  static double seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
  }
  Model* model_;
  DataSetIterator* test_;
  int64_t every_;
  double target_;
  int64_t last_ = 0;
  bool reached_ = false;
  double evaluating_ = 0;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now();
};

}  // namespace

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      samples::withLongRunFlags(samples::withTrainingUiFlags(
          {{"epochs", "training epochs (default 1)"},
           {"batch", "global minibatch: examples per round-step across all workers (default 128)"},
           {"worker-batch", "minibatch of each worker (default: batch / workers, rounded up)"},
           {"workers", "model replicas training in parallel (default 2)"},
           {"averaging-frequency", "local iterations between averagings (default 3)"},
           {"prefetch", "minibatches prefetched by a background thread, 0 = off (default 24)"},
           {"threads-per-worker", "CPU threads per worker, 0 = cores / workers (default 0)"},
           {"mode", "averaging | shared-gradients (default averaging)"},
           {"device",
            "cpu | cuda: workers on the CPU or on every visible GPU (default cuda when a GPU is "
            "present)"},
           {"average-updaters",
            "1 = average updater state too, 0 = keep each worker's (default 1)"},
           {"lr-scaling",
            "linear | sqrt | none: multiply the learning rate by the worker count or its square "
            "root (default none; docs/parallel.md's recipe: linear)"},
           {"scaling-warmup", "iterations over which --lr-scaling ramps up from 1 (default 0)"},
           {"averaging-warmup",
            "average after every iteration for this many iterations, then every "
            "--averaging-frequency (default 0)"},
           {"network",
            "lenet | batchnorm | resnet: LeNet, the batch-norm network of "
            "parallel_batchnorm_fashion, or the residual ComputationGraph of "
            "parallel_resnet_fashion (default lenet)"},
           {"dataset", "mnist | fashion: the default --data-dir (default mnist)"},
           {"eval-every",
            "evaluate the test set every N iterations, rank 0 (default 0: at the end)"},
           {"target-accuracy",
            "with --eval-every: report when the test accuracy first reaches "
            "this (default 0: never)"},
           {"data-dir",
            "MNIST directory (default $DL4CPP_DATA_DIR/MNIST or ~/.dl4cpp/data/MNIST; "
            "--dataset fashion: " +
                MnistDataSetIterator::fashionMnistDirectory() + ")"},
           {"train-examples", "use only the first N training examples (default: all 60000)"},
           {"test-examples", "use only the first N test examples (default: all 10000)"},
           {"min-accuracy", "exit with status 1 when test accuracy is below this (default 0)"},
           {"save",
            "write the trained model to this file (MultiLayerNetwork::load, or "
            "ComputationGraph::load for resnet, reads it)"},
           {"cluster",
            "mpi: train across the ranks of the MPI job this process belongs to (start it with "
            "mpirun or srun; rank 0 prints, evaluates and saves); none (default)"},
           {"cluster-timeout",
            "seconds a rank waits for the others at a collective before it fails (default "
            "300)"}})));
  const int epochs = static_cast<int>(options.getInt("epochs", 1));
  const std::string clusterName = options.getString("cluster", "none");
  if (clusterName != "none" && clusterName != "mpi")
    throw std::invalid_argument("--cluster must be mpi or none, not " + clusterName);
  std::shared_ptr<parallel::Cluster> cluster;
  if (clusterName == "mpi") {
    cluster = parallel::MpiCluster::world();
    cluster->setTimeout(std::chrono::seconds(options.getInt("cluster-timeout", 300)));
  }
  const int ranks = cluster ? cluster->size() : 1;
  const bool rankZero = !cluster || cluster->rank() == 0;
  // Set on every rank when rank 0 resumes; only rank 0's names the file.
  const auto resumeFrom = samples::checkpointToResume(options, cluster.get());
  // ParallelWrapper deals whole minibatches, so N workers on minibatches of b train like one
  // model on minibatches of N*b: with the single-model sample's b = 128 an epoch holds half the
  // steps and ends less accurate. Keeping the global batch at 128
  // trains the same model as the single-model sample; --worker-batch 128 gives DL4J's setting.
  const int workers = static_cast<int>(options.getInt("workers", 2));
  const int globalBatch = static_cast<int>(options.getInt("batch", 128));
  if (workers < 1 || globalBatch < 1)
    throw std::invalid_argument("--workers and --batch must be >= 1");
  const int batch = static_cast<int>(
      options.getInt("worker-batch", (globalBatch + workers * ranks - 1) / (workers * ranks)));
  const std::string modeName = options.getString("mode", "averaging");
  if (modeName != "averaging" && modeName != "shared-gradients")
    throw std::invalid_argument("--mode must be averaging or shared-gradients, not " + modeName);
  const std::string network = options.getString("network", "lenet");
  if (network != "lenet" && network != "batchnorm" && network != "resnet")
    throw std::invalid_argument("--network must be lenet, batchnorm or resnet, not " + network);
  const std::string dataset = options.getString("dataset", "mnist");
  if (dataset != "mnist" && dataset != "fashion")
    throw std::invalid_argument("--dataset must be mnist or fashion, not " + dataset);
  const std::string dir = options.getString(
      "data-dir", dataset == "fashion" ? MnistDataSetIterator::fashionMnistDirectory() : "");
  const int64_t seed = 123;

  MnistDataSetIterator mnistTrain(batch, static_cast<int>(options.getInt("train-examples", 0)),
                                  false, true, true, seed, dir);
  MnistDataSetIterator mnistTest(batch, static_cast<int>(options.getInt("test-examples", 0)), false,
                                 false, false, seed, dir);

  const std::unique_ptr<Model> root = [&]() -> std::unique_ptr<Model> {
    if (resumeFrom && !resumeFrom->empty()) return ModelSerializer::restoreModel(*resumeFrom);
    std::unique_ptr<Model> m;
    if (network == "resnet")
      m = std::make_unique<ComputationGraph>(
          samples::residualConfiguration(seed, InputType::convolutionalFlat(28, 28, 1)));
    else
      m = std::make_unique<MultiLayerNetwork>(
          network == "lenet" ? samples::lenetConfiguration() : samples::batchNormConfiguration());
    m->init();
    return m;
  }();
  Model& model = *root;
  if (rankZero) std::cout << model.summary() << samples::cpuIsaLine();

  // As DL4J's tutorial: ParallelWrapper::Builder(model).prefetchBuffer(24).workers(2)
  //     .averagingFrequency(3).reportScoreAfterAveraging(true).build()
  auto builder =
      dl4cpp::parallel::ParallelWrapper::Builder(model)
          .prefetchBuffer(static_cast<int>(options.getInt("prefetch", 24)))
          .workers(workers)
          .averagingFrequency(static_cast<int>(options.getInt("averaging-frequency", 3)))
          .reportScoreAfterAveraging(true)
          .averageUpdaters(options.getInt("average-updaters", 1) != 0)
          .learningRateScaling(
              samples::learningRateScalingFromOption(options.getString("lr-scaling", "none")),
              options.getInt("scaling-warmup", 0))
          .averagingWarmup(options.getInt("averaging-warmup", 0))
          .threadsPerWorker(static_cast<int>(options.getInt("threads-per-worker", 0)))
          // A graph's replicas run on the CPU (docs/computation-graph.md).
          .devices(samples::devicesFromOption(
              options.getString("device", network == "resnet" ? "cpu" : "")))
          .trainingMode(modeName == "averaging" ? parallel::TrainingMode::AVERAGING
                                                : parallel::TrainingMode::SHARED_GRADIENTS)
          .cluster(cluster);
  samples::applyLongRunFlags(options, builder);
  auto wrapper = builder.build();
  if (!rankZero) {
    if (resumeFrom)
      wrapper.resume(mnistTrain, epochs);
    else
      for (int epoch = 0; epoch < epochs; ++epoch) wrapper.fit(mnistTrain);
    return 0;
  }
  samples::TrainingUi ui(options);
  std::vector<std::shared_ptr<TrainingListener>> listeners;
  if (ui.enabled()) listeners.push_back(ui.listener());
  std::shared_ptr<EvaluatingListener> evaluating;
  if (const int64_t every = options.getInt("eval-every", 0); every > 0) {
    evaluating = std::make_shared<EvaluatingListener>(model, mnistTest, every,
                                                      options.getDouble("target-accuracy", 0));
    listeners.push_back(evaluating);
  }
  wrapper.setListeners(listeners);
  if (cluster) std::cout << cluster->describe() << ", " << ranks << " ranks\n";
  std::cout << fmt::format(
      "{} workers x {} thread(s) on {} per rank, {} rank(s), minibatch {} per worker, {} "
      "examples per epoch\n",
      wrapper.workers(), wrapper.threadsPerWorker(), wrapper.devices().front().toString(), ranks,
      batch, mnistTrain.totalExamples());

  if (resumeFrom) {
    std::cout << fmt::format("resuming from {}: epoch {}, {} minibatches into it\n",
                             resumeFrom->string(), model.getEpochCount() + 1,
                             model.getMinibatchesInEpoch());
    wrapper.resume(mnistTrain, epochs);
    std::cout << fmt::format("trained to the end of epoch {}, averaged score {:.4f}\n", epochs,
                             model.score());
  }
  for (int epoch = resumeFrom ? epochs : 0; epoch < epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    wrapper.fit(mnistTrain);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& s = wrapper.statistics();
    // On a cluster the epoch's examples were trained once across all ranks; s counts this rank's.
    const double examples =
        cluster ? static_cast<double>(mnistTrain.totalExamples()) : static_cast<double>(s.examples);
    std::cout << fmt::format(
        "epoch {}: {:.2f} s, {:.0f} samples/s, averaged score {:.4f}; time shares: averaging "
        "{:.2f}%, waiting at the barrier {:.2f}%, waiting for data {:.2f}%\n",
        epoch + 1, seconds, examples / seconds, model.score(), 100 * s.averagingShare(),
        100 * s.barrierWaitShare(), 100 * s.dataWaitShare());
    if (s.sentRounds > 0)
      std::cout << fmt::format(
          "sent by this rank: {:.0f} bytes per round over {} rounds{}\n", s.sentBytesPerRound(),
          s.sentRounds,
          s.encodableElements > 0
              ? fmt::format(", density {:.5f}, last threshold {:.3g}", s.density(), s.lastThreshold)
              : "");
    ui.afterEpoch(model, mnistTest);
  }

  if (evaluating) {
    evaluating->evaluateNow(model.getIterationCount());
    if (options.getDouble("target-accuracy", 0) > 0 && !evaluating->reached())
      std::cout << "target accuracy not reached\n";
  }
  const std::string savePath = options.getString("save", "");
  if (!savePath.empty()) samples::saveModel(model, savePath);

  mnistTest.reset();
  const int status = samples::reportEvaluation(ui.evaluation(model, mnistTest),
                                               options.getDouble("min-accuracy", 0.0));
  ui.finish();
  return status;
}

int main(int argc, char** argv) {
  return samples::runSample("parallel_lenet_mnist", [&] { return run(argc, argv); });
}

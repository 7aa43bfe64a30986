#pragma once
// ParallelWrapper: data-parallel training of one model (a MultiLayerNetwork or a ComputationGraph:
// any nn/api/Model.h) on N workers (DL4J's ParallelWrapper), line for line as DL4J's multi-GPU
// tutorial:
//
//   auto wrapper = dl4cpp::parallel::ParallelWrapper::Builder(model)
//       .prefetchBuffer(24)
//       .workers(2)
//       .averagingFrequency(3)
//       .reportScoreAfterAveraging(true)
//       .build();
//   wrapper.fit(mnistTrain);
//
// Each worker owns a replica of the model (built on its own thread, bound to
// devices[w % devices.size()], with its own DeviceContext) for the wrapper's lifetime; replicas
// are re-synchronised from the root model at the start of every fit(), never rebuilt.
//
// Rounds. The thread calling fit() coordinates: it deals minibatch i of a round to worker
// i mod N (so a run is reproducible for a given seed), the workers train, and then:
//  - AVERAGING: after k = averagingFrequency local iterations each (fewer when the data runs
//    out), parameters (and updater state when averageUpdaters) are replaced by their mean
//    weighted by the examples each worker trained in the round; a worker that trained nothing
//    has no vote. The trailing partial round is averaged too, so no trained minibatch is lost.
//    With averagingWarmup(W), rounds hold one iteration each until the root has trained W
//    iterations, then k (post-local SGD: Lin et al., "Don't Use Large Mini-Batches, Use Local
//    SGD", 2020): averaging every step while the parameters move fast, every k once they settle.
//  - SHARED_GRADIENTS: every iteration, the workers' gradients are averaged (weighted by
//    examples) and every replica applies the same update: synchronous data parallelism, equal
//    to training one model on the concatenated minibatches.
//    With thresholdAlgorithm(a) the gradients travel threshold-encoded (DL4J's compressed
//    sharing, ThresholdEncoding.h): each worker adds its example-weighted share of the gradient
//    (examples / the round's examples, times its gradient) to its own residual, encodes the
//    residual with the tau `a` picks (only elements with |r_i| >= tau travel, as +-tau; the rest
//    stays in the residual for later steps), and every replica replaces its gradient by the sum
//    of every worker's decoded message, added in worker order (on a cluster: rank order, then
//    worker order), before the updater runs on it as above. Every replica so applies the same
//    update, bit-reproducibly. Unlike DL4J, which encodes each worker's update after its own
//    updater, the gradient is encoded and the one updater runs on the decoded sum: every replica
//    keeps the same updater state, which checkpoints hold whole. The residuals live in the
//    wrapper, carry over from one fit() to the next, and are not in checkpoints (a resumed
//    compressed run is close to, not equal to, the uninterrupted one). ParallelStatistics reports
//    what was sent (bytes, density). Frozen layers' gradients are not sent.
// Averaging runs on the workers, each over its own slice of the flat buffers. After every round
// the root model holds the averaged parameters, iteration count and score; listeners are called
// on the coordinator thread with the round's example-weighted mean score and RoundTiming.
// Every replica steps on the root's counts: the j-th local iteration of a round is the root's
// iteration count at the round's start plus j, in the root's epoch, so learning-rate and momentum
// schedules switch at the global iteration they name, as in one model.
//
// Outer updater. With outerUpdater(u) (DiLoCo: Nesterovs(0.7, 0.9)), each averaging does not
// replace the parameters by the workers' example-weighted mean but moves the global parameters
// (the root's, as every worker started the round from) by the updater u applied to the outer
// gradient `global - mean`, then hands them to every worker (RoundCombine.h). Updater state and
// layer state are combined as without it. Any dl4cpp updater will do; Sgd(1.0) is plain
// averaging up to float rounding. On a cluster the mean is all-reduced first and every rank takes
// the same step. The outer updater's state (velocity or moments, step count) lives in the
// wrapper, carries over from one fit() to the next, is saved beside every checkpoint
// (Checkpoint.h) and is read back by resume(). AVERAGING only.
//
// Learning-rate scaling. With learningRateScaling(rule, warmup), every worker's learning rate
// (after its schedule) is multiplied by the worker count (LINEAR) or its square root (SQRT),
// ramping up from 1 over the first `warmup` iterations (LearningRateScaling.h). The root model's
// own learningRateScale() is left alone; listeners get the multiplier in IterationInfo.
//
// Checkpoints. With checkpointEvery(policy, directory, keepLast), the averaged root model (with
// updater state and counters) is written atomically to `directory` at the averaging boundaries
// the policy picks (Checkpoint.h); only the newest keepLast files are kept. fit() and resume()
// refuse with ConfigError, before training, a directory that holds checkpoints newer than the
// root model (another run's, see Checkpoint.h), and with OutputPathError one that cannot be
// written (not a directory, or neither it nor its nearest existing parent writable; links are
// followed, nn/core/OutputPath.h). A failed write ends fit() with IoError, like any
// other failure. With checkpointNormalizer(n), each checkpoint also holds the normalizer n.
//
// Resuming. A checkpoint records how many epochs the run had finished and how many minibatches
// of the next it had trained. resume() continues from there and, for a deterministic source,
// ends with exactly the parameters of the uninterrupted run: bit-identical with the same worker
// count, threads per worker and options (tested with 1 and 2 workers). With averageUpdaters(false)
// the replicas' own updater states are not in the checkpoint, so a resumed run is close, not exact.
//
// Clusters. With cluster(c) (MpiCluster::world(), say), every process (rank) of c runs this
// wrapper with its own workers (the same count on every rank) on the same network and the same
// data: each rank passes fit() the whole data set, constructed alike (same seed), and trains
// only its shard, batch i of every epoch on rank i mod size (RankShardIterator). At fit()'s
// start every rank takes rank 0's model (parameters, updater and layer state, counters). Each
// round ends with a vote (examples, loss, stop, failure) and, at every averaging, the
// example-weighted sums of every rank's parameters, updater state (SHARED_GRADIENTS: gradients)
// and layer state are all-reduced, so every rank holds the same averaged model and reports the
// same score, the mean over every worker of every rank. A rank whose shard has run out trains
// nothing and has no vote until the epoch ends on every rank. Listeners, the score report and
// checkpoints run on rank 0 only; stopFit() on any rank stops every rank after the same round.
// An exception on one rank ends fit() on every rank: that rank throws its own, the others a
// ClusterError naming it, at the next vote; a rank that dies or hangs makes the others throw
// ClusterError after the cluster's timeout. Workers must run on host memory for now (GPU
// workers: ConfigError). With one worker per rank the dealing is that of one process with
// `size` workers, and two ranks end with the same parameters as one process with two workers,
// bit for bit. docs/cluster.md.
//
// Failures. An exception in a worker, in the prefetch thread or in a listener ends fit() with
// that exception on the caller's thread once the current phase has finished on every worker;
// no thread is left behind. With failurePolicy(FailurePolicy::DROP_WORKER), a worker whose
// training step throws is dropped instead: its whole round is discarded (it has no vote in the
// average, which the other workers' rounds make as usual, and the minibatches it was dealt in
// that round are not trained), a warning goes to std::clog and to the listeners
// (WorkerFailureListener), and the rest of this fit() deals every minibatch to the
// workers left, in order (those already dealt to the dropped worker for the next round too).
// The next fit() or resume() starts with every worker again. When no worker is left, fit() ends
// with the last one's exception. Failures outside the workers' steps (data, listeners,
// checkpoints) still end fit(). stopFit() (from any thread) ends fit() at the next round boundary
// with a consistent, averaged root model.
#include <atomic>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iterators/DataSetIterator.h"
#include "nn/api/Model.h"
#include "nn/api/TrainingListener.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/tensor/Device.h"
#include "parallel/Checkpoint.h"
#include "parallel/LearningRateScaling.h"
#include "parallel/ThresholdEncoding.h"
#include "parallel/cluster/Cluster.h"

namespace dl4cpp::parallel {

enum class TrainingMode { AVERAGING, SHARED_GRADIENTS };

// A listener that also hears of dropped workers (FailurePolicy::DROP_WORKER): a TrainingListener
// given to the wrapper that derives from this class too is told, on the thread that called fit(),
// before the round's iterationDone, that worker `worker`'s step threw `error` (its message) in the
// round ending at `iteration`, that round of the worker was discarded, and the worker takes no
// part in the rest of this fit().
class WorkerFailureListener {
 public:
  virtual ~WorkerFailureListener() = default;
  virtual void onWorkerDropped(const Model& model, int worker, int64_t iteration,
                               const std::string& error) = 0;
};

// What fit() does when a worker's training step throws (see Failures above).
enum class FailurePolicy {
  FAIL_FAST,    // fit() ends with the exception
  DROP_WORKER,  // the worker's round is discarded and the worker dropped; the others go on
};

// Totals over the last fit() call (seconds; worker figures are per-worker means); on a cluster,
// this rank's examples and times.
struct ParallelStatistics {
  int64_t rounds = 0;
  int64_t examples = 0;
  RoundTiming total;
  // What this rank put on the wire: with threshold encoding, its workers' messages (each round,
  // to every other rank; alone, what the workers exchange in memory); without it, on a cluster,
  // its share of the all-reduced buffers (parameters, updater and layer state, or gradients).
  int64_t sentBytes = 0;
  int64_t sentRounds = 0;  // rounds that sent anything
  // Threshold encoding: elements sent and elements that could have been (the trainable
  // parameters, once per worker that trained in the round), and the last tau of worker 0.
  int64_t encodedElements = 0;
  int64_t encodableElements = 0;
  double lastThreshold = 0;
  double sentBytesPerRound() const {
    return sentRounds > 0 ? static_cast<double>(sentBytes) / static_cast<double>(sentRounds) : 0;
  }
  // Share of the elements that travelled (0..1), over the fit.
  double density() const {
    return encodableElements > 0
               ? static_cast<double>(encodedElements) / static_cast<double>(encodableElements)
               : 0;
  }
  double samplesPerSecond() const {
    return total.wall > 0 ? static_cast<double>(examples) / total.wall : 0;
  }
  // Share of wall time in each activity (0..1).
  double averagingShare() const { return total.wall > 0 ? total.averaging / total.wall : 0; }
  double dataWaitShare() const { return total.wall > 0 ? total.dataWait / total.wall : 0; }
  double barrierWaitShare() const { return total.wall > 0 ? total.barrierWait / total.wall : 0; }
};

class ParallelWrapper {
 public:
  class Builder;

  ~ParallelWrapper();  // close()
  ParallelWrapper(ParallelWrapper&&) noexcept;
  ParallelWrapper& operator=(ParallelWrapper&&) noexcept;

  // One epoch over `iterator` (reset first when exhausted and resettable). DataError, before
  // anything is trained, when it yields no minibatch at all.
  void fit(DataSetIterator& iterator);
  void fit(DataSetIterator& iterator, int epochs);
  // Continues an interrupted run until the root model has finished `totalEpochs` epochs. The
  // root (e.g. MultiLayerNetwork::load() or ComputationGraph::load() of Checkpoints::latest(dir))
  // has finished
  // getEpochCount() epochs and getMinibatchesInEpoch() minibatches of the next. `iterator` must
  // be the run's source as it was when the run started (e.g. constructed again with the same
  // arguments, seed included): resume() replays its epochs (one reset() per finished epoch, so
  // a shuffling iterator reaches the same order), skips the minibatches already trained, and
  // trains the rest. The run must have started from epoch 0. DataError when the iterator cannot
  // be reset or holds fewer minibatches than the checkpoint says were trained. On a cluster every
  // rank calls resume(): rank 0 with the checkpoint, the others with any model of the same
  // configuration (they take rank 0's, counters included).
  void resume(DataSetIterator& iterator, int totalEpochs);
  // Reads the outer updater's state saved beside `checkpoint` (Checkpoints::outerStateFile): call
  // before resume() when the wrapper was built without checkpointEvery, or with another
  // directory; with checkpointEvery, resume() reads the one beside the checkpoint of the root's
  // position in that directory by itself. On a cluster rank 0's counts (every rank takes it).
  // ConfigError without an outerUpdater; DataNotFoundError when the file is missing; the
  // errors of a damaged or mismatched file (DataFormatError, ChecksumError, VersionError,
  // DataMismatchError).
  void restoreOuterUpdaterState(const std::filesystem::path& checkpoint);
  // Ends a running fit() at the next round boundary. Thread-safe; a no-op when none runs.
  void stopFit();
  // Joins every worker thread; the wrapper cannot fit afterwards. Idempotent.
  void close();

  void setListeners(std::vector<std::shared_ptr<TrainingListener>> listeners);
  int workers() const;
  const std::vector<Device>& devices() const;
  int threadsPerWorker() const;
  const ParallelStatistics& statistics() const;

 private:
  struct Impl;
  explicit ParallelWrapper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class ParallelWrapper::Builder {
 public:
  // `model` must be initialised and must outlive the wrapper; it is the root that receives the
  // averaged result.
  // Any Model: a MultiLayerNetwork or a ComputationGraph.
  explicit Builder(Model& model) : model_(&model) {}

  Builder& workers(int n) {
    workers_ = n;
    return *this;
  }  // default: #devices (>= 1)
  Builder& prefetchBuffer(int n) {
    prefetch_ = n;
    return *this;
  }  // default 16; 0 = off
  Builder& averagingFrequency(int k) {
    frequency_ = k;
    return *this;
  }  // default 1; >= 1
  // Rounds of one iteration until the root model has trained `iterations` iterations (counted
  // over the whole run, as schedules are), then averagingFrequency. Default 0; AVERAGING only.
  Builder& averagingWarmup(int64_t iterations) {
    averagingWarmup_ = iterations;
    return *this;
  }
  // Moves the global parameters at every averaging by `updater` applied to the global parameters
  // minus the workers' mean (see Outer updater above). Default: none (plain averaging).
  // AVERAGING only (ConfigError from build() otherwise).
  Builder& outerUpdater(const UpdaterParams& updater) {
    outerUpdater_ = updater;
    return *this;
  }
  // Multiplies every worker's learning rate by the worker count (LINEAR) or its square root
  // (SQRT), ramping up linearly from 1 over the first warmupIterations iterations. Default NONE.
  Builder& learningRateScaling(LearningRateScaling rule, int64_t warmupIterations = 0) {
    scaling_ = rule;
    scalingWarmup_ = warmupIterations;
    return *this;
  }
  Builder& reportScoreAfterAveraging(bool b) {
    report_ = b;
    return *this;
  }
  Builder& averageUpdaters(bool b) {
    averageUpdaters_ = b;
    return *this;
  }  // default true
  // Where worker w runs: devices[w % devices.size()] (default: every visible GPU, else the CPU).
  Builder& devices(std::vector<Device> d) {
    devices_ = std::move(d);
    return *this;
  }
  Builder& threadsPerWorker(int n) {
    threadsPerWorker_ = n;
    return *this;
  }  // default cores / workers
  // CPU workers: pin worker w to its own threadsPerWorker cores (skipped when workers x
  // threadsPerWorker exceeds the cores this process may use). Off by default: it shows no gain
  // beyond noise on a small shared machine, and two processes that both pin would share the same
  // cores.
  Builder& bindToCores(bool b) {
    bindToCores_ = b;
    return *this;
  }
  // Default FAIL_FAST.
  Builder& failurePolicy(FailurePolicy p) {
    failurePolicy_ = p;
    return *this;
  }
  Builder& trainingMode(TrainingMode m) {
    mode_ = m;
    return *this;
  }
  // SHARED_GRADIENTS sends threshold-encoded gradients, tau chosen by `algorithm` (each worker
  // holds its own copy), e.g. AdaptiveThresholdAlgorithm() (DL4J's default) or
  // FixedThresholdAlgorithm(1e-3). Default: none, the gradients are shared whole (DL4J always
  // encodes; here the exact mode stays the default, it costs nothing within a process).
  // SHARED_GRADIENTS only, CPU workers only (ConfigError from build() otherwise).
  Builder& thresholdAlgorithm(const ThresholdAlgorithm& algorithm) {
    thresholdAlgorithm_ = algorithm.clone();
    return *this;
  }
  // Adjusts each worker's residual after each encoding. Default with a thresholdAlgorithm:
  // ResidualClippingPostProcessor(5, 5), DL4J's; nullptr: none.
  Builder& residualPostProcessor(const ResidualPostProcessor& p) {
    residualPostProcessor_ = p.clone();
    residualPostProcessorSet_ = true;
    return *this;
  }
  Builder& residualPostProcessor(std::nullptr_t) {
    residualPostProcessor_.reset();
    residualPostProcessorSet_ = true;
    return *this;
  }
  // Writes checkpoints of the root model into `directory` as `policy` says, keeping the newest
  // keepLast (>= 1) files. See Checkpoint.h.
  Builder& checkpointEvery(Checkpoint policy, std::filesystem::path directory, int keepLast = 3) {
    checkpoint_ = policy;
    checkpointDirectory_ = std::move(directory);
    keepLast_ = keepLast;
    return *this;
  }
  // The normalizer the training data goes through (the iterator's pre-processor), saved in every
  // checkpoint with the model (Checkpoint.h). It must be fitted and apply to the model's input,
  // and needs checkpointEvery (ConfigError from build() otherwise). Networks only (a graph's model
  // file holds no normalizer: ConfigError). Not copied: it must not be changed while fit() runs.
  Builder& checkpointNormalizer(std::shared_ptr<const DataNormalization> n) {
    checkpointNormalizer_ = std::move(n);
    return *this;
  }
  // Trains across the processes of `c` (see Clusters above). Default: this process alone.
  Builder& cluster(std::shared_ptr<Cluster> c) {
    cluster_ = std::move(c);
    return *this;
  }
  Builder& setListeners(std::vector<std::shared_ptr<TrainingListener>> l) {
    listeners_ = std::move(l);
    return *this;
  }
  // Validates (ConfigError naming the bad value) and starts the workers.
  ParallelWrapper build();

 private:
  Model* model_;
  int workers_ = 0;
  int prefetch_ = 16;
  int frequency_ = 1;
  int64_t averagingWarmup_ = 0;
  std::optional<UpdaterParams> outerUpdater_;
  LearningRateScaling scaling_ = LearningRateScaling::NONE;
  int64_t scalingWarmup_ = 0;
  bool report_ = false;
  bool averageUpdaters_ = true;
  std::vector<Device> devices_;
  int threadsPerWorker_ = 0;
  bool bindToCores_ = false;
  TrainingMode mode_ = TrainingMode::AVERAGING;
  std::shared_ptr<const ThresholdAlgorithm> thresholdAlgorithm_;
  std::shared_ptr<const ResidualPostProcessor> residualPostProcessor_;
  bool residualPostProcessorSet_ = false;
  FailurePolicy failurePolicy_ = FailurePolicy::FAIL_FAST;
  std::optional<Checkpoint> checkpoint_;
  std::filesystem::path checkpointDirectory_;
  int keepLast_ = 3;
  std::shared_ptr<const DataNormalization> checkpointNormalizer_;
  std::vector<std::shared_ptr<TrainingListener>> listeners_;
  std::shared_ptr<Cluster> cluster_;
};

}  // namespace dl4cpp::parallel

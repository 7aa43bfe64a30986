#include "parallel/ParallelWrapper.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <iostream>

#include "iterators/AsyncDataSetIterator.h"
#include "iterators/RankShardIterator.h"
#include "nn/backend/DeviceContext.h"
#include "nn/backend/Devices.h"
#include "nn/core/AtomicFile.h"
#include "nn/core/OutputPath.h"
#include "parallel/CpuAffinity.h"
#include "parallel/LayerStateCombiner.h"
#include "parallel/ParameterAverager.h"
#include "parallel/RoundCombine.h"
#include "parallel/ThresholdEncoding.h"
#include "parallel/WorkerPool.h"
#include "parallel/cluster/RoundExchange.h"

namespace dl4cpp::parallel {

namespace {
using Clock = std::chrono::steady_clock;
double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// What one worker does in one round.
struct WorkerRound {
  std::vector<DataSet> batches;
  int64_t examples = 0;
  double lossSum = 0;  // sum over batches of score * examples
  int iterations = 0;
  double compute = 0;
  Clock::time_point finished;
  std::exception_ptr failure;  // FailurePolicy::DROP_WORKER: what the worker's step threw

  void clear() {
    batches.clear();
    examples = 0;
    lossSum = 0;
    iterations = 0;
    compute = 0;
    failure = nullptr;
  }
};
}  // namespace

struct ParallelWrapper::Impl {
  Model* root = nullptr;
  int prefetch = 16;
  int frequency = 1;
  int64_t averagingWarmup = 0;
  LearningRateScaling scaling = LearningRateScaling::NONE;
  int64_t scalingWarmup = 0;
  int threadsPerWorker = 1;
  bool report = false;
  bool averageUpdaters = true;
  bool bindToCores = false;
  TrainingMode mode = TrainingMode::AVERAGING;
  // SHARED_GRADIENTS with threshold encoding (empty: plain sharing): each worker's encoder and
  // residual (over the trainable parameters), and its message and figures of the current round
  // (an empty message: the worker trained nothing and sends nothing).
  std::vector<EncodingHandler> encoders;
  std::vector<std::vector<float>> residuals;
  std::vector<std::vector<int32_t>> messages;
  std::vector<EncodingStats> encodingStats;
  FailurePolicy failurePolicy = FailurePolicy::FAIL_FAST;
  // DROP_WORKER: the workers dropped in this fit(), and minibatches read from the source but not
  // yet trained (dealt to a worker that was dropped before it trained them), dealt first.
  std::vector<char> dropped;
  std::deque<DataSet> carried;
  int regularizationWorker = 0;  // SHARED_GRADIENTS: the worker that forms the l2 term
  std::vector<Device> devices;
  std::vector<std::shared_ptr<TrainingListener>> listeners;
  std::optional<Checkpoint> checkpoint;
  std::filesystem::path checkpointDirectory;
  int keepLast = 3;
  std::shared_ptr<const DataNormalization> checkpointNormalizer;
  int64_t checkpointMark =
      0;  // Iterations policy: the root's iteration count at the last checkpoint

  std::unique_ptr<WorkerPool> pool;
  std::vector<std::unique_ptr<Model>> replicas;  // replicas[w]: built and used by worker w
  std::vector<Tensor> replicaParams, replicaStates, replicaGradients, replicaLayerStates;
  std::unique_ptr<LayerStateCombiner> layerStateCombiner;
  // What an averaging makes of the workers' mean parameters (plain mean, or an outer updater).
  std::unique_ptr<RoundCombine> combine;
  bool outerStateRestored = false;  // restoreOuterUpdaterState() ran since the last resume()
  // Where averages are written: every replica and the root (updater state: the root, plus the
  // replicas when averageUpdaters). The root's entries are refreshed by every fit(), in case the
  // root was re-initialised since build().
  std::vector<Tensor> paramDestinations, stateDestinations;
  std::vector<WorkerRound> current, next;
  std::vector<WorkerTiming> workerTimings;  // the last round's, for listeners
  std::vector<int64_t> weights;
  double regularization = 0;  // SHARED_GRADIENTS: the l2 term of the score, set by worker 0
  // averagingDevices[w]: where worker w forms its slices of the averages (devices::averagingDevice
  // of the worker's device, the root's and every worker's).
  std::vector<Device> averagingDevices;
  std::atomic<bool> stopRequested{false};
  ParallelStatistics stats;

  // Training across processes (null: this one alone). Each averaging stages this rank's share of
  // the means in one host buffer (parameters or gradients, then updater state), so that a single
  // all-reduce carries them.
  std::shared_ptr<Cluster> cluster;
  Tensor shared, sharedParams, sharedStates;  // the last two: views of `shared`
  // A failure caught on this rank, reported at the next vote (clusters only: alone, failures
  // propagate at once).
  std::exception_ptr pendingFailure;
  // stopFit() as every rank agreed on it at a vote; alone, stopRequested itself.
  bool stoppedByVote = false;

  int workers() const { return static_cast<int>(replicas.size()); }
  int rank() const { return cluster ? cluster->rank() : 0; }
  int ranks() const { return cluster ? cluster->size() : 1; }
  bool clustered() const { return ranks() > 1; }
  bool stopped() const { return clustered() ? stoppedByVote : stopRequested.load(); }

  // Runs `step`; on a cluster a failure is kept for the next vote, so that every rank leaves fit()
  // at the same collective. Skipped once this rank has a failure to report.
  template <typename Step>
  void guarded(Step&& step) {
    if (!clustered()) {
      step();
      return;
    }
    if (pendingFailure) return;
    try {
      step();
    } catch (...) {
      pendingFailure = std::current_exception();
    }
  }
  // The vote: every rank's `mine`, summed. Throws on every rank when any rank failed: this
  // rank's own exception, or a ClusterError naming the rank that failed first.
  RoundTotals vote(RoundVote mine) {
    if (!clustered()) {
      // No per-rank list: a round of one process allocates nothing here.
      return RoundTotals{
          mine.examples, mine.lossSum, mine.iterations, mine.minibatches, mine.stop, -1, {}};
    }
    mine.failed = pendingFailure != nullptr;
    mine.stop = stopRequested.load();
    mine.workers = workers();
    mine.params = root->numParams();
    RoundTotals totals = exchangeVotes(*cluster, mine);
    if (totals.firstFailedRank >= 0) {
      if (auto failure = std::exchange(pendingFailure, nullptr)) std::rethrow_exception(failure);
      throw ClusterError(
          fmt::format("ParallelWrapper on {}: rank {} failed; fit() ends on every rank",
                      cluster->describe(), totals.firstFailedRank));
    }
    return totals;
  }
  // A vote that only settles failures (the start and end of a fit or an epoch).
  void settle() {
    if (clustered()) vote(RoundVote{});
  }
  Device deviceOf(int w) const { return devices[static_cast<size_t>(w) % devices.size()]; }
  void requireOpen() const {
    if (!pool) throw ConfigError("ParallelWrapper: used after close()");
  }

  void synchronizeReplicas() {
    paramDestinations.back() = root->params();
    stateDestinations.front() = root->updaterState();
    std::vector<Device> inUse{root->context().device()};
    inUse.insert(inUse.end(), devices.begin(), devices.end());
    averagingDevices.clear();
    for (int w = 0; w < workers(); ++w)
      averagingDevices.push_back(devices::averagingDevice(deviceOf(w), inUse));
    pool->run([this](int w) {
      Model& r = *replicas[static_cast<size_t>(w)];
      r.setParams(root->params());
      r.setUpdaterState(root->updaterState());
      r.setLayerState(root->layerState());
      r.setIterationCount(root->getIterationCount());
      r.setEpochCount(root->getEpochCount());
    });
  }

  // Deals up to perWorker minibatches to each worker, minibatch i to worker i mod N. Returns the
  // seconds spent waiting for data.
  double deal(DataSetIterator& source, std::vector<WorkerRound>& round, int perWorker) {
    const auto start = Clock::now();
    for (auto& r : round) r.clear();
    std::vector<size_t> alive;
    for (size_t w = 0; w < round.size(); ++w)
      if (!dropped[w]) alive.push_back(w);
    const size_t n = alive.size();
    for (size_t i = 0; i < n * static_cast<size_t>(perWorker); ++i) {
      if (!carried.empty()) {
        round[alive[i % n]].batches.push_back(std::move(carried.front()));
        carried.pop_front();
      } else if (source.hasNext()) {
        round[alive[i % n]].batches.push_back(source.next());
      } else {
        break;
      }
    }
    return seconds(Clock::now() - start);
  }
  // Puts the minibatches of `round` back in front of the source, in the order they were read
  // (minibatch j of worker w was read before minibatch j of every later worker, and after
  // minibatch j - 1 of all), to be dealt again to the workers left.
  void undeal(std::vector<WorkerRound>& round) {
    std::vector<DataSet> order;
    size_t longest = 0;
    for (const auto& r : round) longest = std::max(longest, r.batches.size());
    for (size_t j = 0; j < longest; ++j)
      for (auto& r : round)
        if (j < r.batches.size()) order.push_back(std::move(r.batches[j]));
    carried.insert(carried.begin(), std::make_move_iterator(order.begin()),
                   std::make_move_iterator(order.end()));
    for (auto& r : round) r.clear();
  }

  static bool empty(const std::vector<WorkerRound>& round) {
    return std::all_of(round.begin(), round.end(),
                       [](const WorkerRound& r) { return r.batches.empty(); });
  }
  // Local iterations in `round`: those of the worker dealt the most.
  static int64_t iterationsIn(const std::vector<WorkerRound>& round) {
    size_t most = 0;
    for (const auto& r : round) most = std::max(most, r.batches.size());
    return static_cast<int64_t>(most);
  }

  // Minibatches per worker in the round that starts at global iteration `iteration`.
  int roundLength(int64_t iteration) const {
    if (mode == TrainingMode::SHARED_GRADIENTS || iteration < averagingWarmup) return 1;
    return frequency;
  }
  double learningRateScale(int64_t iteration) const {
    return learningRateScaleAt(scaling, workers() * ranks(), scalingWarmup, iteration);
  }

  void trainPhase(int w) {
    WorkerRound& r = current[static_cast<size_t>(w)];
    const auto start = Clock::now();
    if (failurePolicy == FailurePolicy::DROP_WORKER) {
      try {
        trainBatches(w, r);
      } catch (...) {
        // The whole round of this worker is discarded: no examples, no vote.
        r.failure = std::current_exception();
        r.examples = 0;
        r.lossSum = 0;
        r.iterations = 0;
      }
    } else {
      trainBatches(w, r);
    }
    r.finished = Clock::now();
    r.compute = seconds(r.finished - start);
  }
  void trainBatches(int w, WorkerRound& r) {
    Model& model = *replicas[static_cast<size_t>(w)];
    for (const DataSet& batch : r.batches) {
      const int64_t n = batch.numExamples();
      if (mode == TrainingMode::AVERAGING) {
        model.setLearningRateScale(learningRateScale(model.getIterationCount()));
        model.fit(batch);
        r.lossSum += model.score() * static_cast<double>(n);
      } else {
        r.lossSum += model.computeGradientAndScore(batch, false) * static_cast<double>(n);
      }
      r.examples += n;
      ++r.iterations;
    }
    // Replicas are identical in SHARED_GRADIENTS: one worker adds the l2 term for all.
    if (mode == TrainingMode::SHARED_GRADIENTS && w == regularizationWorker)
      regularization = model.calcRegularizationScore();
  }

  // DROP_WORKER: drops the workers whose step failed in `current`, telling std::clog and the
  // listeners, and deals `next` again to the workers left. Throws the failure when none is left.
  bool dropFailedWorkers(int64_t iteration) {
    std::exception_ptr last;
    for (size_t w = 0; w < current.size(); ++w) {
      if (!current[w].failure) continue;
      dropped[w] = 1;
      last = current[w].failure;
      std::string what = "unknown exception";
      try {
        std::rethrow_exception(current[w].failure);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      std::clog << fmt::format(
          "ParallelWrapper{}: worker {} failed in the round ending at iteration {} and is "
          "dropped for the rest of this fit(); its round is discarded: {}\n",
          clustered() ? " on " + cluster->describe() : "", w, iteration, what);
      for (auto& l : listeners)
        if (auto* hears = dynamic_cast<WorkerFailureListener*>(l.get()))
          hears->onWorkerDropped(*root, static_cast<int>(w), iteration, what);
    }
    if (!last) return false;
    if (std::all_of(dropped.begin(), dropped.end(), [](char d) { return d != 0; }))
      std::rethrow_exception(last);
    regularizationWorker =
        static_cast<int>(std::find(dropped.begin(), dropped.end(), 0) - dropped.begin());
    undeal(next);
    return true;
  }

  // The weighted mean of buffers[*][begin, end) into destinations, formed on worker w's
  // averaging device.
  void average(int w, const std::vector<Tensor>& buffers, std::vector<Tensor>& destinations,
               int64_t begin, int64_t end) {
    devices::averageSlice(buffers, weights, destinations, begin, end,
                          averagingDevices[static_cast<size_t>(w)]);
  }

  // Each worker averages its slice of the flat buffers into the root and every replica. Frozen
  // layers' parameters (the start of the buffer) are equal everywhere and stay as they are: a
  // weighted mean of equal values could round them.
  void averagePhase(int w) {
    const int n = workers();
    const int64_t frozen = root->numFrozenParams();
    auto [begin, end] = ParameterAverager::slice(root->numParams() - frozen, w, n);
    begin += frozen;
    end += frozen;
    if (mode == TrainingMode::SHARED_GRADIENTS) {
      average(w, replicaGradients, replicaGradients, begin, end);
      return;
    }
    average(w, replicaParams, combine->meanDestinations(paramDestinations), begin, end);
    std::tie(begin, end) = ParameterAverager::slice(root->updaterState().numel(), w, n);
    average(w, replicaStates, stateDestinations, begin, end);
  }

  // Clusters, in three steps: each worker forms this rank's share of the means of its slice in
  // the host buffers (weights: examples over every rank's `total`), the coordinator all-reduces
  // the buffers, and each worker copies its slice of the sums to the destinations.
  void shareSlicePhase(int w, int64_t total) {
    const int64_t frozen = root->numFrozenParams();
    auto [begin, end] = ParameterAverager::slice(root->numParams() - frozen, w, workers());
    const auto& sources = mode == TrainingMode::SHARED_GRADIENTS ? replicaGradients : replicaParams;
    devices::partialSumSlice(sources, weights, total, sharedParams, begin + frozen, end + frozen);
    if (mode == TrainingMode::SHARED_GRADIENTS) return;
    std::tie(begin, end) = ParameterAverager::slice(root->updaterState().numel(), w, workers());
    devices::partialSumSlice(replicaStates, weights, total, sharedStates, begin, end);
  }
  void takeSlicePhase(int w) {
    auto copyTo = [](const Tensor& from, std::vector<Tensor>& to, int64_t begin, int64_t end) {
      for (Tensor& d : to)
        d.view(begin, Shape{end - begin}).copyFrom(from.view(begin, Shape{end - begin}));
    };
    const int64_t frozen = root->numFrozenParams();
    auto [begin, end] = ParameterAverager::slice(root->numParams() - frozen, w, workers());
    if (mode == TrainingMode::SHARED_GRADIENTS) {
      copyTo(sharedParams, replicaGradients, begin + frozen, end + frozen);
      return;
    }
    copyTo(sharedParams, combine->meanDestinations(paramDestinations), begin + frozen,
           end + frozen);
    std::tie(begin, end) = ParameterAverager::slice(root->updaterState().numel(), w, workers());
    copyTo(sharedStates, stateDestinations, begin, end);
  }
  void averageAcrossRanks(int64_t total) {
    pool->run([this, total](int w) { shareSlicePhase(w, total); });
    // Frozen parameters are equal everywhere and not averaged; SHARED_GRADIENTS has no state to
    // average.
    const int64_t frozen = root->numFrozenParams();
    const int64_t end = mode == TrainingMode::AVERAGING ? shared.numel() : sharedParams.numel();
    cluster->allReduceSum(
        std::span<float>(shared.data() + frozen, static_cast<size_t>(end - frozen)));
    pool->run([this](int w) { takeSlicePhase(w); });
    if (mode == TrainingMode::AVERAGING) finishAveraging();
    layerStateCombiner->combineAcross(*cluster, replicaLayerStates, weights, total,
                                      root->layerState());
  }

  bool encoding() const { return !encoders.empty(); }

  // Threshold encoding, step 1 (worker w): this worker's share of the round's gradient (its
  // examples over every rank's `total`) into its residual, then the residual encoded.
  void encodePhase(int w, int64_t total, int64_t iteration, int epoch) {
    const auto i = static_cast<size_t>(w);
    messages[i].clear();
    encodingStats[i] = EncodingStats{};
    if (weights[i] == 0) return;  // trained nothing (or dropped): no vote, nothing sent
    const int64_t frozen = root->numFrozenParams();
    const float* gradient = replicaGradients[i].data() + frozen;
    std::vector<float>& residual = residuals[i];
    const auto share =
        static_cast<float>(static_cast<double>(weights[i]) / static_cast<double>(total));
    for (size_t j = 0; j < residual.size(); ++j) residual[j] += gradient[j] * share;
    encodingStats[i] = encoders[i].encode(nullptr, residual, iteration, epoch, messages[i]);
  }
  // Step 3 (worker w): its replica's gradient := the sum of every message of `all` (each
  // prefixed by its length; 0: none), in order: the same sum, bit for bit, on every replica.
  void decodePhase(int w, std::span<const int32_t> all) {
    const int64_t frozen = root->numFrozenParams();
    Tensor& gradient = replicaGradients[static_cast<size_t>(w)];
    const std::span<float> target(gradient.data() + frozen,
                                  static_cast<size_t>(gradient.numel() - frozen));
    std::fill(target.begin(), target.end(), 0.0f);
    for (size_t at = 0; at < all.size();) {
      const auto length = static_cast<size_t>(all[at++]);
      if (length > all.size() - at)
        throw DataFormatError("ParallelWrapper: a threshold-encoded round ends inside a message");
      if (length > 0) thresholdDecodeAdd(all.subspan(at, length), target);
      at += length;
    }
  }
  // SHARED_GRADIENTS with threshold encoding: encode on the workers, gather every worker's
  // message of every rank (length-prefixed, in worker order; across ranks in rank order), decode
  // on the workers; layer state is pooled as in plain sharing.
  void shareEncoded(int64_t total) {
    const int64_t iteration = root->getIterationCount();
    const int epoch = root->getEpochCount();
    pool->run([this, total, iteration, epoch](int w) { encodePhase(w, total, iteration, epoch); });
    std::vector<int32_t> mine;
    int64_t bytes = 0;
    for (size_t w = 0; w < messages.size(); ++w) {
      mine.push_back(static_cast<int32_t>(messages[w].size()));
      mine.insert(mine.end(), messages[w].begin(), messages[w].end());
      bytes += encodingStats[w].bytes;
      stats.encodedElements += encodingStats[w].encoded;
      if (weights[w] > 0) stats.encodableElements += encodingStats[w].length;
    }
    if (weights.front() > 0) stats.lastThreshold = encodingStats.front().threshold;
    stats.sentBytes += bytes;
    stats.sentRounds += 1;
    if (clustered()) {
      std::vector<int64_t> counts;
      const std::vector<int32_t> all = cluster->allGatherVarying(mine, counts);
      pool->run([this, &all](int w) { decodePhase(w, all); });
      layerStateCombiner->combineAcross(*cluster, replicaLayerStates, weights, total,
                                        root->layerState());
    } else {
      pool->run([this, &mine](int w) { decodePhase(w, mine); });
      layerStateCombiner->combine(replicaLayerStates, weights, root->layerState());
    }
  }

  // The round's mean parameters are in place (in every slice): the policy makes the next global
  // parameters of them, in the root and every replica.
  void finishAveraging() const {
    combine->finish(root->params(), replicaParams, root->getEpochCount());
  }

  // SHARED_GRADIENTS: every replica applies the averaged gradient; replica 0's result is copied
  // to the root slice by slice in a second phase.
  void updatePhase(int w) {
    Model& model = *replicas[static_cast<size_t>(w)];
    model.setLearningRateScale(learningRateScale(model.getIterationCount()));
    model.applyUpdate();
  }
  void copyToRootPhase(int w) {
    const Model& first = *replicas.front();
    auto copySlice = [](const Tensor& from, const Tensor& to, int64_t begin, int64_t end) {
      to.view(begin, Shape{end - begin}).copyFrom(from.view(begin, Shape{end - begin}));
    };
    auto [begin, end] = ParameterAverager::slice(root->numParams(), w, workers());
    copySlice(first.params(), root->params(), begin, end);
    std::tie(begin, end) = ParameterAverager::slice(root->updaterState().numel(), w, workers());
    copySlice(first.updaterState(), root->updaterState(), begin, end);
  }

  // Checkpoints at the boundary just reached, if the policy asks for one here.
  void checkpointAfterRound() {
    if (rank() != 0 || !checkpoint || checkpoint->unit() != Checkpoint::Unit::Iterations) return;
    const int64_t n = checkpoint->every(), iteration = root->getIterationCount();
    if (iteration / n == checkpointMark / n) return;
    writeCheckpoint();
    checkpointMark = iteration;
  }
  void checkpointAfterEpoch() {
    if (rank() == 0 && checkpoint && checkpoint->unit() == Checkpoint::Unit::Epochs &&
        root->getEpochCount() % checkpoint->every() == 0)
      writeCheckpoint();
  }
  void writeCheckpoint() {
    const std::vector<std::byte> outerState = combine->saveState();
    Checkpoints::write(*root, checkpointDirectory, keepLast, checkpointNormalizer.get(),
                       outerState);
  }
  // resume(): the outer updater's state saved beside the checkpoint of the root's position in
  // the checkpoint directory, unless restoreOuterUpdaterState() was called.
  void restoreOuterStateForResume() const {
    if (outerStateRestored || !checkpoint || !combine->hasState()) return;
    const auto file = Checkpoints::outerStateFile(
        checkpointDirectory /
        Checkpoints::fileName(root->getIterationCount(), root->getEpochCount()));
    if (std::filesystem::exists(file)) loadOuterState(file);
  }
  void loadOuterState(const std::filesystem::path& file) const {
    const std::vector<std::byte> bytes = readWholeFile(file, "an outer updater state file");
    combine->loadState(bytes, file.string());
  }
  // Every rank starts from rank 0's model (clusters).
  void beginFit(bool resuming = false) {
    requireOpen();
    stopRequested = false;
    stoppedByVote = false;
    dropped.assign(replicas.size(), 0);
    carried.clear();
    regularizationWorker = 0;
    pendingFailure = nullptr;
    stats = ParallelStatistics{};
    guarded([this, resuming] {
      if (checkpoint && rank() == 0) {
        // A directory the checkpoints cannot be written to fails now, not at the first checkpoint.
        checkOutputDirectory(checkpointDirectory, "checkpoints");
        Checkpoints::requireNoneAfter(checkpointDirectory, root->getIterationCount(),
                                      root->getEpochCount());
      }
      if (resuming && rank() == 0) restoreOuterStateForResume();
    });
    outerStateRestored = false;
    if (clustered()) {
      requireSameShape(*cluster, vote(RoundVote{}));
      broadcastModel(*cluster, *root);
      if (combine->hasState()) combine->broadcastState(*cluster);
    }
    checkpointMark = root->getIterationCount();
  }

  // One epoch; `alreadyTrained` minibatches of it were trained before (resume()) and have been
  // consumed from the iterator.
  void fitEpoch(DataSetIterator& iterator, int64_t alreadyTrained = 0);
};

// --- Builder
// ---------------------------------------------------------------------------------------

ParallelWrapper ParallelWrapper::Builder::build() {
  if (!model_->isInitialized())
    throw ConfigError("ParallelWrapper::Builder: the model must be initialised (call init())");
  if (workers_ < 0)
    throw ConfigError(fmt::format("ParallelWrapper: workers must be >= 1, got {}", workers_));
  if (frequency_ < 1)
    throw ConfigError(
        fmt::format("ParallelWrapper: averagingFrequency must be >= 1, got {}", frequency_));
  if (averagingWarmup_ < 0)
    throw ConfigError(fmt::format(
        "ParallelWrapper: averagingWarmup must be >= 0 iterations, got {}", averagingWarmup_));
  if (scalingWarmup_ < 0)
    throw ConfigError(fmt::format(
        "ParallelWrapper: learningRateScaling's warm-up must be >= 0 iterations, got {}",
        scalingWarmup_));
  if (prefetch_ < 0)
    throw ConfigError(
        fmt::format("ParallelWrapper: prefetchBuffer must be >= 0, got {}", prefetch_));
  if (threadsPerWorker_ < 0)
    throw ConfigError(
        fmt::format("ParallelWrapper: threadsPerWorker must be >= 0, got {}", threadsPerWorker_));
  for (const Device& d : devices_)
    if (!isVisible(d))
      throw ConfigError(fmt::format("ParallelWrapper: device {} is not visible ({} CUDA device(s))",
                                    d.toString(), cudaDeviceCount()));

  auto impl = std::make_unique<Impl>();
  impl->root = model_;
  impl->prefetch = prefetch_;
  impl->frequency = frequency_;
  impl->averagingWarmup = averagingWarmup_;
  impl->scaling = scaling_;
  impl->scalingWarmup = scalingWarmup_;
  // Truncated BPTT updates after every segment of a batch, inside fit(batch); shared gradients
  // come from one computeGradientAndScore per batch, which would silently be standard BPTT.
  if (mode_ == TrainingMode::SHARED_GRADIENTS && model_->trainsTruncatedBptt())
    throw ConfigError(
        "ParallelWrapper: truncated BPTT updates after every segment, which SHARED_GRADIENTS "
        "cannot share; train it with TrainingMode::AVERAGING (every worker runs truncated BPTT on "
        "its own batches)");
  if (outerUpdater_ && mode_ != TrainingMode::AVERAGING)
    throw ConfigError(
        "ParallelWrapper: outerUpdater applies to averaging; SHARED_GRADIENTS applies the "
        "updater to every step's shared gradient already");
  impl->report = report_;
  impl->averageUpdaters = averageUpdaters_;
  impl->mode = mode_;
  impl->failurePolicy = failurePolicy_;
  impl->bindToCores = bindToCores_;
  impl->listeners = listeners_;
  if (checkpoint_) {
    if (keepLast_ < 1)
      throw ConfigError(
          fmt::format("ParallelWrapper: checkpointEvery keepLast must be >= 1, got {}", keepLast_));
    if (checkpointDirectory_.empty())
      throw ConfigError("ParallelWrapper: checkpointEvery needs a directory");
    impl->checkpoint = checkpoint_;
    impl->checkpointDirectory = checkpointDirectory_;
    impl->keepLast = keepLast_;
  }
  if (checkpointNormalizer_) {
    if (!checkpoint_)
      throw ConfigError("ParallelWrapper: checkpointNormalizer needs checkpointEvery");
    if (!dynamic_cast<const MultiLayerNetwork*>(model_))
      throw ConfigError(
          "ParallelWrapper: checkpointNormalizer: a normalizer is saved with a MultiLayerNetwork "
          "only, not with a ComputationGraph");
    try {
      const std::optional<InputType> input = model_->declaredInputType();
      if (!input) throw ConfigError("the model's configuration declares no input type");
      checkpointNormalizer_->requireInput(*input);
    } catch (const Error& e) {
      throw ConfigError(
          fmt::format("ParallelWrapper: the checkpoint normalizer does not apply: {}", e.what()));
    }
    impl->checkpointNormalizer = checkpointNormalizer_;
  }
  impl->devices = devices_.empty() ? defaultDevices() : devices_;
  impl->cluster = cluster_;
  if (impl->clustered())
    for (const Device& d : impl->devices)
      if (!devices::isHostMemory(d))
        throw ConfigError(fmt::format(
            "ParallelWrapper: a cluster averages through host memory, and device {} is not "
            "host memory; GPU workers across processes are not supported yet",
            d.toString()));
  const int workers = workers_ > 0 ? workers_ : static_cast<int>(impl->devices.size());
  impl->threadsPerWorker =
      threadsPerWorker_ > 0 ? threadsPerWorker_ : std::max(1, hardwareConcurrency() / workers);
  impl->replicas.resize(static_cast<size_t>(workers));
  impl->current.resize(static_cast<size_t>(workers));
  impl->next.resize(static_cast<size_t>(workers));
  impl->weights.resize(static_cast<size_t>(workers));
  impl->workerTimings.resize(static_cast<size_t>(workers));
  impl->pool = std::make_unique<WorkerPool>(workers);
  // Each replica (and its DeviceContext) is created on the worker thread that will use it. CPU
  // workers are pinned to their own cores when the cores suffice for all of them.
  Impl* p = impl.get();
  const bool pin = impl->bindToCores && workers * impl->threadsPerWorker <= allowedCoreCount();
  p->pool->run([p, pin](int w) {
    const Device device = p->deviceOf(w);
    if (pin && devices::runsOnHostCores(device))
      pinCurrentThreadToCores(w * p->threadsPerWorker, p->threadsPerWorker);
    std::unique_ptr<Model> replica = p->root->newReplica(device, p->threadsPerWorker);
    // Numbered as the workers of one process dealt this cluster's batches would be.
    replica->setReplicaIndex(p->rank() + p->ranks() * w);
    p->replicas[static_cast<size_t>(w)] = std::move(replica);
  });
  for (auto& r : impl->replicas) {
    impl->replicaParams.push_back(r->params());
    impl->replicaStates.push_back(r->updaterState());
    impl->replicaGradients.push_back(r->gradient());
    impl->replicaLayerStates.push_back(r->layerState());
  }
  impl->combine = makeRoundCombine(
      outerUpdater_ ? &*outerUpdater_ : nullptr, model_->numParams(), model_->numFrozenParams(),
      std::min(hardwareConcurrency(), workers * impl->threadsPerWorker));
  impl->layerStateCombiner =
      std::make_unique<LayerStateCombiner>(impl->replicas.front()->layerStateLayout(), workers);
  if (thresholdAlgorithm_) {
    if (mode_ != TrainingMode::SHARED_GRADIENTS)
      throw ConfigError(
          "ParallelWrapper: thresholdAlgorithm encodes the gradients SHARED_GRADIENTS shares; "
          "averaging sends parameters (set trainingMode(TrainingMode::SHARED_GRADIENTS))");
    for (const Device& d : impl->devices)
      if (!devices::isHostMemory(d))
        throw ConfigError(fmt::format(
            "ParallelWrapper: threshold encoding runs on host memory, and device {} is not; "
            "share the gradients whole on GPU workers",
            d.toString()));
    const ResidualClippingPostProcessor dl4jDefault(5.0, 5);
    const ResidualPostProcessor* post =
        residualPostProcessorSet_ ? residualPostProcessor_.get() : &dl4jDefault;
    const auto trainable = static_cast<size_t>(model_->numParams() - model_->numFrozenParams());
    for (int w = 0; w < workers; ++w) {
      impl->encoders.emplace_back(*thresholdAlgorithm_, post);
      impl->residuals.emplace_back(trainable, 0.0f);
    }
    impl->messages.resize(static_cast<size_t>(workers));
    impl->encodingStats.resize(static_cast<size_t>(workers));
  } else if (residualPostProcessorSet_ && residualPostProcessor_) {
    throw ConfigError("ParallelWrapper: residualPostProcessor needs a thresholdAlgorithm");
  }
  impl->paramDestinations = impl->replicaParams;
  impl->paramDestinations.push_back(Tensor());  // the root's, set by each fit()
  if (impl->clustered()) {
    const int64_t params = model_->numParams(), states = model_->updaterState().numel();
    impl->shared = Tensor(Shape{params + states});
    impl->sharedParams = impl->shared.view(0, Shape{params});
    impl->sharedStates = impl->shared.view(params, Shape{states});
  }
  impl->stateDestinations = {Tensor()};
  if (impl->averageUpdaters)
    impl->stateDestinations.insert(impl->stateDestinations.end(), impl->replicaStates.begin(),
                                   impl->replicaStates.end());
  return ParallelWrapper(std::move(impl));
}

// --- ParallelWrapper
// -------------------------------------------------------------------------------

ParallelWrapper::ParallelWrapper(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ParallelWrapper::~ParallelWrapper() { close(); }
ParallelWrapper::ParallelWrapper(ParallelWrapper&&) noexcept = default;
ParallelWrapper& ParallelWrapper::operator=(ParallelWrapper&&) noexcept = default;

void ParallelWrapper::close() {
  if (!impl_) return;
  impl_->pool.reset();  // joins the workers
  impl_->replicas.clear();
}

void ParallelWrapper::stopFit() {
  if (impl_) impl_->stopRequested = true;
}

int ParallelWrapper::workers() const { return impl_->workers(); }
const std::vector<Device>& ParallelWrapper::devices() const { return impl_->devices; }
int ParallelWrapper::threadsPerWorker() const { return impl_->threadsPerWorker; }
const ParallelStatistics& ParallelWrapper::statistics() const { return impl_->stats; }

void ParallelWrapper::setListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) {
  impl_->listeners = std::move(listeners);
}

void ParallelWrapper::fit(DataSetIterator& iterator) {
  impl_->beginFit();
  impl_->fitEpoch(iterator);
}

void ParallelWrapper::fit(DataSetIterator& iterator, int epochs) {
  impl_->beginFit();
  for (int e = 0; e < epochs && !impl_->stopped(); ++e) {
    if (e > 0) {
      impl_->guarded([&] {
        if (!iterator.resetSupported())
          throw DataError(
              "ParallelWrapper::fit(iterator, epochs): the iterator cannot be reset, "
              "so it cannot serve more than one epoch");
        iterator.reset();
      });
    }
    impl_->fitEpoch(iterator);
  }
}

void ParallelWrapper::restoreOuterUpdaterState(const std::filesystem::path& checkpoint) {
  impl_->requireOpen();
  if (!impl_->combine->hasState())
    throw ConfigError(
        "ParallelWrapper::restoreOuterUpdaterState: this wrapper has no outerUpdater");
  const auto file = Checkpoints::outerStateFile(checkpoint);
  if (!std::filesystem::exists(file))
    throw DataNotFoundError(fmt::format(
        "ParallelWrapper::restoreOuterUpdaterState: {} has no outer updater state beside it ({} "
        "does not exist)",
        checkpoint.string(), file.string()));
  impl_->loadOuterState(file);
  impl_->outerStateRestored = true;
}

void ParallelWrapper::resume(DataSetIterator& iterator, int totalEpochs) {
  impl_->beginFit(true);  // on a cluster, every rank now holds rank 0's model and counters
  Model& root = *impl_->root;
  const int finished = root.getEpochCount();
  const int64_t trained = root.getMinibatchesInEpoch();
  if (finished >= totalEpochs) return;
  impl_->guarded([&] {
    if (finished > 0 && !iterator.resetSupported())
      throw DataError(
          "ParallelWrapper::resume: the iterator cannot be reset, so it cannot replay "
          "the epochs the run had finished");
    // The original run reset its iterator once before each epoch after the first.
    for (int e = 0; e < finished; ++e) iterator.reset();
    for (int64_t i = 0; i < trained; ++i) {
      if (!iterator.hasNext())
        throw DataError(
            fmt::format("ParallelWrapper::resume: the model had trained {} minibatches "
                        "of epoch {}, but the iterator holds only {}",
                        trained, finished, i));
      iterator.skipNext();
    }
  });
  impl_->fitEpoch(iterator, trained);
  for (int e = finished + 1; e < totalEpochs && !impl_->stopped(); ++e) {
    impl_->guarded([&] { iterator.reset(); });
    impl_->fitEpoch(iterator);
  }
}

void ParallelWrapper::Impl::fitEpoch(DataSetIterator& iterator, int64_t alreadyTrained) {
  std::unique_ptr<RankShardIterator> shard;
  std::unique_ptr<AsyncDataSetIterator> async;
  DataSetIterator* source = &iterator;
  IterationInfo info;
  RoundTiming timing;
  double dataWait = 0;
  guarded([&] {
    // A resumed epoch may have nothing left (its last round was checkpointed); a new one must.
    if (alreadyTrained == 0) requireBatchForEpoch(iterator, "ParallelWrapper::fit");
    synchronizeReplicas();
    root->setMinibatchesInEpoch(alreadyTrained);
    if (clustered()) {
      shard = std::make_unique<RankShardIterator>(iterator, rank(), ranks());
      source = shard.get();
    }
    if (prefetch > 0 && source->asyncSupported()) {
      async = std::make_unique<AsyncDataSetIterator>(*source, prefetch);
      source = async.get();
    }
    if (rank() == 0)
      for (auto& l : listeners) l->onEpochStart(*root, root->getEpochCount());
    info.epoch = root->getEpochCount();
    info.examplesPerEpoch = iterator.totalExamples();
    dataWait = deal(*source, current, roundLength(root->getIterationCount()));
  });
  settle();

  // On a cluster every rank goes round, with or without data, until the vote finds that no rank
  // trained anything, or that one asked to stop.
  while (clustered() || (!empty(current) && !stopRequested)) {
    const auto start = Clock::now();
    const int64_t roundStart = root->getIterationCount();
    auto dealt = start, trained = start;
    guarded([&] {
      pool->start([this](int w) { trainPhase(w); });
      // Deal the next round while the workers train; only time beyond their finish is a stall.
      try {
        deal(*source, next, roundLength(roundStart + iterationsIn(current)));
      } catch (...) {
        pool->waitNoThrow();
        throw;
      }
      dealt = Clock::now();
      pool->wait();
      trained = Clock::now();
    });
    if (failurePolicy == FailurePolicy::DROP_WORKER) {
      guarded([&] {
        const int64_t end = roundStart + iterationsIn(current);
        if (dropFailedWorkers(end)) deal(*source, next, roundLength(end));
      });
    }

    RoundVote mine;
    double compute = 0, barrierWait = 0;
    Clock::time_point lastFinish = start;
    for (size_t w = 0; w < current.size(); ++w) {
      weights[w] = current[w].examples;
      mine.examples += current[w].examples;
      mine.lossSum += current[w].lossSum;
      mine.iterations = std::max<int64_t>(mine.iterations, current[w].iterations);
      mine.minibatches += static_cast<int64_t>(current[w].batches.size());
      lastFinish = std::max(lastFinish, current[w].finished);
    }
    for (size_t w = 0; w < current.size(); ++w) {
      const WorkerRound& r = current[w];
      compute += r.compute;
      barrierWait += seconds(lastFinish - r.finished);
      workerTimings[w] = WorkerTiming{r.examples, r.compute};
    }
    const RoundTotals totals = vote(mine);
    if (clustered()) {
      // Every worker waited for the slowest rank.
      const auto voted = Clock::now();
      barrierWait += seconds(voted - trained) * static_cast<double>(current.size());
      trained = voted;
      if (totals.minibatches == 0) break;  // every rank's shard is exhausted
    }
    if (totals.examples == 0) {
      // Every worker dealt a minibatch failed (DROP_WORKER): the round is discarded whole, its
      // minibatches counted as read.
      root->setMinibatchesInEpoch(root->getMinibatchesInEpoch() + totals.minibatches);
      std::swap(current, next);
      if (clustered() && totals.stop) {
        stoppedByVote = true;
        break;
      }
      continue;
    }
    double score = totals.lossSum / static_cast<double>(totals.examples);
    if (mode == TrainingMode::SHARED_GRADIENTS) score += regularization;
    if (!std::isfinite(score))
      throw NumericalError(
          fmt::format("ParallelWrapper: averaged score is {} at iteration {} "
                      "(training diverged or the data holds NaN/Inf)",
                      score, root->getIterationCount()));

    if (encoding()) {
      shareEncoded(totals.examples);
    } else if (clustered()) {
      averageAcrossRanks(totals.examples);
      stats.sentBytes +=
          static_cast<int64_t>(sizeof(float)) *
              (mode == TrainingMode::AVERAGING ? shared.numel() - root->numFrozenParams()
                                               : sharedParams.numel() - root->numFrozenParams()) +
          static_cast<int64_t>(sizeof(float)) * root->layerState().numel();
      stats.sentRounds += 1;
    } else {
      pool->run([this](int w) { averagePhase(w); });
      if (mode == TrainingMode::AVERAGING) finishAveraging();
      layerStateCombiner->combine(replicaLayerStates, weights, root->layerState());
    }
    double averaging = seconds(Clock::now() - trained);
    if (mode == TrainingMode::SHARED_GRADIENTS) {
      // The update is training work (every worker applies it); only the copy is averaging cost.
      const auto updateStart = Clock::now();
      pool->run([this](int w) { updatePhase(w); });
      const auto updated = Clock::now();
      compute += seconds(updated - updateStart) * static_cast<double>(current.size());
      pool->run([this](int w) { copyToRootPhase(w); });
      averaging += seconds(Clock::now() - updated);
    }
    const auto averaged = Clock::now();

    root->setIterationCount(root->getIterationCount() + totals.iterations);
    // The schedules' count (SHARED_GRADIENTS replicas never count their own iterations).
    for (auto& r : replicas) r->setIterationCount(root->getIterationCount());
    root->setScore(score);
    root->setMinibatchesInEpoch(root->getMinibatchesInEpoch() + totals.minibatches);

    const double workers = static_cast<double>(current.size());
    timing.wall = seconds(averaged - start) + dataWait;
    timing.compute = compute / workers;
    timing.barrierWait = barrierWait / workers;
    timing.averaging = averaging;
    timing.dataWait = dataWait;
    stats.rounds += 1;
    stats.examples += mine.examples;
    stats.total.wall += timing.wall;
    stats.total.compute += timing.compute;
    stats.total.barrierWait += timing.barrierWait;
    stats.total.averaging += timing.averaging;
    stats.total.dataWait += timing.dataWait;

    info.iteration = root->getIterationCount();
    info.score = score;
    info.examples = totals.examples;
    info.examplesInEpoch += totals.examples;
    info.timing = &timing;
    info.workers = workerTimings;
    info.learningRateScale = learningRateScale(roundStart + totals.iterations - 1);
    if (rank() == 0) {
      guarded([&] {
        checkpointAfterRound();
        if (report)
          std::clog << fmt::format(
              "ParallelWrapper: averaged score {:.6f} at iteration {} (averaging "
              "took {:.3f} ms)\n",
              score, root->getIterationCount(), timing.averaging * 1e3);
        for (auto& l : listeners) l->iterationDone(*root, info);
      });
    }

    std::swap(current, next);
    // The next round was dealt while this one trained: only dealing beyond the workers' last
    // finish kept them waiting for data.
    dataWait = std::max(0.0, seconds(dealt - lastFinish));
    if (clustered() && totals.stop) {
      stoppedByVote = true;
      break;
    }
  }
  if (stopped()) {
    settle();
    return;
  }
  if (rank() == 0)
    guarded([&] {
      for (auto& l : listeners) l->onEpochEnd(*root, root->getEpochCount());
    });
  root->setEpochCount(root->getEpochCount() + 1);
  root->setMinibatchesInEpoch(0);
  guarded([&] { checkpointAfterEpoch(); });
  settle();
}

}  // namespace dl4cpp::parallel

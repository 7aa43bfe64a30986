#pragma once
// ParallelInference: thread-safe, batched inference for services (DL4J's ParallelInference).
//
//   auto inference = dl4cpp::parallel::ParallelInference::Builder(model)
//       .workers(2)
//       .inferenceMode(InferenceMode::BATCHED)
//       .batchLimit(32)
//       .queueLimit(64)
//       .build();
//   Tensor probabilities = inference.output(features);   // from any number of threads
//
// Workers. build() starts N worker threads; worker w builds its own replica of the model (a copy
// of its configuration and parameters, with its own DeviceContext of threadsPerWorker threads) on
// its own thread and keeps it until shutdown() or updateModel(). The model given to the Builder
// is copied once by build(); it is never used afterwards and may be changed or destroyed.
//
// Requests. output(features) checks features on the caller's thread (shape; values, see
// rejectNonFinite), queues the request and blocks until a worker has served it. Requests are
// taken in arrival order (FIFO):
//  - SEQUENTIAL: a free worker takes one request and runs one forward pass on it.
//  - BATCHED: a free worker takes the oldest request and, behind it, every queued request that
//    still fits into batchLimit examples (stopping at the first that does not, so no request is
//    overtaken), runs one forward pass over their concatenated rows and hands each caller its
//    rows. A single request of more than batchLimit examples runs alone, unsplit: its rows then
//    come from exactly one forward pass, as with model.output(). There is no batching timer:
//    batches form only from requests that arrive while every worker is busy, so batching never
//    delays a request at low load and grows with load.
// Results equal model.output(features) computed alone (docs/inference.md states the tolerance
// measured for batched rows). Each result is an (n, nOut) tensor; in BATCHED mode it is a view of
// the batch's output (rows of the batch's own allocation, no copy).
//
// Sequences. A model taking InputType::recurrent takes requests (n, C, T), each with its own T.
// In BATCHED mode requests of different lengths are padded at the end to the batch's longest and
// run with a features mask marking their real steps (Model::outputSingle(features, train, mask)),
// so each answer is the one the request gets alone; a per-step output (n, nOut, T) comes back
// trimmed to the request's own T (a copy).
//
// Normalizer. With normalizer(n) (or a Builder made from a model file holding one), every request
// goes through n (DataNormalization::transformInput) before the network, as the training data
// went through it as the iterator's pre-processor: results equal model.output(n applied to
// features). The caller's features are never modified: the worker normalizes its own copy of the
// batch. build() copies the normalizer as it copies the model; a model and its normalizer are
// replaced together (updateModel), so no request meets a new model with the old normalizer.
//
// Errors. Bad input throws to its caller only (ShapeError, DataError), before it is queued. An
// exception inside a forward pass (or a batch listener) is rethrown to every caller whose request
// was in that batch; the worker keeps serving. QueueFullPolicy::FAIL throws QueueFullError when
// queueLimit requests are already waiting; BLOCK waits for room. After shutdown() began, output()
// throws InferenceShutDownError.
//
// Thread-safety: output(), updateModel(), statistics() and shutdown() may be called from any
// threads at once; a batch listener (which runs on a worker) must not call output() or shutdown().
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "iterators/DataNormalization.h"
#include "nn/api/Model.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"
#include "nn/util/ModelSerializer.h"
#include "parallel/InferenceErrors.h"

namespace dl4cpp::parallel {

enum class InferenceMode { SEQUENTIAL, BATCHED };
// What output() does when queueLimit requests are already waiting.
enum class QueueFullPolicy { BLOCK, FAIL };

// Counters since build() (a consistent snapshot: all read under one lock).
struct InferenceStatistics {
  int64_t requests = 0;          // served by a forward pass, including those it failed
  int64_t examples = 0;          // rows of those requests
  int64_t batches = 0;           // forward passes run
  int64_t failedRequests = 0;    // requests whose batch threw
  int64_t rejectedRequests = 0;  // refused by QueueFullPolicy::FAIL
  int64_t maxBatchRequests = 0;  // most requests in one forward pass
  int64_t maxBatchExamples = 0;  // most rows in one forward pass
  int64_t modelUpdates = 0;      // updateModel() calls
  int64_t replicaSwaps = 0;    // replicas rebuilt for a new model (per worker, idle or at a batch)
  int64_t queuedRequests = 0;  // waiting to be taken right now
  double meanBatchRequests() const {
    return batches > 0 ? static_cast<double>(requests) / static_cast<double>(batches) : 0;
  }
};

// What a batch listener is told before each forward pass (on the worker's thread).
struct InferenceBatch {
  int worker = 0;
  int requests = 0;
  int64_t examples = 0;
  int64_t modelVersion = 0;  // 0 for the model given to the Builder, +1 per updateModel()
};

class ParallelInference {
 public:
  class Builder;

  ~ParallelInference();  // shutdown()
  ParallelInference(ParallelInference&&) noexcept;
  ParallelInference& operator=(ParallelInference&&) noexcept;  // shuts this one down first
  ParallelInference(const ParallelInference&) = delete;
  ParallelInference& operator=(const ParallelInference&) = delete;

  // features: (n, ...) with n >= 1 and n * (the model's input size) elements. Returns (n, nOut).
  // Blocks until served. Throws ShapeError / DataError for bad input, QueueFullError,
  // InferenceShutDownError, or what the forward pass of this request's batch threw.
  Tensor output(const Tensor& features);

  // Replaces the model served: requests a worker has already taken finish on the old model; every
  // request taken afterwards (including those queued now) runs on the new one; none is dropped.
  // The new model must have the same input and output sizes (ConfigError otherwise). It is copied
  // here, on the caller's thread. Each worker rebuilds (and warms) its replica on its own thread:
  // at once when idle, else before its next batch. The normalizer served stays, and must apply
  // to the new model's input (ConfigError otherwise).
  void updateModel(const Model& model);
  // The same, replacing the normalizer too (null: none from now on), checked and copied as by
  // Builder::normalizer().
  void updateModel(const Model& model, std::shared_ptr<const DataNormalization> normalizer);

  // Stops accepting requests, then: with drainOnShutdown(true) (the default) every queued request
  // is still served; with drainOnShutdown(false) queued requests fail with
  // InferenceShutDownError (requests already in a forward pass complete). Callers blocked by
  // QueueFullPolicy::BLOCK get InferenceShutDownError. Joins the workers. Idempotent and safe to
  // call from several threads; the destructor calls it.
  void shutdown();

  // True once shutdown() has begun: output() and updateModel() throw InferenceShutDownError.
  bool isShutdown() const;
  int workers() const;
  const std::vector<Device>& devices() const;
  int threadsPerWorker() const;
  int batchLimit() const;
  InferenceMode inferenceMode() const;
  InferenceStatistics statistics() const;

 private:
  struct Impl;
  explicit ParallelInference(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class ParallelInference::Builder {
 public:
  // `model` must be initialised; build() copies it, so it need only outlive the Builder.
  // Any Model of one input and one output: a MultiLayerNetwork or a ComputationGraph (served on
  // the CPU: pass devices({Device::cpu()}) where GPUs are visible).
  explicit Builder(const Model& model) : model_(&model) {}
  // A model read from a file, with the normalizer saved in it (if any).
  explicit Builder(const ModelAndNormalizer& restored)
      : model_(&restored.model), normalizer_(restored.normalizer) {}

  // Default: one per device (with the CPU alone, one), as ParallelWrapper. For requests of a few
  // examples on a CPU, workers(cores).threadsPerWorker(1) serves several times more (one image is
  // too little work to split across threads; docs/inference.md has the figures).
  Builder& workers(int n) {
    workers_ = n;
    return *this;
  }
  // Where worker w runs: devices[w % devices.size()] (default: every visible GPU, else the CPU).
  Builder& devices(std::vector<Device> d) {
    devices_ = std::move(d);
    return *this;
  }
  // BATCHED: most examples gathered into one forward pass (default 32, >= 1).
  Builder& batchLimit(int n) {
    batchLimit_ = n;
    return *this;
  }
  // Most requests waiting to be taken by a worker (default 64, >= 1).
  Builder& queueLimit(int n) {
    queueLimit_ = n;
    return *this;
  }
  Builder& inferenceMode(InferenceMode m) {
    mode_ = m;
    return *this;
  }  // default BATCHED
  Builder& queueFullPolicy(QueueFullPolicy p) {
    policy_ = p;
    return *this;
  }  // default BLOCK
  // CPU threads per worker (default: cores / workers, at least 1).
  Builder& threadsPerWorker(int n) {
    threadsPerWorker_ = n;
    return *this;
  }
  // What shutdown() does with queued requests: serve them (true, the default) or fail them.
  Builder& drainOnShutdown(bool b) {
    drain_ = b;
    return *this;
  }
  // Applied to every request before the network (null: none, the default). It must be fitted and
  // apply to the model's input (ConfigError from build() otherwise); build() copies it.
  Builder& normalizer(std::shared_ptr<const DataNormalization> n) {
    normalizer_ = std::move(n);
    return *this;
  }
  // Refuse features holding NaN or Inf with a DataError naming the example (default true): a
  // service answers such a request with an error instead of a NaN row.
  Builder& rejectNonFinite(bool b) {
    rejectNonFinite_ = b;
    return *this;
  }
  // Before serving, each worker runs one forward pass (on zeros) per batch size it will see
  // (BATCHED: 1..batchLimit; SEQUENTIAL: 1 example), so the oneDNN primitives for those shapes
  // exist before the first request instead of being created while it waits. Repeated after each
  // updateModel(). Default true.
  Builder& warmUp(bool b) {
    warmUp_ = b;
    return *this;
  }
  // Called on the worker's thread before each forward pass (metrics, tracing), by several workers
  // at once when there are several. An exception it throws fails that batch, as one from the
  // forward pass would. It must not call output() or shutdown(): both may wait for this worker.
  Builder& batchListener(std::function<void(const InferenceBatch&)> listener) {
    listener_ = std::move(listener);
    return *this;
  }
  // Validates (ConfigError naming the bad value), copies the model, starts the workers and waits
  // until every replica is built (an error building one is rethrown here).
  ParallelInference build();

 private:
  const Model* model_;
  std::shared_ptr<const DataNormalization> normalizer_;
  int workers_ = 0;
  std::vector<Device> devices_;
  int batchLimit_ = 32;
  int queueLimit_ = 64;
  InferenceMode mode_ = InferenceMode::BATCHED;
  QueueFullPolicy policy_ = QueueFullPolicy::BLOCK;
  int threadsPerWorker_ = 0;
  bool drain_ = true;
  bool rejectNonFinite_ = true;
  bool warmUp_ = true;
  std::function<void(const InferenceBatch&)> listener_;
};

}  // namespace dl4cpp::parallel

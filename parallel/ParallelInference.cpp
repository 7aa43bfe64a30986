#include "parallel/ParallelInference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "nn/backend/DeviceContext.h"

namespace dl4cpp::parallel {

namespace {

// One call of output(). It lives on the caller's stack: the queue and then one worker hold a
// pointer to it until `done` is set under the mutex; from then on only the caller touches it.
struct Request {
  const Tensor* features = nullptr;
  int64_t rows = 0;
  int64_t steps = 0;  // time steps of a sequence request (N, C, T); 0 for other models
  Tensor result;
  std::exception_ptr error;
  bool done = false;
  std::condition_variable served;  // signalled (under the mutex) when done is set
};

// The model being served and its normalizer (or null), as copied by build() or updateModel().
// Read-only once published, so every worker may build its replica from it and normalize with it
// at the same time. Its own DeviceContext runs nothing.
struct ModelSource {
  std::unique_ptr<Model> model;
  std::shared_ptr<const DataNormalization> normalizer;
  int64_t version = 0;
};

// Steps [0, steps) of rows [row, row + rows) of a (N, C, T) tensor, as a new (rows, C, steps)
// tensor: one request's share of a padded sequence batch.
Tensor trimmedRows(const Tensor& out, int64_t row, int64_t rows, int64_t steps) {
  const int64_t c = out.dim(1), t = out.dim(2);
  Tensor result(Shape{rows, c, steps});
  const float* src = out.data() + row * c * t;
  float* dst = result.data();
  for (int64_t i = 0; i < rows * c; ++i) std::copy_n(src + i * t, steps, dst + i * steps);
  return result;
}

// The input and output types of a served model: it must have one input and one output.
std::pair<InputType, InputType> servedTypes(const Model& model, const char* who) {
  const std::optional<InputType> input = model.declaredInputType();
  const std::optional<InputType> output = model.declaredOutputType();
  if (!input || !output)
    throw ConfigError(fmt::format(
        "{}: the model must have one input and one output to be served (a graph with several "
        "takes ComputationGraph::output directly)",
        who));
  return {*input, *output};
}

// ConfigError naming `who` unless `normalizer` (null: none) applies to the input type `input`.
void requireApplies(const DataNormalization* normalizer, const InputType& input, const char* who) {
  if (!normalizer) return;
  try {
    normalizer->requireInput(input);
  } catch (const Error& e) {
    throw ConfigError(fmt::format("{}: the normalizer does not apply: {}", who, e.what()));
  }
}

// A copy of `normalizer` (null: none), checked by requireApplies.
std::shared_ptr<const DataNormalization> servedCopy(const DataNormalization* normalizer,
                                                    const InputType& input, const char* who) {
  requireApplies(normalizer, input, who);
  return normalizer ? normalizer->clone() : nullptr;
}

}  // namespace

struct ParallelInference::Impl {
  // Set by build(), constant afterwards.
  InferenceMode mode = InferenceMode::BATCHED;
  QueueFullPolicy policy = QueueFullPolicy::BLOCK;
  int batchLimit = 32;
  int queueLimit = 64;
  int threadsPerWorker = 1;
  bool drain = true;
  bool rejectNonFinite = true;
  bool warmUp = true;
  std::function<void(const InferenceBatch&)> listener;
  std::vector<Device> devices;
  InputType inputType;
  int64_t inputSize = 0, outputSize = 0;
  bool sequences = false;  // the model takes sequences (N, C, T): requests may differ in T

  // Everything below `mutex` is guarded by it.
  mutable std::mutex mutex;
  std::condition_variable workAvailable;   // workers: a request was queued, or stopping
  std::condition_variable spaceAvailable;  // callers under BLOCK: a request was taken, or stopping
  std::condition_variable replicasReady;   // build(): a worker finished building its replica
  std::deque<Request*> queue;
  std::shared_ptr<const ModelSource> source;
  bool stopping = false;
  int replicasBuilt = 0;
  std::exception_ptr startupError;
  InferenceStatistics stats;

  std::mutex joinMutex;  // shutdown() may run on several threads; only one joins
  std::vector<std::thread> threads;

  int workers() const { return static_cast<int>(threads.size()); }
  int64_t validate(const Tensor& features) const;
  Tensor submit(const Tensor& features, int64_t rows);
  // Under the mutex: moves the next batch from the queue into `batch`.
  void takeBatch(std::vector<Request*>& batch);
  // The features of `batch` (`examples` rows) one after another: in `staging` (batchLimit rows,
  // allocated on first use) when they fit, else (one request of more rows) in a tensor of their
  // own.
  Tensor gather(const std::vector<Request*>& batch, int64_t examples, Tensor& staging) const;
  // The same for sequences: (examples, C, T) with T the batch's longest, shorter requests padded
  // at the end; `mask` (examples, T) marks their real steps (left empty when every request has T).
  Tensor gatherSequences(const std::vector<Request*>& batch, int64_t examples, Tensor& mask) const;
  // Each request's rows of a sequence batch's output (trimmed to its own steps when the output is
  // per step), computed on `replica`.
  void serveSequences(Model& replica, const std::vector<Request*>& batch, int64_t examples,
                      const DataNormalization* normalizer) const;
  void workerLoop(int worker);
  // warmUp: one forward pass per batch size the worker will see, so their oneDNN primitives exist.
  void warm(Model& replica) const;
  // updateModel(): publishes a copy of `model` with `normalizer` (nullopt: the one served now).
  void publish(const Model& model,
               std::optional<std::shared_ptr<const DataNormalization>> normalizer);
  void stop();
};

// --- Caller side
// ----------------------------------------------------------------------------------

int64_t ParallelInference::Impl::validate(const Tensor& f) const {
  if (sequences && (f.rank() != 3 || f.dim(0) == 0 || f.dim(1) != inputSize || f.dim(2) == 0 ||
                    (inputType.length > 0 && f.dim(2) != inputType.length)))
    throw ShapeError(fmt::format(
        "ParallelInference::output: features {} do not match the model's input type {} "
        "(expected [N, {}, {}] with N > 0: examples, features, time steps)",
        f.shape().toString(), inputType.toString(), inputSize,
        inputType.length > 0 ? std::to_string(inputType.length) : std::string("T > 0")));
  if (!sequences &&
      (f.empty() || f.rank() < 2 || f.dim(0) == 0 || f.numel() != f.dim(0) * inputSize))
    throw ShapeError(
        fmt::format("ParallelInference::output: features {} do not match the model's "
                    "input type {} (expected [N, {}] with N > 0, or [N, ...] holding "
                    "N * {} values)",
                    f.shape().toString(), inputType.toString(), inputSize, inputSize));
  if (!f.onHost())
    throw ShapeError(
        fmt::format("ParallelInference::output: features live on {}; pass a host (cpu) "
                    "tensor",
                    f.device().toString()));
  if (rejectNonFinite) {
    const float* p = f.data();
    const int64_t n = f.numel(), perExample = n / f.dim(0);
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(p[i]))
        throw DataError(
            fmt::format("ParallelInference::output: features hold {} at example {}, "
                        "value {} (rejectNonFinite is on)",
                        p[i], i / perExample, i % perExample));
  }
  return f.dim(0);
}

Tensor ParallelInference::Impl::submit(const Tensor& features, int64_t rows) {
  Request request;
  request.features = &features;
  request.rows = rows;
  request.steps = sequences ? features.dim(2) : 0;
  {
    std::unique_lock lock(mutex);
    if (stopping)
      throw InferenceShutDownError("ParallelInference::output: called after shutdown()");
    if (static_cast<int>(queue.size()) >= queueLimit) {
      if (policy == QueueFullPolicy::FAIL) {
        ++stats.rejectedRequests;
        throw QueueFullError(
            fmt::format("ParallelInference::output: {} requests are already "
                        "waiting (queueLimit {}, QueueFullPolicy::FAIL)",
                        queue.size(), queueLimit));
      }
      spaceAvailable.wait(lock,
                          [&] { return stopping || static_cast<int>(queue.size()) < queueLimit; });
      if (stopping)
        throw InferenceShutDownError(
            "ParallelInference::output: shut down while waiting for room "
            "in the queue");
    }
    queue.push_back(&request);
    workAvailable.notify_one();
    request.served.wait(lock, [&] { return request.done; });
  }
  if (request.error) std::rethrow_exception(request.error);
  return std::move(request.result);
}

// --- Worker side
// ----------------------------------------------------------------------------------

void ParallelInference::Impl::takeBatch(std::vector<Request*>& batch) {
  batch.push_back(queue.front());
  queue.pop_front();
  if (mode == InferenceMode::SEQUENTIAL) return;
  int64_t examples = batch.front()->rows;
  // FIFO: stop at the first request that does not fit, so none is overtaken.
  while (!queue.empty() && examples + queue.front()->rows <= batchLimit) {
    examples += queue.front()->rows;
    batch.push_back(queue.front());
    queue.pop_front();
  }
}

Tensor ParallelInference::Impl::gather(const std::vector<Request*>& batch, int64_t examples,
                                       Tensor& staging) const {
  Tensor input;
  if (examples <= batchLimit) {
    if (staging.empty()) staging = Tensor(Shape{batchLimit, inputSize});
    input = staging.view(0, Shape{examples, inputSize});
  } else {
    input = Tensor(Shape{examples, inputSize});
  }
  float* dst = input.data();
  for (const Request* r : batch) dst = std::copy_n(r->features->data(), r->features->numel(), dst);
  return input;
}

Tensor ParallelInference::Impl::gatherSequences(const std::vector<Request*>& batch,
                                                int64_t examples, Tensor& mask) const {
  int64_t longest = 0;
  bool equal = true;
  for (const Request* r : batch) {
    equal = equal && (longest == 0 || r->steps == longest);
    longest = std::max(longest, r->steps);
  }
  Tensor input(Shape{examples, inputSize, longest});  // zeros: the padding
  if (!equal) mask = Tensor(Shape{examples, longest});
  int64_t row = 0;
  for (const Request* r : batch) {
    const float* src = r->features->data();
    for (int64_t e = 0; e < r->rows; ++e, ++row) {
      for (int64_t c = 0; c < inputSize; ++c)
        std::copy_n(src + (e * inputSize + c) * r->steps, r->steps,
                    input.data() + (row * inputSize + c) * longest);
      if (!equal) std::fill_n(mask.data() + row * longest, r->steps, 1.0f);
    }
  }
  return input;
}

void ParallelInference::Impl::serveSequences(Model& replica, const std::vector<Request*>& batch,
                                             int64_t examples,
                                             const DataNormalization* normalizer) const {
  Tensor mask;
  Tensor input = gatherSequences(batch, examples, mask);
  if (normalizer) normalizer->transformInput(input, inputType);
  const Tensor out = replica.outputSingle(input, false, mask);
  int64_t row = 0;
  for (Request* r : batch) {
    if (out.rank() == 3 && out.dim(2) != r->steps)
      r->result = trimmedRows(out, row, r->rows, r->steps);
    else
      r->result = batch.size() == 1 ? out : out.rows(row, row + r->rows);
    row += r->rows;
  }
}

void ParallelInference::Impl::warm(Model& replica) const {
  if (!warmUp) return;
  const int64_t largest = mode == InferenceMode::BATCHED ? batchLimit : 1;
  if (sequences) {
    const int64_t steps = inputType.length > 0 ? inputType.length : 1;
    const Tensor zeros(Shape{largest, inputSize, steps});
    for (int64_t n = largest; n >= 1; --n)
      replica.outputSingle(zeros.view(0, Shape{n, inputSize, steps}), false);
    return;
  }
  const Tensor zeros(Shape{largest, inputSize});
  // Largest first, so the replica's activation buffers are allocated once.
  for (int64_t n = largest; n >= 1; --n)
    replica.outputSingle(zeros.view(0, Shape{n, inputSize}), false);
}

void ParallelInference::Impl::workerLoop(int worker) {
  const Device device = devices[static_cast<size_t>(worker) % devices.size()];
  std::shared_ptr<const ModelSource> current;
  std::unique_ptr<Model> replica;
  // The replica and its DeviceContext are created here, on the thread that will use them. The old
  // replica serves on unless the new one is complete.
  auto rebuild = [&](std::shared_ptr<const ModelSource> from) {
    std::unique_ptr<Model> r = from->model->newReplica(device, threadsPerWorker);
    r->setParams(from->model->params());
    r->setLayerState(from->model->layerState());
    warm(*r);
    replica = std::move(r);
    current = std::move(from);
  };

  std::exception_ptr error;
  try {
    std::shared_ptr<const ModelSource> initial;
    {
      std::lock_guard lock(mutex);
      initial = source;
    }
    rebuild(std::move(initial));
  } catch (...) {
    error = std::current_exception();
  }
  {
    std::lock_guard lock(mutex);
    if (error && !startupError) startupError = std::move(error);
    error = nullptr;
    ++replicasBuilt;
    replicasReady.notify_all();
  }
  if (!replica) return;
  // A model whose rebuild failed while this worker was idle: not retried until a batch comes,
  // whose callers then receive the error.
  std::shared_ptr<const ModelSource> failedSwap;

  Tensor staging;  // the batch's concatenated features, batchLimit rows of capacity
  std::vector<Request*> batch;
  batch.reserve(static_cast<size_t>(mode == InferenceMode::BATCHED ? batchLimit : 1));
  for (;;) {
    std::shared_ptr<const ModelSource> latest;
    bool idleSwap = false;
    {
      std::unique_lock lock(mutex);
      workAvailable.wait(lock, [&] {
        return stopping || !queue.empty() || (source != current && source != failedSwap);
      });
      if (queue.empty()) {
        if (stopping) return;  // nothing left to drain
        // Idle, and a new model was published: rebuild now rather than on the next request.
        latest = source;
        idleSwap = true;
      } else {
        takeBatch(batch);
        // A request taken now runs on the model published before it was taken.
        if (source != current) latest = source;
      }
    }
    if (idleSwap) {
      try {
        rebuild(latest);
        std::lock_guard lock(mutex);
        ++stats.replicaSwaps;
      } catch (...) {
        failedSwap = std::move(latest);
      }
      continue;
    }
    spaceAvailable.notify_all();

    int64_t examples = 0;
    for (const Request* r : batch) examples += r->rows;
    Tensor out;
    bool swapped = false;
    try {
      if (latest) {
        rebuild(std::move(latest));
        swapped = true;
      }
      if (listener)
        listener(
            InferenceBatch{worker, static_cast<int>(batch.size()), examples, current->version});
      const DataNormalization* normalizer = current->normalizer.get();
      if (sequences && !(batch.size() == 1 && !normalizer)) {
        serveSequences(*replica, batch, examples, normalizer);
      } else if (batch.size() == 1 && !normalizer) {
        out = replica->outputSingle(*batch.front()->features, false);
      } else {
        Tensor input = gather(batch, examples, staging);
        if (normalizer) normalizer->transformInput(input, *current->model->declaredInputType());
        out = replica->outputSingle(input, false);
      }
    } catch (...) {
      error = std::current_exception();
    }

    std::lock_guard lock(mutex);
    int64_t row = 0;
    for (Request* r : batch) {
      if (error)
        r->error = error;
      else if (!out.empty())  // (serveSequences handed out the results itself)
        r->result = batch.size() == 1 ? out : out.rows(row, row + r->rows);  // views, no copy
      row += r->rows;
      r->done = true;
      r->served.notify_one();  // under the mutex: the caller cannot return (and destroy it) before
    }
    stats.requests += static_cast<int64_t>(batch.size());
    stats.examples += examples;
    stats.batches += 1;
    if (swapped) ++stats.replicaSwaps;
    if (error) stats.failedRequests += static_cast<int64_t>(batch.size());
    stats.maxBatchRequests = std::max(stats.maxBatchRequests, static_cast<int64_t>(batch.size()));
    stats.maxBatchExamples = std::max(stats.maxBatchExamples, examples);
    // Drop this worker's references under the lock, so a caller always releases the last one.
    error = nullptr;
    out = Tensor();
    batch.clear();
  }
}

void ParallelInference::Impl::publish(
    const Model& model, std::optional<std::shared_ptr<const DataNormalization>> normalizer) {
  constexpr const char* who = "ParallelInference::updateModel";
  if (!model.isInitialized())
    throw ConfigError(fmt::format("{}: the model must be initialised (call init())", who));
  const auto [inputType, outputType] = servedTypes(model, who);
  if (inputType.flatSize() != inputSize || outputType.flatSize() != outputSize)
    throw ConfigError(fmt::format(
        "{}: the new model maps {} inputs to {} outputs; the served one maps {} to {} (they must "
        "agree)",
        who, inputType.flatSize(), outputType.flatSize(), inputSize, outputSize));
  // Copied outside the lock.
  auto next = std::make_shared<ModelSource>(ModelSource{model.cloneModel(), nullptr, 0});
  if (normalizer) next->normalizer = servedCopy(normalizer->get(), inputType, who);
  std::lock_guard lock(mutex);
  if (stopping) throw InferenceShutDownError(fmt::format("{}: called after shutdown()", who));
  // The served normalizer, read under the lock that publishes, so that no concurrent update's
  // normalizer is lost.
  if (!normalizer) {
    requireApplies(source->normalizer.get(), inputType, who);
    next->normalizer = source->normalizer;
  }
  next->version = source->version + 1;
  source = std::move(next);
  ++stats.modelUpdates;
  workAvailable.notify_all();  // idle workers rebuild their replicas now
}

void ParallelInference::Impl::stop() {
  {
    std::lock_guard lock(mutex);
    if (!stopping) {
      stopping = true;
      if (!drain) {
        for (Request* r : queue) {
          r->error = std::make_exception_ptr(InferenceShutDownError(
              "ParallelInference::output: shut down before this request was served "
              "(drainOnShutdown is off)"));
          r->done = true;
          r->served.notify_one();
        }
        queue.clear();
      }
    }
  }
  workAvailable.notify_all();
  spaceAvailable.notify_all();
  std::lock_guard join(joinMutex);
  for (auto& t : threads)
    if (t.joinable()) t.join();
}

// --- Builder
// ---------------------------------------------------------------------------------------

ParallelInference ParallelInference::Builder::build() {
  if (!model_->isInitialized())
    throw ConfigError("ParallelInference::Builder: the model must be initialised (call init())");
  if (workers_ < 0)
    throw ConfigError(fmt::format("ParallelInference: workers must be >= 1, got {}", workers_));
  if (batchLimit_ < 1)
    throw ConfigError(
        fmt::format("ParallelInference: batchLimit must be >= 1, got {}", batchLimit_));
  if (queueLimit_ < 1)
    throw ConfigError(
        fmt::format("ParallelInference: queueLimit must be >= 1, got {}", queueLimit_));
  if (threadsPerWorker_ < 0)
    throw ConfigError(
        fmt::format("ParallelInference: threadsPerWorker must be >= 1, got {}", threadsPerWorker_));
  for (const Device& d : devices_)
    if (!isVisible(d))
      throw ConfigError(
          fmt::format("ParallelInference: device {} is not visible ({} CUDA device(s))",
                      d.toString(), cudaDeviceCount()));

  auto impl = std::make_unique<Impl>();
  impl->mode = mode_;
  impl->policy = policy_;
  impl->batchLimit = batchLimit_;
  impl->queueLimit = queueLimit_;
  impl->drain = drain_;
  impl->rejectNonFinite = rejectNonFinite_;
  impl->warmUp = warmUp_;
  impl->listener = listener_;
  const auto [inputType, outputType] = servedTypes(*model_, "ParallelInference::Builder");
  impl->inputType = inputType;
  impl->inputSize = inputType.flatSize();
  impl->sequences = inputType.kind == InputType::Kind::Recurrent;
  impl->outputSize = outputType.flatSize();
  impl->source = std::make_shared<const ModelSource>(
      ModelSource{model_->cloneModel(),
                  servedCopy(normalizer_.get(), inputType, "ParallelInference::Builder"), 0});
  impl->devices = devices_.empty() ? defaultDevices() : devices_;
  const int workers = workers_ > 0 ? workers_ : static_cast<int>(impl->devices.size());
  impl->threadsPerWorker =
      threadsPerWorker_ > 0 ? threadsPerWorker_ : std::max(1, hardwareConcurrency() / workers);

  Impl* p = impl.get();
  ParallelInference inference(std::move(impl));  // from here on, its destructor stops the workers
  p->threads.reserve(static_cast<size_t>(workers));
  std::exception_ptr error;
  try {
    for (int w = 0; w < workers; ++w) p->threads.emplace_back([p, w] { p->workerLoop(w); });
  } catch (...) {
    error = std::current_exception();  // no thread left: wait for those that started, then stop
  }
  {
    std::unique_lock lock(p->mutex);
    p->replicasReady.wait(lock, [&] { return p->replicasBuilt == p->workers(); });
    if (!error) error = std::exchange(p->startupError, nullptr);
  }
  if (error) {
    p->stop();
    std::rethrow_exception(error);
  }
  return inference;
}

// --- ParallelInference
// -----------------------------------------------------------------------------

ParallelInference::ParallelInference(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ParallelInference::~ParallelInference() { shutdown(); }
ParallelInference::ParallelInference(ParallelInference&&) noexcept = default;

ParallelInference& ParallelInference::operator=(ParallelInference&& other) noexcept {
  if (this != &other) {
    shutdown();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

Tensor ParallelInference::output(const Tensor& features) {
  if (!impl_) throw InferenceShutDownError("ParallelInference::output: this object was moved from");
  const int64_t rows = impl_->validate(features);
  return impl_->submit(features, rows);
}

void ParallelInference::updateModel(const Model& model) {
  if (!impl_)
    throw InferenceShutDownError("ParallelInference::updateModel: this object was moved from");
  impl_->publish(model, std::nullopt);
}

void ParallelInference::updateModel(const Model& model,
                                    std::shared_ptr<const DataNormalization> normalizer) {
  if (!impl_)
    throw InferenceShutDownError("ParallelInference::updateModel: this object was moved from");
  impl_->publish(model, std::move(normalizer));
}

void ParallelInference::shutdown() {
  if (impl_) impl_->stop();
}

int ParallelInference::workers() const { return impl_ ? impl_->workers() : 0; }
const std::vector<Device>& ParallelInference::devices() const {
  static const std::vector<Device> none;  // after a move
  return impl_ ? impl_->devices : none;
}
int ParallelInference::threadsPerWorker() const { return impl_ ? impl_->threadsPerWorker : 0; }
int ParallelInference::batchLimit() const { return impl_ ? impl_->batchLimit : 0; }
InferenceMode ParallelInference::inferenceMode() const {
  return impl_ ? impl_->mode : InferenceMode::BATCHED;
}

InferenceStatistics ParallelInference::statistics() const {
  if (!impl_) return {};
  std::lock_guard lock(impl_->mutex);
  InferenceStatistics stats = impl_->stats;
  stats.queuedRequests = static_cast<int64_t>(impl_->queue.size());
  return stats;
}

bool ParallelInference::isShutdown() const {
  if (!impl_) return true;
  std::lock_guard lock(impl_->mutex);
  return impl_->stopping;
}

}  // namespace dl4cpp::parallel

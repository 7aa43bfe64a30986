// The MPI transport of parallel/cluster (MpiCluster.h), built when DL4CPP_HAVE_MPI; MpiStub.cpp
// stands in otherwise.
#include "parallel/cluster/MpiCluster.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <mutex>
#include <string_view>
#include <thread>

#include "nn/core/Error.h"
#include "parallel/cluster/CountChunks.h"

namespace dl4cpp::parallel {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;

// Waiting. A collective first waits in an MPI_Ibarrier for every rank to arrive, then moves the
// data. The arrival can take as long as the slowest rank's k minibatches, and ranks oversubscribed
// on the same cores need those cores for their workers: after spinning for 1 ms the waiting rank
// sleeps between tests (50 us doubling to 0.5 ms, so it notices the last arrival within about half
// a millisecond). The spin covers ranks that arrive together: with a much shorter one, two ranks
// over TCP fall out of step, each then waiting out the other's sleep at every barrier. Once every
// rank is there, the transfer is tested without pause: Open MPI's non-blocking collectives move
// data only inside MPI_Test, so pauses there would slow the all-reduce itself
// (bench_cluster_allreduce). A transfer still
// running after a second is stuck rather than slow (a peer died in it), and waits out the timeout
// sleeping.
constexpr Clock::duration kArrivalSpin = microseconds(1000);
constexpr Clock::duration kTransferSpin = std::chrono::seconds(1);
constexpr microseconds kFirstPause{50};
constexpr microseconds kLongestPause{500};

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return fmt::format("MPI error code {}", code);
  return {text, static_cast<std::size_t>(length)};
}

std::string seconds(std::chrono::milliseconds t) {
  return fmt::format("{:g} s", static_cast<double>(t.count()) / 1000.0);
}

template <class T>
MPI_Datatype mpiType();
template <>
MPI_Datatype mpiType<float>() {
  return MPI_FLOAT;
}
template <>
MPI_Datatype mpiType<double>() {
  return MPI_DOUBLE;
}
template <class T>
constexpr std::string_view typeName() {
  return sizeof(T) == sizeof(float) ? "floats" : "doubles";
}

// Finalises MPI when the process exits, if world() initialised it: a static object, constructed
// on world()'s first call just before MPI_Init, so destroyed before the static objects that
// existed before it. The world cluster may outlive it: its destruction makes no MPI call.
class MpiRuntime {
 public:
  static MpiRuntime& instance() {
    static MpiRuntime runtime;
    return runtime;
  }
  void initialisedHere() { initialisedHere_ = true; }
  void markBroken() { broken_ = true; }

  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;
  ~MpiRuntime() {
    if (!initialisedHere_) return;  // the program's MPI: it finalises it
    int finalized = 0;
    if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized != 0) return;
    // MPI_Finalize waits for every pending operation, and a timed-out collective never completes:
    // end the job instead, which also tells the launcher to stop the other ranks.
    if (broken_)
      MPI_Abort(MPI_COMM_WORLD, 1);
    else
      MPI_Finalize();
  }

 private:
  MpiRuntime() = default;
  bool initialisedHere_ = false;
  std::atomic<bool> broken_{false};
};

}  // namespace

struct MpiCluster::State {
  MPI_Comm comm = MPI_COMM_NULL;  // dl4cpp's own duplicate of MPI_COMM_WORLD
  int rank = 0;
  int size = 1;
  std::string host;
  std::atomic<bool> broken{false};
  std::string brokenBy;  // what broke the cluster; written before `broken` is set

  std::string describe() const {
    return fmt::format("MPI rank {} of {} on host {}", rank, size, host);
  }

  // Breaks the cluster (the first cause is kept for later refusals) and throws.
  [[noreturn]] void fail(const std::string& cause) {
    if (!broken) {
      brokenBy = cause;
      broken = true;
      MpiRuntime::instance().markBroken();
    }
    throw ClusterError(describe() + ": " + cause);
  }

  void check(int code, std::string_view what, std::string_view call) {
    if (code != MPI_SUCCESS)
      fail(fmt::format("{} failed in {}: {}", what, call, mpiErrorText(code)));
  }

  void refuseIfBroken(std::string_view what) const {
    if (broken)
      throw ClusterError(
          fmt::format("{}: {} refused: the cluster is broken ({}), and no collective can safely "
                      "start after one was abandoned",
                      describe(), what, brokenBy));
  }

  void wait(MPI_Request& request, Clock::time_point deadline, Clock::duration spinFor,
            std::string_view what, std::chrono::milliseconds timeout) {
    const Clock::time_point spinUntil = Clock::now() + spinFor;
    microseconds pause = kFirstPause;
    for (;;) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what, "MPI_Test");
      if (done != 0) return;
      const Clock::time_point now = Clock::now();
      // The request stays pending: MPI cannot cancel a collective. dl4cpp makes no MPI call on
      // this rank after this one (every collective is refused, the exit is MPI_Abort), and Open
      // MPI moves data into a receive buffer only inside the receiving rank's calls, so the
      // caller's buffer is not written after the throw.
      if (now >= deadline)
        fail(fmt::format("{} did not complete within {}: another rank died, hangs, or never joined",
                         what, seconds(timeout)));
      if (now < spinUntil) continue;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, kLongestPause);
    }
  }

  // Every rank arrives (MPI_Ibarrier), then start(offset, count, request) starts the collective
  // on each piece of at most INT_MAX of the n elements, each waited on in turn, all within one
  // timeout.
  template <class Start>
  void collective(std::string_view what, std::chrono::milliseconds timeout, std::size_t n,
                  Start start) {
    refuseIfBroken(what);
    const Clock::time_point deadline = Clock::now() + timeout;
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibarrier(comm, &request), what, "MPI_Ibarrier");
    wait(request, deadline, kArrivalSpin, what, timeout);
    forEachCountChunk(n, INT_MAX, [&](std::size_t offset, std::size_t count) {
      check(start(offset, static_cast<int>(count), &request), what, "starting the collective");
      wait(request, deadline, kTransferSpin, what, timeout);
    });
  }

  template <class T>
  void allReduceSum(std::span<T> values, std::chrono::milliseconds timeout) {
    const std::string what = fmt::format("allReduceSum of {} {}", values.size(), typeName<T>());
    collective(what, timeout, values.size(), [&](std::size_t offset, int count, MPI_Request* r) {
      return MPI_Iallreduce(MPI_IN_PLACE, values.data() + offset, count, mpiType<T>(), MPI_SUM,
                            comm, r);
    });
  }

  template <class T>
  void broadcast(std::span<T> values, int root, std::chrono::milliseconds timeout) {
    if (root < 0 || root >= size)
      throw ConfigError(fmt::format("{}: broadcast from rank {}: the root must be a rank, 0 .. {}",
                                    describe(), root, size - 1));
    const std::string what =
        fmt::format("broadcast of {} {} from rank {}", values.size(), typeName<T>(), root);
    collective(what, timeout, values.size(), [&](std::size_t offset, int count, MPI_Request* r) {
      return MPI_Ibcast(values.data() + offset, count, mpiType<T>(), root, comm, r);
    });
  }
};

std::shared_ptr<MpiCluster> MpiCluster::world() {
  static std::mutex mutex;
  static std::shared_ptr<MpiCluster> instance;
  static std::string failure;  // why the first world() failed: MPI cannot be joined twice
  const std::lock_guard lock(mutex);
  if (instance) return instance;
  if (!failure.empty()) throw ClusterError(failure);
  try {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized != 0)
      throw ClusterError(
          "MpiCluster::world(): MPI was already finalised; ask for the cluster before "
          "MPI_Finalize");
    int provided = 0;
    if (initialized == 0) {
      // Set before MPI_Init: if the level is refused below, MPI is still this process's to end.
      MpiRuntime::instance().initialisedHere();
      // An MPI_Init that fails ends the process in MPI itself (no error handler exists before
      // it), printing why.
      const int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      if (code != MPI_SUCCESS)
        throw ClusterError("MpiCluster::world(): MPI_Init_thread failed: " + mpiErrorText(code));
    } else {
      MPI_Query_thread(&provided);
    }
    // ParallelWrapper calls MPI from whichever thread runs fit(), one call at a time.
    if (provided < MPI_THREAD_SERIALIZED)
      throw ClusterError(fmt::format(
          "MpiCluster::world(): {} thread level {}, but dl4cpp needs MPI_THREAD_SERIALIZED ({}): "
          "{}",
          initialized == 0 ? "this MPI library gives" : "the program initialised MPI at", provided,
          MPI_THREAD_SERIALIZED,
          initialized == 0 ? "use an MPI built with thread support (Open MPI is)"
                           : "initialise it with MPI_Init_thread(&argc, &argv, "
                             "MPI_THREAD_SERIALIZED, &provided), or leave MPI to dl4cpp"));
    auto state = std::make_unique<State>();
    MPI_Comm_rank(MPI_COMM_WORLD, &state->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &state->size);
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    MPI_Get_processor_name(name, &length);
    state->host.assign(name, static_cast<std::size_t>(std::max(length, 0)));
    std::shared_ptr<MpiCluster> cluster(new MpiCluster(std::move(state)));
    // A communicator of dl4cpp's own: its collectives never match the program's on
    // MPI_COMM_WORLD, and its errors come back as codes (MPI_ERRORS_RETURN) without changing how
    // the program's MPI calls fail. Duplicating is itself a collective: it waits for every rank
    // like the others.
    State& s = *cluster->state_;
    MPI_Request request = MPI_REQUEST_NULL;
    const std::string what = "joining MPI_COMM_WORLD";
    s.check(MPI_Comm_idup(MPI_COMM_WORLD, &s.comm, &request), what, "MPI_Comm_idup");
    s.wait(request, Clock::now() + cluster->timeout(), kArrivalSpin, what, cluster->timeout());
    s.check(MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN), what, "MPI_Comm_set_errhandler");
    instance = std::move(cluster);
    return instance;
  } catch (const ClusterError& e) {
    failure = e.what();
    throw;
  }
}

MpiCluster::MpiCluster(std::unique_ptr<State> state) : state_(std::move(state)) {}
// MPI's objects are not freed here: the world cluster lives until the process exits, where
// MpiRuntime finalises (or aborts) MPI.
MpiCluster::~MpiCluster() = default;

int MpiCluster::rank() const { return state_->rank; }
int MpiCluster::size() const { return state_->size; }
std::string MpiCluster::describe() const { return state_->describe(); }
bool MpiCluster::broken() const { return state_->broken; }

std::vector<double> MpiCluster::allGather(std::span<const double> mine) {
  const std::string what = fmt::format("allGather of {} doubles", mine.size());
  // The result holds size() times as many; gathers carry a few figures per rank (scores, example
  // counts), so pieces are not worth their bookkeeping here.
  if (mine.size() > static_cast<std::size_t>(INT_MAX))
    throw ClusterError(
        fmt::format("{}: {} refused: at most {} values per rank", describe(), what, INT_MAX));
  std::vector<double> all(mine.size() * static_cast<std::size_t>(state_->size));
  state_->collective(what, timeout(), mine.size(), [&](std::size_t, int count, MPI_Request* r) {
    return MPI_Iallgather(mine.data(), count, MPI_DOUBLE, all.data(), count, MPI_DOUBLE,
                          state_->comm, r);
  });
  return all;
}

std::vector<int32_t> MpiCluster::allGatherVarying(std::span<const int32_t> mine,
                                                  std::vector<int64_t>& counts) {
  // Two collectives: every rank's length, then the data at offsets every rank computes alike.
  const std::vector<double> lengths =
      allGather(std::vector<double>{static_cast<double>(mine.size())});
  std::vector<int> recvCounts(lengths.size()), displacements(lengths.size());
  counts.assign(lengths.size(), 0);
  int64_t total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    counts[r] = static_cast<int64_t>(lengths[r]);
    if (total + counts[r] > INT_MAX)
      throw ClusterError(fmt::format(
          "{}: allGatherVarying of {} int32 values in all refused: MPI counts stop at {}",
          describe(), total + counts[r], INT_MAX));
    recvCounts[r] = static_cast<int>(counts[r]);
    displacements[r] = static_cast<int>(total);
    total += counts[r];
  }
  std::vector<int32_t> all(static_cast<size_t>(total));
  const std::string what = fmt::format("allGatherVarying of {} int32 values", total);
  // One piece: the total fits an int (checked above).
  state_->collective(what, timeout(), 1, [&](std::size_t, int, MPI_Request* r) {
    return MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_INT32_T, all.data(),
                           recvCounts.data(), displacements.data(), MPI_INT32_T, state_->comm, r);
  });
  return all;
}

void MpiCluster::allReduceSum(std::span<float> values) { state_->allReduceSum(values, timeout()); }
void MpiCluster::allReduceSum(std::span<double> values) { state_->allReduceSum(values, timeout()); }
void MpiCluster::broadcast(std::span<float> values, int root) {
  state_->broadcast(values, root, timeout());
}
void MpiCluster::broadcast(std::span<double> values, int root) {
  state_->broadcast(values, root, timeout());
}

}  // namespace dl4cpp::parallel

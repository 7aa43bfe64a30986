#pragma once
// What ParallelWrapper's ranks tell each other, beyond the averaged buffers: a vote at the end of
// every round (and at the start and end of every fit and epoch), and rank 0's model at the start
// of every fit.
//
// The vote is one small all-gather. Every rank computes the totals from it in rank order, so all
// ranks reach the same totals, the same score and the same decisions (go on, stop, fail)
// without a further message.
#include <cstdint>

#include "nn/api/Model.h"
#include "parallel/cluster/Cluster.h"

namespace dl4cpp::parallel {

// One rank's report; in RoundTotals, every rank's summed (iterations: the largest).
struct RoundVote {
  int64_t examples = 0;
  double lossSum = 0;  // sum over minibatches of score * examples
  int64_t iterations = 0;
  int64_t minibatches = 0;
  bool stop = false;    // stopFit() was called on this rank
  bool failed = false;  // this rank has an exception to report
  int workers = 0;
  int64_t params = 0;  // the model's parameter count: ranks must train the same network
};

struct RoundTotals {
  int64_t examples = 0;
  double lossSum = 0;
  int64_t iterations = 0;
  int64_t minibatches = 0;
  bool stop = false;
  int firstFailedRank = -1;      // -1: none failed
  std::vector<RoundVote> ranks;  // every rank's vote, in rank order (exchangeVotes)
};

// Gathers every rank's vote. A collective: every rank calls it at the same point.
RoundTotals exchangeVotes(Cluster& cluster, const RoundVote& mine);

// ConfigError, on every rank alike, unless every rank runs the same number of workers on a
// network of the same size.
void requireSameShape(const Cluster& cluster, const RoundTotals& totals);

// Replaces `model`'s parameters, updater state, layer state and counters with rank 0's, on every
// rank (a collective). Buffers on a device travel through host memory.
void broadcastModel(Cluster& cluster, Model& model);

}  // namespace dl4cpp::parallel

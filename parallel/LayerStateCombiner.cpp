#include "parallel/LayerStateCombiner.h"

#include <algorithm>

namespace dl4cpp::parallel {

LayerStateCombiner::LayerStateCombiner(std::vector<LayerStateSegment> layout, int replicas)
    : layout_(std::move(layout)) {
  if (layout_.empty()) return;
  const auto& last = layout_.back();
  const int64_t size = last.offset + last.shape.numel();
  for (int r = 0; r < replicas; ++r) staged_.emplace_back(Shape{size});
  combined_ = Tensor(Shape{size});
  partial_.resize(static_cast<size_t>(size));
}

void LayerStateCombiner::partialHost(const std::vector<LayerStateSegment>& layout,
                                     const std::vector<Tensor>& states,
                                     const std::vector<int64_t>& examples, int64_t total,
                                     bool holdsReplicaZero, std::vector<double>& partial) {
  const size_t replicas = states.size();
  auto weight = [&](size_t r) {
    return static_cast<double>(examples[r]) / static_cast<double>(total);
  };
  for (const auto& seg : layout) {
    const int64_t n = seg.shape.numel();
    switch (seg.combine) {
      case StateCombine::WeightedMean:
        for (int64_t i = seg.offset; i < seg.offset + n; ++i) {
          double sum = 0;
          for (size_t r = 0; r < replicas; ++r) sum += weight(r) * states[r].data()[i];
          partial[static_cast<size_t>(i)] = sum;
        }
        break;
      case StateCombine::PooledMeanVariance: {
        // (2, C): means, then variances. E[x^2] of the union is the weighted mean of each
        // replica's v + m^2; finishHost subtracts the pooled mean squared.
        const int64_t channels = n / 2;
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t mean = seg.offset + c, variance = seg.offset + channels + c;
          double m = 0, squares = 0;
          for (size_t r = 0; r < replicas; ++r) {
            const double mr = states[r].data()[mean], vr = states[r].data()[variance];
            m += weight(r) * mr;
            squares += weight(r) * (vr + mr * mr);
          }
          partial[static_cast<size_t>(mean)] = m;
          partial[static_cast<size_t>(variance)] = squares;
        }
        break;
      }
      case StateCombine::PerReplica:
        for (int64_t i = seg.offset; i < seg.offset + n; ++i)
          partial[static_cast<size_t>(i)] = holdsReplicaZero ? states[0].data()[i] : 0.0;
        break;
    }
  }
}

void LayerStateCombiner::finishHost(const std::vector<LayerStateSegment>& layout,
                                    const std::vector<double>& partial, Tensor& out) {
  float* result = out.data();
  for (const auto& seg : layout) {
    const int64_t n = seg.shape.numel();
    if (seg.combine != StateCombine::PooledMeanVariance) {
      for (int64_t i = seg.offset; i < seg.offset + n; ++i)
        result[i] = static_cast<float>(partial[static_cast<size_t>(i)]);
      continue;
    }
    const int64_t channels = n / 2;
    for (int64_t c = 0; c < channels; ++c) {
      const auto mean = static_cast<size_t>(seg.offset + c);
      const auto variance = static_cast<size_t>(seg.offset + channels + c);
      const double m = partial[mean];
      result[mean] = static_cast<float>(m);
      result[variance] = static_cast<float>(std::max(partial[variance] - m * m, 0.0));
    }
  }
}

void LayerStateCombiner::combineHost(const std::vector<LayerStateSegment>& layout,
                                     const std::vector<Tensor>& states,
                                     const std::vector<int64_t>& examples, Tensor& out) {
  int64_t total = 0;
  for (int64_t n : examples) total += n;
  if (total == 0 || layout.empty()) return;
  std::vector<double> partial(static_cast<size_t>(out.numel()));
  partialHost(layout, states, examples, total, true, partial);
  finishHost(layout, partial, out);
}

void LayerStateCombiner::combine(const std::vector<Tensor>& replicaStates,
                                 const std::vector<int64_t>& examples, Tensor root) {
  int64_t total = 0;
  for (int64_t n : examples) total += n;
  if (layout_.empty() || total == 0) return;
  stage(replicaStates);
  partialHost(layout_, staged_, examples, total, true, partial_);
  finishHost(layout_, partial_, combined_);  // writes every segment
  distribute(replicaStates, std::move(root));
}

void LayerStateCombiner::combineAcross(Cluster& cluster, const std::vector<Tensor>& replicaStates,
                                       const std::vector<int64_t>& examples, int64_t total,
                                       Tensor root) {
  if (layout_.empty() || total == 0) return;
  stage(replicaStates);
  partialHost(layout_, staged_, examples, total, cluster.rank() == 0, partial_);
  cluster.allReduceSum(std::span<double>(partial_));
  finishHost(layout_, partial_, combined_);
  distribute(replicaStates, std::move(root));
}

void LayerStateCombiner::stage(const std::vector<Tensor>& replicaStates) {
  for (size_t r = 0; r < replicaStates.size(); ++r) staged_[r].copyFrom(replicaStates[r]);
}

void LayerStateCombiner::distribute(const std::vector<Tensor>& replicaStates, Tensor root) {
  root.copyFrom(combined_);
  // Replicas take the combined values except in PerReplica segments, which stay their own.
  for (const Tensor& replica : replicaStates) {
    for (const auto& seg : layout_) {
      if (seg.combine == StateCombine::PerReplica) continue;
      replica.view(seg.offset, Shape{seg.shape.numel()})
          .copyFrom(combined_.view(seg.offset, Shape{seg.shape.numel()}));
    }
  }
}

}  // namespace dl4cpp::parallel

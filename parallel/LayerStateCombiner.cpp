#include <dl4cpp/parallel/LayerStateCombiner.h>

#include <algorithm>

namespace dl4cpp::parallel {

LayerStateCombiner::LayerStateCombiner(std::vector<MultiLayerNetwork::StateSegment> layout,
                                       int replicas)
    : layout_(std::move(layout)) {
  if (layout_.empty()) return;
  const auto& last = layout_.back();
  const int64_t size = last.offset + last.shape.numel();
  for (int r = 0; r < replicas; ++r) staged_.emplace_back(Shape{size});
  combined_ = Tensor(Shape{size});
}

void LayerStateCombiner::combineHost(const std::vector<MultiLayerNetwork::StateSegment>& layout,
                                     const std::vector<Tensor>& states,
                                     const std::vector<int64_t>& examples, Tensor& out) {
  double total = 0;
  for (int64_t n : examples) total += static_cast<double>(n);
  if (total == 0) return;
  const size_t replicas = states.size();
  auto weight = [&](size_t r) { return static_cast<double>(examples[r]) / total; };
  float* result = out.data();
  for (const auto& seg : layout) {
    const int64_t n = seg.shape.numel();
    switch (seg.combine) {
      case StateCombine::WeightedMean:
        for (int64_t i = seg.offset; i < seg.offset + n; ++i) {
          double sum = 0;
          for (size_t r = 0; r < replicas; ++r) sum += weight(r) * states[r].data()[i];
          result[i] = static_cast<float>(sum);
        }
        break;
      case StateCombine::PooledMeanVariance: {
        // (2, C): means, then variances. E[x^2] of the union is the weighted mean of each
        // replica's v + m^2; the pooled variance is that minus the pooled mean squared.
        const int64_t channels = n / 2;
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t mean = seg.offset + c, variance = seg.offset + channels + c;
          double m = 0, squares = 0;
          for (size_t r = 0; r < replicas; ++r) {
            const double mr = states[r].data()[mean], vr = states[r].data()[variance];
            m += weight(r) * mr;
            squares += weight(r) * (vr + mr * mr);
          }
          result[mean] = static_cast<float>(m);
          result[variance] = static_cast<float>(std::max(squares - m * m, 0.0));
        }
        break;
      }
      case StateCombine::PerReplica:
        for (int64_t i = seg.offset; i < seg.offset + n; ++i) result[i] = states[0].data()[i];
        break;
    }
  }
}

void LayerStateCombiner::combine(const std::vector<Tensor>& replicaStates,
                                 const std::vector<int64_t>& examples, Tensor root) {
  int64_t total = 0;
  for (int64_t n : examples) total += n;
  if (layout_.empty() || total == 0) return;
  for (size_t r = 0; r < replicaStates.size(); ++r) staged_[r].copyFrom(replicaStates[r]);
  combineHost(layout_, staged_, examples, combined_);  // writes every segment
  root.copyFrom(combined_);
  // Replicas take the combined values except in PerReplica segments, which stay their own.
  for (size_t r = 0; r < replicaStates.size(); ++r) {
    const Tensor& replica = replicaStates[r];
    for (const auto& seg : layout_) {
      if (seg.combine == StateCombine::PerReplica) continue;
      replica.view(seg.offset, Shape{seg.shape.numel()})
          .copyFrom(combined_.view(seg.offset, Shape{seg.shape.numel()}));
    }
  }
}

}  // namespace dl4cpp::parallel

// Training on schedules: a network whose updater follows schedules trains bit for bit as networks
// rebuilt before every step with the schedules' values at that step as fixed hyperparameters
// (parameters, updater state and counts carried over). So every step uses the value at its own
// iteration and epoch, and that value reaches the kernel exactly as a fixed one does.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace dl4cpp;

namespace {

constexpr ScheduleType kIteration = ScheduleType::ITERATION;
constexpr ScheduleType kEpoch = ScheduleType::EPOCH;

// Dense 6 -> 8 (tanh) -> 3 (softmax), with l2 and weight decay (whose share of the update scales
// with the learning rate the step uses).
MultiLayerConfiguration net(const UpdaterParams& updater) {
  return NeuralNetConfiguration::Builder()
      .seed(5)
      .updater(updater)
      .l2(1e-3)
      .weightDecay(1e-2)
      .list()
      .layer(DenseLayer::Builder().nIn(6).nOut(8).activation(Activation::TANH).build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .build();
}

// Three minibatches of 4 examples.
std::vector<DataSet> epochData() {
  std::vector<DataSet> out;
  for (int b = 0; b < 3; ++b) {
    std::vector<float> f, l;
    for (int r = 0; r < 4; ++r) {
      for (int i = 0; i < 6; ++i) f.push_back(static_cast<float>(std::sin(0.7 * i + 1.3 * r + b)));
      for (int k = 0; k < 3; ++k) l.push_back(k == (r + b) % 3 ? 1.0f : 0.0f);
    }
    out.emplace_back(Tensor::fromVector(Shape{4, 6}, f), Tensor::fromVector(Shape{4, 3}, l));
  }
  return out;
}

bool bitIdentical(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.toVector(), y = b.toVector();
  // memcmp, not ==: NaN and -0 must match bit for bit. An empty vector's data() may be null, which
  // memcmp must not be given even for 0 bytes.
  return x.size() == y.size() &&
         (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
}

// `scheduled` trained for `epochs` epochs by fit(iterator).
MultiLayerNetwork trainScheduled(const UpdaterParams& scheduled, int epochs) {
  MultiLayerNetwork model(net(scheduled));
  model.init();
  ListDataSetIterator data(epochData(), 4);
  model.fit(data, epochs);
  return model;
}

// The same steps, each on a new network whose updater has the schedules' values at the step's
// iteration and epoch as fixed hyperparameters.
MultiLayerNetwork trainStepwise(const UpdaterParams& scheduled, int epochs) {
  MultiLayerNetwork carried(net(scheduled));
  carried.init();
  int64_t iteration = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    for (const DataSet& batch : epochData()) {
      UpdaterParams fixed = scheduled;
      setScheduledValues(fixed, iteration, epoch);
      fixed.learningRateSchedule.reset();
      fixed.momentumSchedule.reset();
      MultiLayerNetwork step(net(fixed));
      step.init();
      step.setParams(carried.params());
      step.setUpdaterState(carried.updaterState());
      step.setIterationCount(iteration);
      step.setEpochCount(epoch);
      step.fit(batch);
      carried = std::move(step);
      ++iteration;
    }
  }
  return carried;
}

void checkStepwise(const UpdaterParams& scheduled, int epochs) {
  const MultiLayerNetwork model = trainScheduled(scheduled, epochs);
  const MultiLayerNetwork stepwise = trainStepwise(scheduled, epochs);
  CHECK(model.getIterationCount() == 3 * epochs);
  CHECK(bitIdentical(model.params(), stepwise.params()));
  CHECK(bitIdentical(model.updaterState(), stepwise.updaterState()));
}

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE("Schedules: every schedule type drives SGD's learning rate step by step") {
    for (const Schedule& s : {Schedule(StepSchedule(kIteration, 0.1, 0.5, 2)),
                              Schedule(ExponentialSchedule(kIteration, 0.1, 0.8)),
                              Schedule(InverseSchedule(kIteration, 0.1, 0.5, 1)),
                              Schedule(PolySchedule(kIteration, 0.1, -1, 5)),
                              Schedule(SigmoidSchedule(kIteration, 0.1, 1.0, 3)),
                              Schedule(MapSchedule(kIteration, {{0, 0.1}, {2, 0.03}, {5, 0.2}})),
                              Schedule(CycleSchedule(kIteration, 0.01, 0.1, 6, 2, 0.5)),
                              Schedule(CosineWarmupSchedule(0.1, 0.01, 2, 7))}) {
      CAPTURE(s.name());
      checkStepwise(Sgd(s), 3);
    }
  }

  TEST_CASE("Schedules: every updater with a learning rate steps on its schedule") {
    const Schedule cycle = CycleSchedule(kIteration, 0.005, 0.05, 6, 2, 0.5);
    for (const UpdaterParams& u : {UpdaterParams(Nesterovs(cycle, 0.9)), UpdaterParams(Adam(cycle)),
                                   UpdaterParams(RmsProp(cycle)), UpdaterParams(AdaGrad(cycle)),
                                   UpdaterParams(AdaMax(cycle)), UpdaterParams(Nadam(cycle)),
                                   UpdaterParams(AMSGrad(cycle))}) {
      CAPTURE(static_cast<int>(u.kind));
      checkStepwise(u, 2);
    }
  }

  TEST_CASE("Schedules: Nesterovs' momentum and epoch schedules step on the epoch count") {
    const Schedule lrByEpoch = StepSchedule(kEpoch, 0.1, 0.5, 1);
    const Schedule momentumByEpoch = MapSchedule(kEpoch, {{0, 0.5}, {1, 0.9}, {2, 0.7}});
    checkStepwise(Nesterovs(lrByEpoch, momentumByEpoch), 3);
    checkStepwise(Nesterovs(0.05, Schedule(SigmoidSchedule(kIteration, 0.9, 1.0, 4))), 3);
    checkStepwise(Adam(Schedule(ExponentialSchedule(kEpoch, 0.01, 0.5))), 3);

    // The schedules did act: a fixed rate and momentum (their first values) train otherwise.
    const MultiLayerNetwork scheduled = trainScheduled(Nesterovs(lrByEpoch, momentumByEpoch), 3);
    const MultiLayerNetwork fixed = trainScheduled(Nesterovs(0.1, 0.5), 3);
    CHECK_FALSE(bitIdentical(scheduled.params(), fixed.params()));
    // ... though not during the first epoch.
    CHECK(bitIdentical(trainScheduled(Nesterovs(lrByEpoch, momentumByEpoch), 1).params(),
                       trainScheduled(Nesterovs(0.1, 0.5), 1).params()));
  }

  TEST_CASE("Schedules: a value that overflows is a NumericalError before any parameter changes") {
    // 0.1 * (1e300)^epoch: finite at epoch 1, infinite at epoch 2.
    MultiLayerNetwork model(net(Sgd(ExponentialSchedule(kEpoch, 0.1, 1e300))));
    model.init();
    model.setEpochCount(2);
    model.setIterationCount(17);
    const std::vector<float> before = model.params().toVector();
    CHECK_THROWS_WITH_AS(model.fit(epochData()[0]),
                         "MultiLayerNetwork: the learning rate schedule of layer 0 (DenseLayer) "
                         "gives inf at iteration 17, epoch 2; parameters were not updated",
                         NumericalError);
    CHECK(model.params().toVector() == before);
    CHECK(model.getIterationCount() == 17);
  }
}

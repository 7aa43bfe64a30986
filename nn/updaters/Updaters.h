#pragma once
// The updaters (DL4J's org.nd4j.linalg.learning.config): value types that configure the step the
// backend applies to a flat slice of parameters (Backend::updaterStep). Defaults are DL4J's.
// Every updater with a learning rate also takes a schedule for it (Schedules.h), as DL4J's
// constructors taking an ISchedule do: Adam(ExponentialSchedule(ScheduleType::EPOCH, 1e-3, 0.9)).
#include <memory>

#include "nn/backend/OpTypes.h"
#include "nn/updaters/Schedules.h"

namespace dl4cpp {

// The learning rate and momentum of the step at (iteration, epoch): u's schedules' values where it
// has them (DL4J's IUpdater.getLearningRate(iteration, epoch), Nesterovs.currentMomentum).
inline void setScheduledValues(UpdaterParams& u, int64_t iteration, int64_t epoch) {
  if (u.learningRateSchedule) u.learningRate = u.learningRateSchedule->valueAt(iteration, epoch);
  if (u.momentumSchedule) u.momentum = u.momentumSchedule->valueAt(iteration, epoch);
}

namespace detail {
// `u` with its learning rate on `schedule`; learningRate holds the schedule's first value.
inline UpdaterParams withLearningRateSchedule(UpdaterParams u, const Schedule& schedule) {
  u.learningRateSchedule = std::make_shared<const Schedule>(schedule);
  setScheduledValues(u, 0, 0);
  return u;
}
inline UpdaterParams withMomentumSchedule(UpdaterParams u, const Schedule& schedule) {
  u.momentumSchedule = std::make_shared<const Schedule>(schedule);
  setScheduledValues(u, 0, 0);
  return u;
}

// The hyperparameters of Adam and its variants (AdaMax, Nadam, AMSGrad).
inline UpdaterParams adamFamily(UpdaterKind kind, double learningRate, double beta1, double beta2,
                                double epsilon) {
  UpdaterParams u;
  u.kind = kind;
  u.learningRate = learningRate;
  u.beta1 = beta1;
  u.beta2 = beta2;
  u.epsilon = epsilon;
  return u;
}
}  // namespace detail

// p -= lr * g
struct Sgd : UpdaterParams {
  explicit Sgd(double learningRate = 1e-3) {
    kind = UpdaterKind::SGD;
    this->learningRate = learningRate;
  }
  explicit Sgd(const Schedule& learningRate)
      : UpdaterParams(detail::withLearningRateSchedule(Sgd(), learningRate)) {}
};

// v' = momentum v - lr g;  p += (1 + momentum) v' - momentum v. The learning rate, the momentum or
// both may follow schedules (DL4J's Nesterovs constructors).
struct Nesterovs : UpdaterParams {
  explicit Nesterovs(double learningRate = 0.1, double momentum = 0.9) {
    kind = UpdaterKind::NESTEROVS;
    this->learningRate = learningRate;
    this->momentum = momentum;
  }
  explicit Nesterovs(const Schedule& learningRate, double momentum = 0.9)
      : UpdaterParams(detail::withLearningRateSchedule(Nesterovs(0.1, momentum), learningRate)) {}
  Nesterovs(double learningRate, const Schedule& momentum)
      : UpdaterParams(detail::withMomentumSchedule(Nesterovs(learningRate), momentum)) {}
  Nesterovs(const Schedule& learningRate, const Schedule& momentum)
      : UpdaterParams(detail::withMomentumSchedule(Nesterovs(learningRate), momentum)) {}
};

// m' = b1 m + (1-b1) g;  v' = b2 v + (1-b2) g^2;
// p -= lr sqrt(1 - b2^t) / (1 - b1^t) * m' / (sqrt(v') + eps),  t = iteration + 1
struct Adam : UpdaterParams {
  explicit Adam(double learningRate = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                double epsilon = 1e-8)
      : UpdaterParams(detail::adamFamily(UpdaterKind::ADAM, learningRate, beta1, beta2, epsilon)) {}
  explicit Adam(const Schedule& learningRate, double beta1 = 0.9, double beta2 = 0.999,
                double epsilon = 1e-8)
      : UpdaterParams(
            detail::withLearningRateSchedule(Adam(1e-3, beta1, beta2, epsilon), learningRate)) {}
};

// s' = decay s + (1-decay) g^2;  p -= lr g / (sqrt(s') + eps)
struct RmsProp : UpdaterParams {
  explicit RmsProp(double learningRate = 0.1, double rmsDecay = 0.95, double epsilon = 1e-8) {
    kind = UpdaterKind::RMSPROP;
    this->learningRate = learningRate;
    this->rmsDecay = rmsDecay;
    this->epsilon = epsilon;
  }
  explicit RmsProp(const Schedule& learningRate, double rmsDecay = 0.95, double epsilon = 1e-8)
      : UpdaterParams(
            detail::withLearningRateSchedule(RmsProp(0.1, rmsDecay, epsilon), learningRate)) {}
};

// Leaves parameters unchanged (frozen).
struct NoOp : UpdaterParams {
  NoOp() { kind = UpdaterKind::NOOP; }
};

// ND4J's AdaGradUpdater. h starts at 1e-6 (kAdaGradInitialHistory, as ND4J);
// h' = h + g^2;  p -= lr g / (sqrt(h') + eps)
struct AdaGrad : UpdaterParams {
  explicit AdaGrad(double learningRate = 0.1, double epsilon = 1e-6) {
    kind = UpdaterKind::ADAGRAD;
    this->learningRate = learningRate;
    this->epsilon = epsilon;
  }
  explicit AdaGrad(const Schedule& learningRate, double epsilon = 1e-6)
      : UpdaterParams(detail::withLearningRateSchedule(AdaGrad(0.1, epsilon), learningRate)) {}
};

// ND4J's AdaDeltaUpdater, which has no learning rate (weight decay with applyLR uses 1);
// state = [msg | msdx]:
// msg' = rho msg + (1-rho) g^2;  d = g sqrt(msdx + eps) / sqrt(msg' + eps);
// msdx' = rho msdx + (1-rho) d^2;  p -= d
struct AdaDelta : UpdaterParams {
  explicit AdaDelta(double rho = 0.95, double epsilon = 1e-6) {
    kind = UpdaterKind::ADADELTA;
    learningRate = 1.0;
    this->rho = rho;
    this->epsilon = epsilon;
  }
};

// ND4J's AdaMaxUpdater; state = [m | u]:
// m' = b1 m + (1-b1) g;  u' = max(b2 u, |g|) + 1e-32;  p -= lr / (1 - b1^t) * m' / u'
// ND4J's step leaves epsilon out (the 1e-32 keeps 0/0 away); it is kept for DL4J's signature.
struct AdaMax : UpdaterParams {
  explicit AdaMax(double learningRate = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                  double epsilon = 1e-8)
      : UpdaterParams(
            detail::adamFamily(UpdaterKind::ADAMAX, learningRate, beta1, beta2, epsilon)) {}
  explicit AdaMax(const Schedule& learningRate, double beta1 = 0.9, double beta2 = 0.999,
                  double epsilon = 1e-8)
      : UpdaterParams(
            detail::withLearningRateSchedule(AdaMax(1e-3, beta1, beta2, epsilon), learningRate)) {}
};

// ND4J's NadamUpdater; state = [m | v]:
// m' = b1 m + (1-b1) g;  v' = b2 v + (1-b2) g^2;
// p -= lr (b1 m' + (1-b1) g) / (1 - b1^t) / (sqrt(v') + eps)
struct Nadam : UpdaterParams {
  explicit Nadam(double learningRate = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                 double epsilon = 1e-8)
      : UpdaterParams(detail::adamFamily(UpdaterKind::NADAM, learningRate, beta1, beta2, epsilon)) {
  }
  explicit Nadam(const Schedule& learningRate, double beta1 = 0.9, double beta2 = 0.999,
                 double epsilon = 1e-8)
      : UpdaterParams(
            detail::withLearningRateSchedule(Nadam(1e-3, beta1, beta2, epsilon), learningRate)) {}
};

// ND4J's AMSGradUpdater; state = [m | v | vHat]:
// m' = b1 m + (1-b1) g;  v' = b2 v + (1-b2) g^2;  vHat' = max(vHat, v');
// p -= lr sqrt(1 - b2^t) / (1 - b1^t) * m' / (sqrt(vHat') + eps)
struct AMSGrad : UpdaterParams {
  explicit AMSGrad(double learningRate = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                   double epsilon = 1e-8)
      : UpdaterParams(
            detail::adamFamily(UpdaterKind::AMSGRAD, learningRate, beta1, beta2, epsilon)) {}
  explicit AMSGrad(const Schedule& learningRate, double beta1 = 0.9, double beta2 = 0.999,
                   double epsilon = 1e-8)
      : UpdaterParams(
            detail::withLearningRateSchedule(AMSGrad(1e-3, beta1, beta2, epsilon), learningRate)) {}
};

}  // namespace dl4cpp

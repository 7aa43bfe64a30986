#pragma once
// The updaters (DL4J's org.nd4j.linalg.learning.config): value types that configure the step the
// backend applies to a flat slice of parameters (Backend::updaterStep). Defaults are DL4J's.
#include <dl4cpp/nn/backend/OpTypes.h>

namespace dl4cpp {

// p -= lr * g
struct Sgd : UpdaterParams {
  explicit Sgd(double learningRate = 1e-3) {
    kind = UpdaterKind::SGD;
    this->learningRate = learningRate;
  }
};

// v' = momentum v - lr g;  p += (1 + momentum) v' - momentum v
struct Nesterovs : UpdaterParams {
  explicit Nesterovs(double learningRate = 0.1, double momentum = 0.9) {
    kind = UpdaterKind::NESTEROVS;
    this->learningRate = learningRate;
    this->momentum = momentum;
  }
};

// m' = b1 m + (1-b1) g;  v' = b2 v + (1-b2) g^2;
// p -= lr sqrt(1 - b2^t) / (1 - b1^t) * m' / (sqrt(v') + eps),  t = iteration + 1
struct Adam : UpdaterParams {
  explicit Adam(double learningRate = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                double epsilon = 1e-8) {
    kind = UpdaterKind::ADAM;
    this->learningRate = learningRate;
    this->beta1 = beta1;
    this->beta2 = beta2;
    this->epsilon = epsilon;
  }
};

// s' = decay s + (1-decay) g^2;  p -= lr g / (sqrt(s') + eps)
struct RmsProp : UpdaterParams {
  explicit RmsProp(double learningRate = 0.1, double rmsDecay = 0.95, double epsilon = 1e-8) {
    kind = UpdaterKind::RMSPROP;
    this->learningRate = learningRate;
    this->rmsDecay = rmsDecay;
    this->epsilon = epsilon;
  }
};

// Leaves parameters unchanged (frozen).
struct NoOp : UpdaterParams {
  NoOp() { kind = UpdaterKind::NOOP; }
};

}  // namespace dl4cpp

#pragma once
// a^p for an integer p >= 0 by repeated squaring: the p-norm's power, computed identically by the
// CPU backend and the CUDA kernels (GlobalPoolingMath.h).
#include "nn/backend/HostDevice.h"

namespace dl4cpp {

DL4CPP_HOST_DEVICE inline float powInt(float a, int p) {
  float result = 1.0f;
  while (p > 0) {
    if (p & 1) result *= a;
    a *= a;
    p >>= 1;
  }
  return result;
}

}  // namespace dl4cpp

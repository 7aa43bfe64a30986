#include "nn/backend/OpFlops.h"

namespace dl4cpp {

double convolutionFlops(const Shape& x, const Shape& w, const Shape& y) {
  return 2.0 * static_cast<double>(y[0]) * static_cast<double>(y[1]) * static_cast<double>(y[2]) *
         static_cast<double>(y[3]) * static_cast<double>(x[1]) * static_cast<double>(w[2]) *
         static_cast<double>(w[3]);
}

double innerProductFlops(const Shape& x, const Shape& w) {
  return 2.0 * static_cast<double>(x[0]) * static_cast<double>(w[0]) * static_cast<double>(w[1]);
}

}  // namespace dl4cpp

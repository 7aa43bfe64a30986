#include "nn/backend/LayerPlan.h"

#include "nn/profiling/LayerProfiler.h"
#include "nn/tensor/DeviceContext.h"

namespace dl4cpp {

void NetworkStep::enterLayer(DeviceContext& ctx, int layer) {
  if (LayerProfiler* p = ctx.profiler()) p->enterLayer(layer);
}

}  // namespace dl4cpp

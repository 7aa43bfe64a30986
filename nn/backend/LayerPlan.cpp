#include "nn/backend/LayerPlan.h"

#include "nn/backend/DeviceContext.h"
#include "nn/profiling/LayerProfiler.h"

namespace dl4cpp {

void NetworkStep::enterLayer(DeviceContext& ctx, int layer) {
  if (LayerProfiler* p = ctx.profiler()) p->enterLayer(layer);
}

}  // namespace dl4cpp

#pragma once
// The errors ParallelInference::output() adds to dl4cpp's hierarchy (nn/core/Error.h). Each says
// why a request was not served, so a service can map them to its own answers (e.g. HTTP 503 for
// both).
#include "nn/core/Error.h"

namespace dl4cpp::parallel {

// QueueFullPolicy::FAIL: queueLimit requests were already waiting; this one was not queued.
struct QueueFullError : Error {
  using Error::Error;
};

// The ParallelInference was shut down (or moved from) before this request could be served.
struct InferenceShutDownError : Error {
  using Error::Error;
};

}  // namespace dl4cpp::parallel

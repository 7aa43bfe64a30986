#pragma once
// dnnl_sgemm's failure status as dl4cpp's DnnlError, for the CPU ops that call sgemm directly.
#include <oneapi/dnnl/dnnl.h>

#include <string>

#include "nn/core/Error.h"

namespace dl4cpp::cpu {

inline void throwIfSgemmFailed(dnnl_status_t status, const char* what) {
  if (status != dnnl_success)
    throw DnnlError(std::string(what) + ": dnnl_sgemm failed with status " +
                    std::to_string(static_cast<int>(status)));
}

}  // namespace dl4cpp::cpu

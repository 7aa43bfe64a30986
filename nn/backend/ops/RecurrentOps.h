#pragma once
// The recurrent family: the slot for the sequence ops (LSTM and simple RNN steps over
// [examples, features, time] with masks) of the sequences work. It has no op yet, so a backend
// installs no implementation for it; the first op added here makes RecurrentImpl a required part
// of every device (Backend::install), as for the other families.
#include "nn/backend/ops/OpDispatch.h"

namespace dl4cpp {

class RecurrentImpl {
 public:
  virtual ~RecurrentImpl() = default;
};

class RecurrentOps : protected OpFamily<RecurrentImpl> {};

}  // namespace dl4cpp

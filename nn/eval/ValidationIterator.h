#pragma once
// For code that evaluates a model on the same validation iterator again and again
// (EvaluativeListener, the early-stopping score calculators): the iterator must be resettable, and
// every pass starts at its first minibatch, wherever the previous pass (or the caller) left it.
#include <string>

#include "iterators/DataSetIterator.h"
#include "nn/core/Error.h"

namespace dl4cpp {

// ConfigError naming `owner` when `iterator` cannot be reset: a second pass would see no data.
inline void requireResettable(const DataSetIterator& iterator, const std::string& owner) {
  if (!iterator.resetSupported())
    throw ConfigError(owner +
                      ": the validation iterator cannot be reset, so it cannot be evaluated "
                      "more than once");
}

// Resets `iterator` for a new pass; DataError naming `owner` when it then yields no minibatch
// (a validation score over no data would be meaningless).
inline void startValidationPass(DataSetIterator& iterator, const std::string& owner) {
  iterator.reset();
  if (!iterator.hasNext())
    throw DataError(owner + ": the validation iterator has no data: it yields no minibatch");
}

}  // namespace dl4cpp

#pragma once
// Binding worker threads to CPU cores. With ParallelWrapper::Builder::bindToCores(true), CPU
// worker w is pinned to its own slice of the cores this process may use, so a replica's working
// set stays in one core's private cache; OpenMP threads a worker starts inherit its slice.

namespace dl4cpp::parallel {

// Cores this process may run on (its affinity mask), at least 1.
int allowedCoreCount();
// Pins the calling thread to allowed cores [first, first + count). Returns false (and leaves the
// thread unpinned) when the range does not fit or the system refuses.
bool pinCurrentThreadToCores(int first, int count);

}  // namespace dl4cpp::parallel

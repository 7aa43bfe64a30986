#pragma once
// How much memory the host has, for the checks made before a large allocation whose size comes
// from untrusted input (a tensor shape, a file's size).
#include <cstdint>

namespace dl4cpp {

// RAM and swap together, in bytes, as the kernel reported them at the first call (UINT64_MAX when
// it does not say). A buffer larger than this can never be backed: asking for it fails or, where
// the kernel overcommits, succeeds and gets the process killed when the buffer is filled.
uint64_t hostMemoryBytes();

}  // namespace dl4cpp

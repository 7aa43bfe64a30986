#pragma once
// Devices: everything dl4cpp does with a device other than running ops on it (that is Backend's
// job): memory and copies between any two devices (nn/tensor/DeviceMemory.h, which tensors use),
// the cross-device average ParallelWrapper forms, and the questions callers ask about a device (is
// its memory host memory, do its ops run on the host's cores). Code outside nn/backend/ asks here
// instead of testing the device's kind, so a new kind of device is added by answering these in
// Devices.cpp (plus its Backend).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nn/tensor/Device.h"
#include "nn/tensor/DeviceMemory.h"

namespace dl4cpp {
class Tensor;
}

namespace dl4cpp::devices {

// Whether the device's ops run on the host's cores (a worker driving it then benefits from being
// pinned to cores of its own; one driving an accelerator mostly waits).
bool runsOnHostCores(Device device);

// Where worker w, driving `own`, forms its slice of an average of buffers that live on the
// devices `inUse`: the host when all of them are host memory; otherwise `own` when it is not
// host memory, else the last device of `inUse` that is not.
Device averagingDevice(Device own, const std::vector<Device>& inUse);
// Writes the example-weighted mean of buffers[*][begin, end) into every destination, formed on
// `on` (see averagingDevice). The result is bit-identical whichever device forms it: the
// contract of ParameterAverager::average (parallel/ParameterAverager.h), whose host loop this is.
void averageSlice(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                  std::vector<Tensor>& destinations, int64_t begin, int64_t end, Device on);
// This process's share of such a mean over a cluster, formed on the host: destination[begin, end)
// = sum_r (examples[r] / total) * buffers[r][begin, end), where `total` counts the examples of
// every process (cpu::weightedPartialSum). Every tensor must be in host memory, where the
// cluster's all-reduce reads them.
void partialSumSlice(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                     int64_t total, Tensor& destination, int64_t begin, int64_t end);

}  // namespace dl4cpp::devices

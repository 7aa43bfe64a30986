#pragma once
// Device: where a tensor's memory lives and where an op runs. A small value type; the per-thread
// machinery (engine, stream, handles, primitive cache) lives in DeviceContext.
#include <string>
#include <vector>

namespace dl4cpp {

enum class DeviceType { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  static Device cpu() { return {DeviceType::CPU, 0}; }
  static Device cuda(int index) { return {DeviceType::CUDA, index}; }

  bool isCpu() const { return type == DeviceType::CPU; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  // "cpu" or "cuda:1"
  std::string toString() const {
    return type == DeviceType::CPU ? std::string("cpu") : "cuda:" + std::to_string(index);
  }
};

// Number of CUDA devices usable by this build: 0 when built without CUDA or when none is present.
int cudaDeviceCount();

// Whether `device` can be used here: the CPU always, cuda:i when 0 <= i < cudaDeviceCount().
bool isVisible(const Device& device);

// Every visible GPU, or the CPU alone when there is none: the devices ParallelWrapper and
// ParallelInference use when none are given.
std::vector<Device> defaultDevices();

}  // namespace dl4cpp

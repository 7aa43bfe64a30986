#pragma once
// Device: where a tensor's memory lives and where an op runs. A small value type; the per-thread
// machinery (engine, stream, handles, primitive cache) lives in DeviceContext.
#include <string>

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

}  // namespace dl4cpp

#include "nn/backend/cpu/CpuAlgorithm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>

namespace dl4cpp::cpu {

namespace {
constexpr const char* kVariable = "DL4CPP_CPU_ALGORITHM";

std::string trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

CpuAlgorithmSetting& setting() {
  static CpuAlgorithmSetting forced = [] {
    const char* raw = std::getenv(kVariable);
    return parseCpuAlgorithmSetting(raw == nullptr ? "" : raw);
  }();
  return forced;
}
}  // namespace

CpuAlgorithmSetting parseCpuAlgorithmSetting(std::string_view text) {
  CpuAlgorithmSetting forced;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view pair = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (trimmed(pair).empty()) continue;
    const size_t eq = pair.find('=');
    const std::string op = trimmed(pair.substr(0, eq));
    const std::string name = eq == std::string_view::npos ? "" : trimmed(pair.substr(eq + 1));
    if (op.empty() || name.empty())
      throw ConfigError(std::string(kVariable) + ": '" + std::string(pair) +
                        "' is not op=algorithm (e.g. conv_forward=im2col)");
    if (std::find(std::begin(kCpuAlgorithmOps), std::end(kCpuAlgorithmOps), op) ==
        std::end(kCpuAlgorithmOps)) {
      std::string ops;
      for (std::string_view known : kCpuAlgorithmOps) {
        if (!ops.empty()) ops += ", ";
        ops += known;
      }
      throw ConfigError(
          fmt::format("{}: no CPU algorithm table for op '{}' (tables: {})", kVariable, op, ops));
    }
    forced[op] = name;
  }
  return forced;
}

std::string_view forcedCpuAlgorithm(std::string_view op) {
  const auto& forced = setting();
  const auto it = forced.find(op);
  return it == forced.end() ? std::string_view() : std::string_view(it->second);
}

void setCpuAlgorithmSetting(std::string_view text) { setting() = parseCpuAlgorithmSetting(text); }

}  // namespace dl4cpp::cpu

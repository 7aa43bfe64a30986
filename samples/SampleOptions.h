#pragma once
// Command-line flags shared by the samples: --name value pairs, with a clear error for anything
// unknown or malformed.
#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

namespace samples {

class SampleOptions {
 public:
  // `known`: flag name -> help text.
  SampleOptions(int argc, char** argv, std::map<std::string, std::string> known)
      : known_(std::move(known)) {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        printHelp(argv[0]);
        std::exit(0);
      }
      if (arg.rfind("--", 0) != 0 || !known_.count(arg.substr(2)))
        throw std::invalid_argument("unknown argument '" + arg + "' (see --help)");
      if (i + 1 >= argc) throw std::invalid_argument("missing value after " + arg);
      values_[arg.substr(2)] = argv[++i];
    }
  }

  std::string getString(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }
  long getInt(const std::string& name, long fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0')
      throw std::invalid_argument("--" + name + " expects an integer, got '" + it->second + "'");
    return v;
  }
  double getDouble(const std::string& name, double fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0')
      throw std::invalid_argument("--" + name + " expects a number, got '" + it->second + "'");
    return v;
  }

 private:
  void printHelp(const char* program) const {
    std::cout << "usage: " << program << " [options]\n";
    for (const auto& [name, help] : known_) std::cout << "  --" << name << "  " << help << "\n";
  }
  std::map<std::string, std::string> known_;
  std::map<std::string, std::string> values_;
};

}  // namespace samples

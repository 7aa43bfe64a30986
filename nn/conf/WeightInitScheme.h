#pragma once
// How a parameter's initial values are drawn: one of DL4J's WeightInit schemes (Enums.h), or a
// distribution with given parameters (DL4J's WeightInitDistribution), as DL4J's builders take
// either:
//   .weightInit(WeightInit::RELU)
//   .weightInit(NormalDistribution(0, 0.01))
//   .weightInit(UniformDistribution(-0.05, 0.05))
#include <string>
#include <variant>

#include "nn/conf/Enums.h"

namespace dl4cpp {

// A distribution of initial values (DL4J's org.deeplearning4j.nn.conf.distribution).
struct Distribution {
  enum class Kind { NORMAL, UNIFORM };
  Kind kind = Kind::NORMAL;
  double first = 0, second = 1;  // NORMAL: mean, std; UNIFORM: lower, upper

  bool operator==(const Distribution&) const = default;
  // What is wrong with the parameters ("std must be finite and >= 0, got -1"), or "" when nothing
  // is: NORMAL needs a finite mean and a finite std >= 0, UNIFORM finite bounds lower < upper.
  std::string problem() const;
  // "NormalDistribution(mean=0, std=0.01)", "UniformDistribution(lower=-1, upper=1)".
  std::string toString() const;
};

// N(mean, std^2): DL4J's NormalDistribution.
struct NormalDistribution : Distribution {
  NormalDistribution(double mean, double std) : Distribution{Kind::NORMAL, mean, std} {}
};

// U(lower, upper): DL4J's UniformDistribution.
struct UniformDistribution : Distribution {
  UniformDistribution(double lower, double upper) : Distribution{Kind::UNIFORM, lower, upper} {}
};

inline constexpr EnumNames<Distribution::Kind, 2> kDistributionNames{
    {{Distribution::Kind::NORMAL, "NORMAL"}, {Distribution::Kind::UNIFORM, "UNIFORM"}}};

class WeightInitScheme {
 public:
  // Implicit, as DL4J's overloads of weightInit(): .weightInit(WeightInit::RELU) and
  // .weightInit(NormalDistribution(0, 0.01)) both read as a scheme.
  WeightInitScheme(WeightInit scheme = WeightInit::XAVIER)  // NOLINT(google-explicit-constructor)
      : value_(scheme) {}
  WeightInitScheme(const Distribution& d)  // NOLINT(google-explicit-constructor)
      : value_(d) {}

  // The named scheme, or null for a distribution.
  const WeightInit* named() const { return std::get_if<WeightInit>(&value_); }
  // The distribution, or null for a named scheme.
  const Distribution* distribution() const { return std::get_if<Distribution>(&value_); }

  bool operator==(const WeightInitScheme&) const = default;
  // The scheme's name ("XAVIER") or the distribution's toString().
  std::string toString() const;

 private:
  std::variant<WeightInit, Distribution> value_;
};

}  // namespace dl4cpp

// The row loops of batch normalisation (CpuBatchNorm.cpp), plain C++ that the compiler vectorises
// for the level of the namespace it is included in: CpuBatchNorm.cpp includes this file inside
// Highway's avx512 and avx2 namespaces (compiled for those levels, HighwayTargets.h) and once more
// for the levels below. Hence no include guard and no includes of its own (Highway's -inl.h
// convention): the including file has <cstdint>. A row is `length` contiguous values of one
// channel of one example.

// The sum of v[0, length).
inline float rowSum(const float* v, int64_t length) {
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t s = 0; s < length; ++s) sum += v[s];
  return sum;
}

// The sum of (v - mean)^2 over v[0, length).
inline float rowSquaredDeviation(const float* v, float mean, int64_t length) {
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t s = 0; s < length; ++s) sum += (v[s] - mean) * (v[s] - mean);
  return sum;
}

// The activation a row loop applies with its normalisation: kRelu's max(v, 0) (0 for a NaN, as
// the ReLU op gives) or none.
template <bool kRelu>
inline float fusedActivation(float v) {
  if constexpr (kRelu) return v > 0.0f ? v : 0.0f;
  return v;
}

// y = f(x * scale + shift).
template <bool kRelu>
inline void scaleShiftRow(const float* x, float scale, float shift, float* y, int64_t length) {
#pragma omp simd
  for (int64_t s = 0; s < length; ++s) y[s] = fusedActivation<kRelu>(x[s] * scale + shift);
}

// sums[0] = the sum of dy, sums[1] = the sum of dy * (x - mean).
inline void gradientSumsRow(const float* x, const float* dy, float mean, int64_t length,
                            float* sums) {
  float sumDy = 0, sumDyX = 0;
#pragma omp simd reduction(+ : sumDy, sumDyX)
  for (int64_t s = 0; s < length; ++s) {
    sumDy += dy[s];
    sumDyX += dy[s] * (x[s] - mean);
  }
  sums[0] = sumDy;
  sums[1] = sumDyX;
}

// dx = k * (dy - meanDy - (x - mean) * xCoefficient).
inline void inputGradientRow(const float* x, const float* dy, float mean, float k, float meanDy,
                             float xCoefficient, float* dx, int64_t length) {
#pragma omp simd
  for (int64_t s = 0; s < length; ++s) dx[s] = k * (dy[s] - meanDy - (x[s] - mean) * xCoefficient);
}

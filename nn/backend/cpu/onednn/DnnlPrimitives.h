#pragma once
// What the CPU families share to run an op on a oneDNN primitive: memory descriptors of the plain
// layouts, the parts of a PrimitiveKey, and makeEntry, which builds a cache entry with the reorders
// a primitive's chosen layouts need. Internal to nn/backend/cpu/.
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <utility>
#include <vector>

#include "nn/backend/OpTypes.h"
#include "nn/backend/cpu/onednn/PrimitiveCache.h"
#include "nn/core/Error.h"
#include "nn/tensor/Shape.h"

namespace dl4cpp::cpu::onednn {

using dnnl::algorithm;
using dnnl::prop_kind;
using Dims = dnnl::memory::dims;
using Tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;

inline Dims dimsOf(const Shape& s) { return Dims(s.begin(), s.end()); }

// Plain row-major layout of any rank up to 4.
inline dnnl::memory::desc plainDesc(const Shape& s) {
  static constexpr Tag kTags[] = {Tag::undef, Tag::a, Tag::ab, Tag::abc, Tag::abcd};
  return {dimsOf(s), kF32, kTags[s.rank()]};
}
inline dnnl::memory::desc flatDesc(int64_t numel) { return {Dims{numel}, kF32, Tag::a}; }
// Lets a primitive choose its layout (convolution weights, and the activations of convolutions
// with few input channels, for which oneDNN picks its blocked layout and direct JIT kernels);
// makeEntry adds the reorders at its boundary.
inline dnnl::memory::desc anyDesc(const Shape& s) { return {dimsOf(s), kF32, Tag::any}; }

inline PrimitiveKey& addShape(PrimitiveKey& k, const Shape& s) {
  k.add(s.rank());
  for (int64_t d : s) k.add(d);
  return k;
}
inline PrimitiveKey& addGeometry(PrimitiveKey& k, const WindowGeometry& g) {
  return k.add(g.kernelH)
      .add(g.kernelW)
      .add(g.strideH)
      .add(g.strideW)
      .add(g.padTop)
      .add(g.padLeft)
      .add(g.padBottom)
      .add(g.padRight)
      .add(g.dilationH)
      .add(g.dilationW);
}
inline Dims strides(const WindowGeometry& g) { return {g.strideH, g.strideW}; }
inline Dims kernel(const WindowGeometry& g) { return {g.kernelH, g.kernelW}; }
inline Dims padBefore(const WindowGeometry& g) { return {g.padTop, g.padLeft}; }
inline Dims padAfter(const WindowGeometry& g) { return {g.padBottom, g.padRight}; }
inline Dims dilation(const WindowGeometry& g) {
  return {g.dilationH - 1, g.dilationW - 1};
}  // 0-based

inline bool isOutput(int id) {
  return id == DNNL_ARG_DST || id == DNNL_ARG_DIFF_SRC || id == DNNL_ARG_DIFF_WEIGHTS ||
         id == DNNL_ARG_DIFF_BIAS;
}

// Builds a cache entry, turning oneDNN's exceptions into DnnlError naming the op. `args` gives each
// argument's plain (caller) layout; where the primitive wants another one, the entry gets an
// internal buffer in that layout and a reorder to or from the caller's.
template <typename PrimitiveDesc, typename Primitive, typename Describe>
inline CachedPrimitive makeEntry(const char* op, Describe&& describe, const dnnl::engine& engine,
                                 const std::vector<std::pair<int, dnnl::memory::desc>>& args) {
  try {
    PrimitiveDesc pd = describe();
    CachedPrimitive e;
    e.primitive = Primitive(pd);
    for (const auto& [id, plain] : args) {
      CachedArg a;
      a.id = id;
      a.output = isOutput(id);
      a.user = dnnl::memory(plain, engine, static_cast<void*>(nullptr));
      const dnnl::memory::desc wanted = pd.query_md(dnnl::query::exec_arg_md, id);
      if (id != DNNL_ARG_WORKSPACE && wanted != plain) {
        a.internal = dnnl::memory(wanted, engine, static_cast<void*>(nullptr));
        a.scratchOffset = e.scratchBytes;
        e.scratchBytes += (wanted.get_size() + 63) / 64 * 64;
        a.reorder =
            a.output ? dnnl::reorder(dnnl::reorder::primitive_desc(engine, wanted, engine, plain))
                     : dnnl::reorder(dnnl::reorder::primitive_desc(engine, plain, engine, wanted));
      }
      e.args.push_back(std::move(a));
    }
    e.workspaceBytes = pd.workspace_desc().get_size();
    return e;
  } catch (const dnnl::error& err) {
    throw DnnlError(std::string("oneDNN could not create ") + op + ": " + err.what());
  }
}

inline dnnl::algorithm poolingAlgorithm(PoolingKind kind) {
  return kind == PoolingKind::MAX ? algorithm::pooling_max : algorithm::pooling_avg_exclude_padding;
}

}  // namespace dl4cpp::cpu::onednn

#pragma once
// Tables of a kernel's instantiations over two block sizes, for the direct kernels and the GEMM,
// which pick the instantiation for a block's actual size at run time:
// kernelTable<Pick, kRows, kColumns>()[i][j] is Pick<i + 1, j + 1>::kernel.
#include <array>
#include <cstddef>
#include <utility>

namespace dl4cpp::cpu {

namespace kernel_table_detail {
template <template <int, int> class Pick, int kRow, size_t... J>
constexpr auto row(std::index_sequence<J...>) {
  return std::array{Pick<kRow, static_cast<int>(J) + 1>::kernel...};
}
template <template <int, int> class Pick, int kColumns, size_t... I>
constexpr auto rows(std::index_sequence<I...>) {
  return std::array{row<Pick, static_cast<int>(I) + 1>(std::make_index_sequence<kColumns>{})...};
}
}  // namespace kernel_table_detail

template <template <int, int> class Pick, int kRows, int kColumns>
constexpr auto kernelTable() {
  return kernel_table_detail::rows<Pick, kColumns>(std::make_index_sequence<kRows>{});
}

}  // namespace dl4cpp::cpu

// SPDX-License-Identifier: MIT
module;
#include <cstddef>
#include <cstdlib>
#include <new>
#include <sys/mman.h>
module strata.storage;

namespace strata::detail {
namespace {
constexpr std::size_t cache_line = 64;
constexpr std::size_t huge_page = std::size_t{2} << 20;
}  // namespace

void* allocate_bytes(std::size_t nbytes) {
  const bool big = nbytes >= 2 * huge_page;
  const std::size_t align = big ? huge_page : cache_line;
  const std::size_t rounded = (nbytes + align - 1) / align * align;
  void* p = nullptr;
  if (posix_memalign(&p, align, rounded ? rounded : align) != 0) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  //if (big) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  return p;
}

void free_bytes(void* p) noexcept { std::free(p); }
}  // namespace strata::detail

// SPDX-License-Identifier: MIT
// Replaces every global operator new/delete of the test binary with malloc/free plus a
// counter, so that a test can assert that code allocates nothing. All forms are replaced
// (array, nothrow, aligned): a mix of replaced and default forms would pair allocations
// and deallocations from different allocators (AddressSanitizer reports exactly that).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

inline std::atomic<long> allocations{0};
/// The largest request seen since a test last set it to 0 (see counting::note_size).
inline std::atomic<std::size_t> largest_allocation{0};

namespace counting {
/// Raises largest_allocation to n if n is larger.
inline void note_size(std::size_t n) noexcept {
  std::size_t seen = largest_allocation.load(std::memory_order_relaxed);
  while (n > seen && !largest_allocation.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
  }
}
inline void* allocate(std::size_t n, std::size_t align = 0) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  note_size(n);
  if (n == 0) n = 1;
  if (align > alignof(std::max_align_t)) {
    void* p = nullptr;
    return posix_memalign(&p, align, n) == 0 ? p : nullptr;
  }
  return std::malloc(n);
}
inline void* allocate_or_throw(std::size_t n, std::size_t align = 0) {
  if (void* p = allocate(n, align)) return p;
  throw std::bad_alloc();
}
}  // namespace counting

void* operator new(std::size_t n) { return counting::allocate_or_throw(n); }
void* operator new[](std::size_t n) { return counting::allocate_or_throw(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counting::allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counting::allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) { return counting::allocate_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counting::allocate_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counting::allocate(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counting::allocate(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

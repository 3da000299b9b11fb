// SPDX-License-Identifier: MIT
module;
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <sys/mman.h>
#include <vector>
module strata.storage;

namespace strata::detail {
namespace {
constexpr std::size_t cache_line = 64;
constexpr std::size_t huge_page = std::size_t{2} << 20;
constexpr std::size_t big_block = 2 * huge_page;        // from here: huge-page aligned and cached
constexpr std::size_t cache_limit = std::size_t{1} << 30;  // bytes kept for reuse at most

// Large freed blocks are kept for reuse: a loop that evaluates into fresh tensors of the same
// sizes then touches memory that is already mapped instead of page-faulting every time.
struct block_cache {
  struct entry {
    void* p;
    std::size_t bytes;
  };
  std::mutex m;
  std::vector<entry> blocks;  // most recently freed last
  std::size_t total = 0;

  void* take(std::size_t bytes) {
    std::lock_guard lock(m);
    for (std::size_t i = blocks.size(); i-- > 0;) {
      if (blocks[i].bytes != bytes) continue;
      void* p = blocks[i].p;
      total -= bytes;
      blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(i));
      return p;
    }
    return nullptr;
  }
  void give(void* p, std::size_t bytes) {
    std::lock_guard lock(m);
    if (bytes > cache_limit / 4) {  // too big to hold on to
      std::free(p);
      return;
    }
    blocks.push_back({p, bytes});
    total += bytes;
    while (total > cache_limit) {  // evict the oldest
      std::free(blocks.front().p);
      total -= blocks.front().bytes;
      blocks.erase(blocks.begin());
    }
  }
  void clear() {
    std::lock_guard lock(m);
    for (const entry& e : blocks) std::free(e.p);
    blocks.clear();
    total = 0;
  }
  ~block_cache() { clear(); }
};

block_cache& cache() {
  static block_cache c;
  return c;
}

std::size_t rounded(std::size_t nbytes) {
  const std::size_t align = nbytes >= big_block ? huge_page : cache_line;
  const std::size_t r = (nbytes + align - 1) / align * align;
  return r ? r : align;
}
}  // namespace

namespace {
thread_local allocation_counts allocated;  // per thread: no state shared between threads
}  // namespace

void* allocate_bytes(std::size_t nbytes) {
  ++allocated.blocks;
  allocated.bytes += nbytes;
  const std::size_t bytes = rounded(nbytes);
  const bool big = nbytes >= big_block;
  if (big)
    if (void* p = cache().take(bytes)) return p;
  void* p = nullptr;
  if (posix_memalign(&p, big ? huge_page : cache_line, bytes) != 0) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (big) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  return p;
}

void free_bytes(void* p, std::size_t nbytes) noexcept {
  if (!p) return;
  if (nbytes >= big_block) {
    try {
      cache().give(p, rounded(nbytes));
      return;
    } catch (...) {  // the cache could not grow: just free
    }
  }
  std::free(p);
}
}  // namespace strata::detail

namespace strata {
void empty_cache() { detail::cache().clear(); }

storage storage::allocate_elements(std::int64_t n, std::size_t itemsize, bool zero) {
  if (n < 0) throw shape_error("storage: negative number of elements");
  auto blk = std::make_shared<block>();
  blk->nbytes = static_cast<std::size_t>(n) * itemsize;
  blk->count = n;
  blk->data = detail::allocate_bytes(blk->nbytes);
  if (zero && blk->nbytes != 0) std::memset(blk->data, 0, blk->nbytes);
  storage s;
  s.block_ = std::move(blk);
  return s;
}

storage storage::borrow_elements(void* data, std::int64_t n, std::size_t itemsize, std::shared_ptr<void> owner,
                                 bool read_only) {
  if (n < 0) throw shape_error("storage: negative number of elements");
  auto blk = std::make_shared<block>();
  blk->nbytes = static_cast<std::size_t>(n) * itemsize;
  blk->count = n;
  blk->data = data;
  blk->owner = std::move(owner);
  blk->borrowed = true;
  blk->read_only = read_only;
  storage s;
  s.block_ = std::move(blk);
  return s;
}

void storage::set_destroy(void (*destroy)(void*, std::int64_t)) noexcept { block_->destroy = destroy; }
allocation_counts thread_allocations() noexcept { return detail::allocated; }
}  // namespace strata

// SPDX-License-Identifier: MIT
// Reference-counted, 64-byte aligned element buffers shared by every view of them.
export module strata.storage;
import strata.std;
import strata.dtype;
import strata.error;

namespace strata::detail {
/// Aligned raw bytes: 64-byte aligned; blocks of 4 MiB and more are 2 MiB aligned, ask for
/// transparent huge pages, and are kept for reuse when freed (up to 1 GiB in all), so that a
/// fresh result is not dominated by page faults.
void* allocate_bytes(std::size_t nbytes);
void free_bytes(void* p, std::size_t nbytes) noexcept;
}  // namespace strata::detail

export namespace strata {
/// Frees the large blocks strata keeps for reuse (like torch.cuda.empty_cache).
void empty_cache();

/// Storage allocations made by one thread: how many blocks, and their bytes.
struct allocation_counts {
  std::uint64_t blocks = 0;  ///< storages allocated
  std::uint64_t bytes = 0;   ///< bytes requested for them
};
/// The storage allocations the calling thread has made so far (to check that code
/// allocates only what it should; a difference of two calls counts what ran between).
allocation_counts thread_allocations() noexcept;

/// How a new storage's elements start out.
enum class init { uninitialized, zero };

/// A shared buffer of elements of one type; copies of a storage share the buffer.
class storage {
 public:
  inline storage() = default;

  /// A buffer of n elements of T; trivially constructible types may stay uninitialized.
  template <element T>
  static storage allocate(std::int64_t n, init how) {
    // (compiler built-ins, not <type_traits>: every expression a user assigns instantiates
    // this, and the first use of a standard trait loads all of its specializations from
    // every module that strata is built of)
    if constexpr (__is_trivially_constructible(T) && __is_trivially_destructible(T)) {
      return allocate_elements(n, sizeof(T), how == init::zero);  // zero: T{} is all zero bits
    } else {
      storage s = allocate_elements(n, sizeof(T), false);
      T* p = static_cast<T*>(s.data());
      for (std::int64_t i = 0; i < n; ++i) std::construct_at(p + i);  // value-initialized: zero
      s.set_destroy([](void* d, std::int64_t k) {
        for (std::int64_t i = 0; i < k; ++i) static_cast<T*>(d)[i].~T();
      });
      return s;
    }
  }

  /// A storage over n elements of T at data that strata does not own (a memory-mapped file, a
  /// foreign framework's buffer): owner is released, and nothing freed, when the last view of
  /// the elements goes. data must stay valid until then.
  template <element T>
  static storage borrow(T* data, std::int64_t n, std::shared_ptr<void> owner, bool read_only = false) {
    return borrow_elements(data, n, sizeof(T), std::move(owner), read_only);
  }
  /// True for borrowed memory its owner shared read-only (a DLPack tensor with the read-only flag).
  inline bool is_read_only() const noexcept { return block_ && block_->read_only; }
  /// Throws error when the elements may not be written (every writing operation of strata
  /// calls it before it writes).
  inline void check_writable() const {
    if (is_read_only())
      throw error("assignment destination is read-only: its memory was shared read-only (DLPack's read-only "
                  "flag); clone() it to write");
  }

  /// The first byte of the buffer (nullptr for a default-constructed storage).
  inline void* data() const noexcept { return block_ ? block_->data : nullptr; }
  /// Size of the buffer in bytes.
  inline std::size_t nbytes() const noexcept { return block_ ? block_->nbytes : 0; }
  /// Number of elements the buffer holds.
  inline std::int64_t size() const noexcept { return block_ ? block_->count : 0; }
  /// How many storage handles share this buffer.
  inline long use_count() const noexcept { return block_.use_count(); }
  /// True when both handles refer to the same buffer.
  inline bool is_alias_of(const storage& o) const noexcept { return block_ && block_ == o.block_; }
  /// How many times the elements were written in place (PyTorch's version counter, which
  /// autograd compares with the version a recorded node saw).
  inline std::uint64_t version() const noexcept {
    return block_ ? block_->version.load(std::memory_order_relaxed) : 0;
  }
  /// Counts an in-place write (every writing operation of strata calls it).
  inline void bump_version() const noexcept {
    if (block_) block_->version.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  // A buffer of n elements of itemsize bytes, all zero bits if zero (compiled once, in src/).
  static storage allocate_elements(std::int64_t n, std::size_t itemsize, bool zero);
  // n elements of itemsize bytes at data, kept alive by owner (compiled once, in src/).
  static storage borrow_elements(void* data, std::int64_t n, std::size_t itemsize, std::shared_ptr<void> owner,
                                 bool read_only);
  // Runs destroy(data, n) before the buffer is freed.
  void set_destroy(void (*destroy)(void*, std::int64_t)) noexcept;

  struct block {
    void* data = nullptr;
    std::size_t nbytes = 0;
    std::int64_t count = 0;
    std::atomic<std::uint64_t> version{0};
    void (*destroy)(void*, std::int64_t) = nullptr;
    std::shared_ptr<void> owner;  // what keeps borrowed memory alive
    bool borrowed = false;        // the memory is not strata's: never freed here
    bool read_only = false;       // borrowed memory that must not be written
    block() = default;
    block(const block&) = delete;
    block& operator=(const block&) = delete;
    ~block() {
      if (destroy) destroy(data, count);
      if (!borrowed) detail::free_bytes(data, nbytes);
    }
  };
  std::shared_ptr<block> block_;
};
}  // namespace strata

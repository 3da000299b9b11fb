// SPDX-License-Identifier: MIT
// Sizes and strides: small inline vectors, broadcasting, contiguity, dim wrapping.
export module strata.shape;
import strata.std;
import strata.error;

export namespace strata {
/// A vector of trivially copyable T that keeps up to N elements inline (no allocation).
template <class T, std::size_t N>
class small_vec {
  static_assert(std::is_trivially_copyable_v<T>, "small_vec holds trivially copyable values only");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;
  using size_type = std::size_t;

  small_vec() noexcept = default;
  /// n copies of value.
  explicit small_vec(size_type n, T value = T{}) { resize(n, value); }
  small_vec(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  /// The elements of anything a span of T can view (an int_list, a std::vector). A template
  /// that steps aside for small_vec itself: as a plain constructor from a span it took part in
  /// every copy and move of a class holding a small_vec, and asking whether a small_vec
  /// converts to a span instantiates the standard range concepts (0.15 s of the compile time
  /// of a translation unit that moves an expression).
  template <class S>
    requires(!__is_same(__remove_cvref(S), small_vec)) && (__is_convertible(S, std::span<const T>))
  explicit small_vec(S&& s) {
    const std::span<const T> v(s);
    assign(v.data(), v.data() + v.size());
  }
  small_vec(const small_vec& o) {
    if (o.is_inline()) {  // whole inline buffer: a fixed-size copy the compiler inlines
      std::memcpy(inline_, o.inline_, sizeof inline_);
      size_ = o.size_;
    } else {
      assign(o.begin(), o.end());
    }
  }
  small_vec(small_vec&& o) noexcept { steal(o); }
  small_vec& operator=(const small_vec& o) {
    if (this == &o) return *this;
    if (o.is_inline() && is_inline()) {
      std::memcpy(inline_, o.inline_, sizeof inline_);
      size_ = o.size_;
    } else {
      assign(o.begin(), o.end());
    }
    return *this;
  }
  small_vec& operator=(small_vec&& o) noexcept {
    if (this != &o) { release(); steal(o); }
    return *this;
  }
  ~small_vec() { release(); }

  /// Replaces the contents with [first, last).
  void assign(const T* first, const T* last) {
    const auto n = static_cast<size_type>(last - first);
    if (n > cap_) {  // first may point into our own buffer: copy before freeing it
      T* fresh = static_cast<T*>(::operator new(n * sizeof(T)));
      std::memcpy(fresh, first, n * sizeof(T));
      release();
      data_ = fresh;
      cap_ = n;
    } else if (n) {
      std::memmove(data_, first, n * sizeof(T));
    }
    size_ = n;
  }
  void reserve(size_type n) {
    if (n <= cap_) return;
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T)));
    if (size_) std::memcpy(fresh, data_, size_ * sizeof(T));
    const size_type s = size_;
    release();
    data_ = fresh;
    cap_ = n;
    size_ = s;
  }
  void resize(size_type n, T value = T{}) {
    reserve(n);
    for (size_type i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void push_back(T v) {
    if (size_ == cap_) reserve(cap_ * 2);
    data_[size_++] = v;
  }
  /// Inserts v before position pos.
  void insert(size_type pos, T v) {
    push_back(v);
    std::rotate(data_ + pos, data_ + size_ - 1, data_ + size_);
  }
  /// Removes the element at position pos.
  void erase(size_type pos) {
    std::copy(data_ + pos + 1, data_ + size_, data_ + pos);
    --size_;
  }
  void pop_back() { --size_; }
  void clear() noexcept { size_ = 0; }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](size_type i) noexcept { return data_[i]; }
  const T& operator[](size_type i) const noexcept { return data_[i]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& back() const noexcept { return data_[size_ - 1]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  /// True while the elements live in the inline buffer.
  bool is_inline() const noexcept { return data_ == inline_; }
  operator std::span<const T>() const noexcept { return {data_, size_}; }  // NOLINT
  friend bool operator==(const small_vec& a, const small_vec& b) {
    if (a.size_ != b.size_) return false;
    for (size_type i = 0; i < a.size_; ++i)
      if (a.data_[i] != b.data_[i]) return false;
    return true;
  }

 private:
  void release() noexcept {
    if (data_ != inline_) ::operator delete(data_);
    data_ = inline_;
    cap_ = N;
    size_ = 0;
  }
  void steal(small_vec& o) noexcept {
    if (o.data_ == o.inline_) {
      std::memcpy(inline_, o.inline_, sizeof inline_);
      data_ = inline_;
      cap_ = N;
    } else {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = N;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T inline_[N];
  T* data_ = inline_;
  size_type size_ = 0;
  size_type cap_ = N;
};

/// Sizes or strides of one tensor: int64, inline up to rank 8 (PyTorch's DimVector).
using dim_vector = small_vec<std::int64_t, 8>;

/// A non-owning list of int64 (PyTorch's IntArrayRef): from a braced list, a dim_vector,
/// a std::vector or a span. Valid as a parameter: a braced list lives to the end of the call.
class int_list {
 public:
  constexpr int_list() noexcept = default;
  constexpr int_list(std::initializer_list<std::int64_t> il) noexcept  // NOLINT
      : data_(il.begin()), size_(il.size()) {}
  // Members of a non-template class in a module are not implicitly inline: say so, so that
  // importers can inline these hot one-liners.
  inline int_list(const dim_vector& v) noexcept : data_(v.data()), size_(v.size()) {}  // NOLINT
  inline int_list(const std::vector<std::int64_t>& v) noexcept  // NOLINT
      : data_(v.data()), size_(v.size()) {}
  /// One int (IntArrayRef's one-element form): x.sum(1), x.view(-1), zeros<float>(3). It refers
  /// to its argument, which a call's temporary outlives.
  constexpr int_list(const std::int64_t& one) noexcept : data_(&one), size_(1) {}  // NOLINT
  /// A bool or a floating number is not a dim (x.sum(true), x.mean(0.5) do not compile).
  template <class F>
    requires(std::is_floating_point_v<F> || __is_same(F, bool))
  int_list(F) = delete;
  /// Any contiguous int64 sequence with data() and size(): implicitly from a span, explicitly
  /// from the rest (a std::array, a small_vec of another capacity). A template that steps
  /// aside for int_list itself, for the reason small_vec's does.
  template <class S>
    requires(!__is_same(S, int_list)) && requires(const S& s) {
      static_cast<const std::int64_t*>(s.data());
      static_cast<std::size_t>(s.size());
    }
  constexpr explicit(!__is_same(S, std::span<const std::int64_t>) && !__is_same(S, std::span<std::int64_t>))
      int_list(const S& s) noexcept  // NOLINT
      : data_(s.data()), size_(static_cast<std::size_t>(s.size())) {}
  /// The elements of an array.
  template <std::size_t N>
  constexpr explicit int_list(const std::int64_t (&a)[N]) noexcept : data_(a), size_(N) {}

  constexpr const std::int64_t* data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr std::int64_t operator[](std::size_t i) const noexcept { return data_[i]; }
  constexpr const std::int64_t* begin() const noexcept { return data_; }
  constexpr const std::int64_t* end() const noexcept { return data_ + size_; }
  constexpr std::int64_t back() const noexcept { return data_[size_ - 1]; }
  /// An owning copy.
  inline dim_vector vec() const { return dim_vector(std::span<const std::int64_t>(data_, size_)); }
  /// An owning copy as a std::vector (libtorch's t.sizes().vec()).
  inline operator std::vector<std::int64_t>() const { return std::vector<std::int64_t>(data_, data_ + size_); }  // NOLINT
  friend constexpr bool operator==(int_list a, int_list b) noexcept {
    if (a.size_ != b.size_) return false;
    for (std::size_t i = 0; i < a.size_; ++i)  // short: a plain loop beats a call to memcmp
      if (a.data_[i] != b.data_[i]) return false;
    return true;
  }

 private:
  const std::int64_t* data_ = nullptr;
  std::size_t size_ = 0;
};

/// "[2, 3]": a list of ints as PyTorch prints sizes in messages.
std::string to_string(int_list v);

/// Prints sizes as libtorch does: "[2, 3]".
inline std::ostream& operator<<(std::ostream& os, int_list v) { return os << to_string(v); }
/// Prints sizes as libtorch does: "[2, 3]".
inline std::ostream& operator<<(std::ostream& os, const dim_vector& v) { return os << to_string(v); }

/// Product of sizes; throws shape_error for a negative size or an int64 overflow.
std::int64_t numel_of(int_list sizes);

/// Row-major strides for sizes (a size-0 or size-1 dim counts as 1).
dim_vector contiguous_strides(int_list sizes);

/// PyTorch's is_contiguous: strides of size-1 dims are ignored; empty tensors are contiguous.
bool is_contiguous(int_list sizes, int_list strides);

/// The broadcast of two shapes; throws shape_error worded as PyTorch's element-wise ops.
dim_vector broadcast_shapes(int_list a, int_list b);

/// The broadcast of three or more shapes, folded from the left.
template <class... Rest>
dim_vector broadcast_shapes(int_list a, int_list b, int_list c, const Rest&... rest) {
  dim_vector r = broadcast_shapes(broadcast_shapes(a, b), c);
  ((r = broadcast_shapes(r, int_list(rest))), ...);
  return r;
}

/// Wraps a possibly negative dim into [0, ndim); throws index_error worded as PyTorch.
/// A 0-dim tensor accepts dims -1 and 0, as in PyTorch.
std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim);
/// wrap_dim for reading a dim that must exist (size(d), stride(d)): a 0-dim tensor has none,
/// PyTorch's "Dimension specified as 0 but tensor has no dimensions".
std::int64_t wrap_existing_dim(std::int64_t dim, std::int64_t ndim);
}  // namespace strata

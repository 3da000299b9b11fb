// SPDX-License-Identifier: MIT
export module strata.error;
import strata.std;

export namespace strata {
/// Base of every exception strata throws for bad input.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
/// Sizes that do not fit together (broadcasting, view, reshape, expand).
class shape_error : public error {
 public:
  using error::error;
};
/// A dimension or element index out of range.
class index_error : public error {
 public:
  using error::error;
};
/// An element type that an operation or file cannot take.
class dtype_error : public error {
 public:
  using error::error;
};
/// A written-to tensor whose elements share memory with each other.
class overlap_error : public error {
 public:
  using error::error;
};
/// A file that cannot be read or written (missing, malformed, truncated).
class io_error : public error {
 public:
  using error::error;
};
}  // namespace strata

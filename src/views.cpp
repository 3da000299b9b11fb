// SPDX-License-Identifier: MIT
// The geometry of every view: pure functions from a layout (sizes, strides, offset) to a
// new one. Arguments are checked here, once, with PyTorch's wording.
module;
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
module strata.tensor;

namespace strata::detail {
namespace {
std::string str(std::int64_t v) { return std::to_string(v); }

std::int64_t ndim(const layout& l) { return static_cast<std::int64_t>(l.sizes.size()); }

// PyTorch raises IndexError for select on a 0-dim tensor, RuntimeError for the others.
template <class E = shape_error>
void require_dims(const layout& l, const char* op) {
  if (l.sizes.empty()) throw E(std::string(op) + "() cannot be applied to a 0-dim tensor.");
}
}  // namespace

layout contiguous_layout(int_list sizes) {
  numel_of(sizes);  // rejects negative sizes
  return {sizes.vec(), contiguous_strides(sizes), 0};
}

dim_vector infer_size(int_list shape, std::int64_t numel) {
  dim_vector out = shape.vec();
  std::optional<std::size_t> infer;
  std::int64_t known = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      if (infer) throw shape_error("only one dimension can be inferred");
      infer = d;
    } else if (shape[d] >= 0) {
      if (__builtin_mul_overflow(known, shape[d], &known))
        throw shape_error("shape '" + to_string(shape) + "' is too large");
    } else {
      throw shape_error("invalid shape dimension " + str(shape[d]));
    }
  }
  if (infer) {
    if (known == 0)
      throw shape_error("cannot reshape tensor of 0 elements into shape " + to_string(shape) +
                        " because the unspecified dimension size -1 can be any value and is ambiguous");
    if (numel % known == 0) {
      out[*infer] = numel / known;
      return out;
    }
  } else if (known == numel) {
    return out;
  }
  throw shape_error("shape '" + to_string(shape) + "' is invalid for input of size " + str(numel));
}

std::optional<dim_vector> view_strides(int_list old_sizes, int_list old_strides, int_list new_sizes) {
  if (numel_of(old_sizes) == 0) {
    if (old_sizes == new_sizes) return old_strides.vec();
    return contiguous_strides(new_sizes);
  }
  dim_vector out(new_sizes.size());
  if (old_sizes.empty()) {  // a 0-dim tensor views as any all-ones shape
    for (auto& s : out) s = 1;
    return out;
  }
  // Walk the old dims from the right in chunks that are contiguous among themselves; each
  // chunk must be covered exactly by a run of new dims, which then stride through it.
  std::int64_t view_d = static_cast<std::int64_t>(new_sizes.size()) - 1;
  std::int64_t chunk_base_stride = old_strides.back();
  std::int64_t tensor_numel = 1, view_numel = 1;
  for (std::int64_t d = static_cast<std::int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    const bool chunk_ends =
        d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
      out[view_d] = view_numel * chunk_base_stride;
      view_numel *= new_sizes[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_base_stride = old_strides[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

layout view_layout(const layout& l, int_list sizes) {
  const dim_vector target = infer_size(sizes, numel_of(l.sizes));
  auto strides = view_strides(l.sizes, l.strides, target);
  if (!strides)
    throw shape_error(
        "view size is not compatible with input tensor's size and stride (at least one dimension "
        "spans across two contiguous subspaces). Use .reshape(...) instead.");
  return {target, std::move(*strides), l.offset};
}

layout as_strided_layout(int_list sizes, int_list strides, std::int64_t offset,
                         std::int64_t storage_size) {
  if (sizes.size() != strides.size())
    throw shape_error("mismatch in length of strides and shape: sizes " + to_string(sizes) +
                      ", strides " + to_string(strides));
  for (const std::int64_t s : strides)
    if (s < 0)
      throw shape_error("as_strided: Negative strides are not supported at the moment, got strides: " +
                        to_string(strides));
  if (offset < 0)
    throw shape_error("Tensor: invalid storage offset " + str(offset));
  const std::int64_t n = numel_of(sizes);
  std::int64_t needed = 0;  // one past the last element reached
  if (n > 0) {
    needed = offset + 1;
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      std::int64_t span = 0;
      if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &span) ||
          __builtin_add_overflow(needed, span, &needed))
        throw shape_error("as_strided: sizes " + to_string(sizes) + " and strides " +
                          to_string(strides) + " overflow int64");
    }
  }
  if (needed > storage_size)
    throw shape_error("setStorage: sizes " + to_string(sizes) + ", strides " + to_string(strides) +
                      ", storage offset " + str(offset) + " requiring a storage size of " +
                      str(needed) + " elements are out of bounds for storage of size " +
                      str(storage_size) + " elements");
  return {sizes.vec(), strides.vec(), offset};
}

layout expand_layout(const layout& l, int_list sizes) {
  const std::int64_t n = static_cast<std::int64_t>(sizes.size());
  const std::int64_t have = ndim(l);
  if (n < have)
    throw shape_error("expand(" + to_string(l.sizes) + ", size=" + to_string(sizes) +
                      "): the number of sizes provided (" + str(n) +
                      ") must be greater or equal to the number of dimensions in the tensor (" +
                      str(have) + ")");
  layout out{dim_vector(sizes.size()), dim_vector(sizes.size()), l.offset};
  for (std::int64_t i = n - 1; i >= 0; --i) {
    const std::int64_t d = have - (n - i);  // the matching dim of l, if any
    std::int64_t size = d >= 0 ? l.sizes[d] : 1;
    // PyTorch's inferExpandGeometry: a new leading dim kept at size 1 strides over the dims
    // after it, except that every dim expanded from a 0-dim tensor gets stride 0, whatever
    // its size (0-dim.expand({1}) has strides [0]).
    std::int64_t stride = d >= 0 ? l.strides[d] : have == 0 ? 0 : out.sizes[i + 1] * out.strides[i + 1];
    std::int64_t target = sizes[i];
    if (target == -1) {
      if (d < 0)
        throw shape_error("The expanded size of the tensor (-1) isn't allowed in a leading, "
                          "non-existing dimension " + str(i));
      target = size;
    }
    if (target < 0)
      throw shape_error("Trying to create tensor with negative dimension " + str(target) + ": " +
                        to_string(sizes));
    if (size != target) {
      if (size != 1)
        throw shape_error("The expanded size of the tensor (" + str(target) +
                          ") must match the existing size (" + str(size) +
                          ") at non-singleton dimension " + str(i) + ".  Target sizes: " +
                          to_string(sizes) + ".  Tensor sizes: " + to_string(l.sizes));
      size = target;
      stride = 0;
    }
    out.sizes[i] = size;
    out.strides[i] = stride;
  }
  return out;
}

layout narrow_layout(const layout& l, std::int64_t dim, std::int64_t start, std::int64_t length) {
  require_dims(l, "narrow");
  dim = wrap_dim(dim, ndim(l));
  const std::int64_t size = l.sizes[dim];
  if (start != size) start = wrap_dim(start, size);  // start == size is a valid empty narrow
  if (length < 0) throw shape_error("narrow(): length must be non-negative.");
  if (start > size - length)
    throw shape_error("start (" + str(start) + ") + length (" + str(length) +
                      ") exceeds dimension size (" + str(size) + ").");
  layout out = l;
  out.sizes[dim] = length;
  out.offset += start * l.strides[dim];
  return out;
}

layout slice_layout(const layout& l, std::int64_t dim, std::optional<std::int64_t> start_arg,
                    std::optional<std::int64_t> end_arg, std::int64_t step) {
  require_dims<index_error>(l, "slice");  // as Python's t[a:b] on a 0-dim tensor
  dim = wrap_dim(dim, ndim(l));
  if (step <= 0) throw shape_error("slice step must be positive, got " + str(step));
  const std::int64_t size = l.sizes[dim];
  auto clamp = [size](std::int64_t v) {
    if (v < 0) v = v < -size ? 0 : v + size;  // written to avoid overflow at INT64_MIN
    return std::min(v, size);
  };
  const std::int64_t start = clamp(start_arg.value_or(0));
  const std::int64_t end = std::max(start, clamp(end_arg.value_or(size)));
  layout out = l;
  out.sizes[dim] = (end - start + step - 1) / step;
  out.strides[dim] = l.strides[dim] * step;
  out.offset += start * l.strides[dim];
  return out;
}

layout select_layout(const layout& l, std::int64_t dim, std::int64_t index) {
  require_dims<index_error>(l, "select");
  dim = wrap_dim(dim, ndim(l));
  const std::int64_t size = l.sizes[dim];
  if (index < -size || index >= size)
    throw index_error("select(): index " + str(index) + " out of range for tensor of size " +
                      to_string(l.sizes) + " at dimension " + str(dim));
  if (index < 0) index += size;
  layout out = l;
  out.offset += index * l.strides[dim];
  out.sizes.erase(static_cast<std::size_t>(dim));
  out.strides.erase(static_cast<std::size_t>(dim));
  return out;
}

namespace {
// Wraps every dim of dims and rejects repeats; what names the op in messages.
dim_vector wrap_unique_dims(int_list dims, std::int64_t n, const std::string& what) {
  dim_vector out(dims.size());
  small_vec<bool, 16> seen(static_cast<std::size_t>(n), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    out[i] = wrap_dim(dims[i], n);
    if (n > 0 && seen[static_cast<std::size_t>(out[i])])
      throw shape_error(what + ": repeated dim " + str(dims[i]) + " in " + to_string(dims));
    if (n > 0) seen[static_cast<std::size_t>(out[i])] = true;
  }
  return out;
}
}  // namespace

layout permute_layout(const layout& l, int_list dims) {
  const std::int64_t n = ndim(l);
  if (static_cast<std::int64_t>(dims.size()) != n)
    throw shape_error("permute(sparse_coo): number of dimensions in the tensor input does not match "
                      "the length of the desired ordering of dimensions i.e. input.dim() = " +
                      str(n) + " is not equal to len(dims) = " + str(static_cast<std::int64_t>(dims.size())));
  const dim_vector wrapped = wrap_unique_dims(dims, n, "permute()");
  layout out{dim_vector(dims.size()), dim_vector(dims.size()), l.offset};
  for (std::size_t i = 0; i < wrapped.size(); ++i) {
    out.sizes[i] = l.sizes[wrapped[i]];
    out.strides[i] = l.strides[wrapped[i]];
  }
  return out;
}

layout transpose_layout(const layout& l, std::int64_t dim0, std::int64_t dim1) {
  const std::int64_t n = ndim(l);
  dim0 = wrap_dim(dim0, n);
  dim1 = wrap_dim(dim1, n);
  layout out = l;
  if (n == 0) return out;
  std::swap(out.sizes[dim0], out.sizes[dim1]);
  std::swap(out.strides[dim0], out.strides[dim1]);
  return out;
}

layout t_layout(const layout& l) {
  if (ndim(l) > 2)
    throw shape_error("t() expects a tensor with <= 2 dimensions, but self is " + str(ndim(l)) + "D");
  return ndim(l) < 2 ? l : transpose_layout(l, 0, 1);
}

layout movedim_layout(const layout& l, int_list source, int_list destination) {
  const std::int64_t n = ndim(l);
  if (source.size() != destination.size())
    throw shape_error("movedim: Invalid source or destination dims: source (" + to_string(source) +
                      " dims) should contain the same number of dims as destination (" +
                      to_string(destination) + " dims)");
  const dim_vector src = wrap_unique_dims(source, n, "movedim: source");
  const dim_vector dst = wrap_unique_dims(destination, n, "movedim: destination");
  if (n == 0) return l;
  dim_vector order(static_cast<std::size_t>(n), -1);  // order[k]: old dim at new position k
  small_vec<bool, 16> moved(static_cast<std::size_t>(n), false);
  for (std::size_t i = 0; i < src.size(); ++i) {
    order[static_cast<std::size_t>(dst[i])] = src[i];
    moved[static_cast<std::size_t>(src[i])] = true;
  }
  std::int64_t next = 0;  // the others keep their relative order
  for (auto& o : order) {
    if (o != -1) continue;
    while (moved[static_cast<std::size_t>(next)]) ++next;
    o = next++;
  }
  return permute_layout(l, order);
}

layout diagonal_layout(const layout& l, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  const std::int64_t n = ndim(l);
  dim1 = wrap_dim(dim1, n);
  dim2 = wrap_dim(dim2, n);
  if (n < 2) throw shape_error("diagonal dimensions requires ndim larger than 1, got " + str(n));
  if (dim1 == dim2)
    throw shape_error("diagonal dimensions cannot be identical " + str(dim1) + ", " + str(dim2));
  const std::int64_t s1 = l.sizes[dim1], s2 = l.sizes[dim2];
  std::int64_t diag = 0;
  layout out = l;
  if (offset >= 0) {
    diag = offset < s2 ? std::min(s1, s2 - offset) : 0;
    if (diag > 0) out.offset += offset * l.strides[dim2];
  } else {
    diag = -offset < s1 ? std::min(s1 + offset, s2) : 0;
    if (diag > 0) out.offset -= offset * l.strides[dim1];
  }
  const std::int64_t stride = l.strides[dim1] + l.strides[dim2];
  out.sizes.erase(static_cast<std::size_t>(std::max(dim1, dim2)));
  out.strides.erase(static_cast<std::size_t>(std::max(dim1, dim2)));
  out.sizes.erase(static_cast<std::size_t>(std::min(dim1, dim2)));
  out.strides.erase(static_cast<std::size_t>(std::min(dim1, dim2)));
  out.sizes.push_back(diag);
  out.strides.push_back(stride);
  return out;
}

layout unfold_layout(const layout& l, std::int64_t dim, std::int64_t size, std::int64_t step) {
  const std::int64_t n = ndim(l);
  dim = wrap_dim(dim, n);
  const std::int64_t have = n == 0 ? 1 : l.sizes[dim];
  if (size > have)
    throw shape_error("maximum size for tensor at dimension " + str(dim) + " is " + str(have) +
                      " but size is " + str(size));
  if (size < 0) throw shape_error("size is " + str(size) + " but must be >= 0");
  if (step <= 0) throw shape_error("step is " + str(step) + " but must be > 0");
  layout out = l;
  if (n == 0) {
    out.sizes.push_back(size);
    out.strides.push_back(1);
    return out;
  }
  out.sizes[dim] = (have - size) / step + 1;
  out.strides[dim] = l.strides[dim] * step;
  out.sizes.push_back(size);
  out.strides.push_back(l.strides[dim]);
  return out;
}

layout squeeze_layout(const layout& l) {
  layout out{{}, {}, l.offset};
  for (std::size_t d = 0; d < l.sizes.size(); ++d) {
    if (l.sizes[d] == 1) continue;
    out.sizes.push_back(l.sizes[d]);
    out.strides.push_back(l.strides[d]);
  }
  return out;
}

layout squeeze_layout(const layout& l, std::int64_t dim) {
  dim = wrap_dim(dim, ndim(l));
  if (l.sizes.empty() || l.sizes[dim] != 1) return l;
  layout out = l;
  out.sizes.erase(static_cast<std::size_t>(dim));
  out.strides.erase(static_cast<std::size_t>(dim));
  return out;
}

layout unsqueeze_layout(const layout& l, std::int64_t dim) {
  dim = wrap_dim(dim, ndim(l) + 1);
  const auto d = static_cast<std::size_t>(dim);
  const std::int64_t stride = d < l.sizes.size() ? l.sizes[d] * l.strides[d] : 1;
  layout out = l;
  out.sizes.insert(d, 1);
  out.strides.insert(d, stride);
  return out;
}

dim_vector flatten_sizes(int_list sizes, std::int64_t start, std::int64_t end) {
  const std::int64_t n = static_cast<std::int64_t>(sizes.size());
  start = wrap_dim(start, n);
  end = wrap_dim(end, n);
  if (start > end) throw shape_error("flatten() has invalid args: start_dim cannot come after end_dim");
  if (n == 0) return {1};
  dim_vector out;
  for (std::int64_t d = 0; d < start; ++d) out.push_back(sizes[d]);
  std::int64_t merged = 1;
  for (std::int64_t d = start; d <= end; ++d) merged *= sizes[d];
  out.push_back(merged);
  for (std::int64_t d = end + 1; d < n; ++d) out.push_back(sizes[d]);
  return out;
}

std::int64_t element_offset(const layout& l, int_list index) {
  if (index.size() != l.sizes.size())
    throw index_error("expected " + str(static_cast<std::int64_t>(l.sizes.size())) +
                      " indices for a tensor of sizes " + to_string(l.sizes) + ", got " +
                      str(static_cast<std::int64_t>(index.size())));
  std::int64_t off = l.offset;
  for (std::size_t d = 0; d < index.size(); ++d) {
    std::int64_t i = index[d];
    const std::int64_t size = l.sizes[d];
    if (i < -size || i >= size)
      throw index_error("index " + str(i) + " is out of bounds for dimension " +
                        str(static_cast<std::int64_t>(d)) + " with size " + str(size));
    if (i < 0) i += size;
    off += i * l.strides[d];
  }
  return off;
}

void check_single_element(std::int64_t numel) {
  if (numel != 1)
    throw shape_error("a Tensor with " + std::to_string(numel) +
                      " elements cannot be converted to Scalar");
}
}  // namespace strata::detail

// SPDX-License-Identifier: MIT
// Printing in PyTorch's format, .npy files and .npz archives of them.
export module strata.io;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.tensor;
import strata.loop;
import strata.expr;

namespace strata::detail {
/// Element values gathered for printing: integers (and bools) exactly, floats as double,
/// complex as two doubles.
struct print_values {
  dtype type = dtype::float32;
  std::vector<std::int64_t> ints;
  std::vector<double> re, im;
};
/// Storage offsets of the elements PyTorch would show (all, or 3 at each end per dim).
std::vector<std::int64_t> printed_offsets(const layout& l);
/// torch's repr of a tensor whose shown elements are v.
std::string format_tensor(const print_values& v, int_list sizes);

/// What the header of a .npy file says.
struct npy_header {
  std::string descr;
  bool fortran_order = false;
  dim_vector shape;
};
/// Reads and checks the magic and header of a .npy stream (throws io_error).
npy_header read_npy_header(std::istream& in, const std::string& path);
/// Writes the magic and header of a .npy file.
void write_npy_header(std::ostream& out, std::string_view descr, int_list shape);
/// NumPy's descr ("<f4", "|b1", ...) of a dtype; throws dtype_error when NumPy has none.
std::string npy_descr(dtype d);
/// Checks that descr is d's type in any byte order (true: big-endian data); dtype_error for
/// another strata dtype's descr, io_error for any other descr.
bool check_npy_descr(const std::string& descr, dtype d, const std::string& path);
/// The strata dtype of a NumPy descr in any byte order (io_error for one strata does not read).
dtype npy_dtype(const std::string& descr, const std::string& path);
/// The data bytes h claims for items of itemsize bytes (io_error: overflow, or more than `in` has left).
std::size_t npy_data_bytes(const npy_header& h, std::size_t itemsize, std::istream& in,
                           const std::string& path);
/// Reads exactly n bytes of element data or throws io_error naming path.
void read_npy_data(std::istream& in, char* dst, std::size_t n, const std::string& path);
/// Reverses the bytes of each of count words of `width` bytes.
void byteswap_words(char* p, std::size_t count, std::size_t width) noexcept;
/// Opens path for reading or writing, throwing io_error when it cannot.
std::ifstream open_in(const std::string& path);
std::ofstream open_out(const std::string& path);

/// The entries of a .npz file of stored or deflated .npy entries (src/npz.cpp), checked when opened.
class npz_reader {
 public:
  explicit npz_reader(const std::string& path);
  ~npz_reader();
  npz_reader(const npz_reader&) = delete;
  npz_reader& operator=(const npz_reader&) = delete;
  /// The number of entries.
  std::size_t size() const noexcept;
  /// Entry i's name, without ".npy".
  const std::string& name(std::size_t i) const;
  /// A stream over entry i's bytes (the previous one's is reused).
  std::istream& open(std::size_t i);

 private:
  struct impl;
  std::shared_ptr<impl> impl_;
};
/// Builds a .npz file: add() gives a stream for each entry's .npy bytes, finish() writes the file
/// (each entry deflated when compressed).
class npz_writer {
 public:
  explicit npz_writer(const std::string& path, bool compressed = false);
  ~npz_writer();
  npz_writer(const npz_writer&) = delete;
  npz_writer& operator=(const npz_writer&) = delete;
  /// The stream entry `name` (".npy" appended) is written to.
  std::ostream& add(const std::string& name);
  /// Writes the archive.
  void finish();

 private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

/// Writes t (any strides; elements in logical order) as .npy bytes.
template <element T>
void write_npy(std::ostream& out, const Tensor<T>& t, const std::string& path) {
  detail::write_npy_header(out, detail::npy_descr(dtype_v<T>), t.sizes());
  const Tensor<T> c = t.contiguous();
  out.write(reinterpret_cast<const char*>(c.data_ptr()),
            static_cast<std::streamsize>(c.numel() * static_cast<std::int64_t>(sizeof(T))));
  if (!out) throw io_error("save_npy: failed writing '" + path + "'");
}

/// Reads .npy bytes of element type T from in (C or Fortran order, either byte order).
template <element T>
Tensor<T> read_npy(std::istream& in, const std::string& path) {
  const detail::npy_header h = detail::read_npy_header(in, path);
  const bool swap = detail::check_npy_descr(h.descr, dtype_v<T>, path);
  // Checked against overflow and against the bytes the file holds before anything is allocated.
  const std::size_t nbytes = detail::npy_data_bytes(h, sizeof(T), in, path);
  const std::int64_t n = numel_of(h.shape);  // cannot overflow: npy_data_bytes checked it
  dim_vector strides = contiguous_strides(h.shape);
  if (h.fortran_order) {  // column-major: the first dim varies fastest
    std::int64_t running = 1;
    for (std::size_t d = 0; d < h.shape.size(); ++d) {
      strides[d] = running;
      running *= h.shape[d] > 1 ? h.shape[d] : 1;
    }
  }
  storage s = storage::allocate<T>(n, init::uninitialized);
  if constexpr (std::is_same_v<T, bool>) {
    // Any byte other than 0 or 1 is not a valid bool: read bytes, then convert.
    std::vector<char> bytes(nbytes);
    detail::read_npy_data(in, bytes.data(), nbytes, path);
    bool* p = static_cast<bool*>(s.data());
    for (std::size_t i = 0; i < nbytes; ++i) p[i] = bytes[i] != 0;
  } else {
    char* p = static_cast<char*>(s.data());
    detail::read_npy_data(in, p, nbytes, path);
    if (swap) {
      constexpr std::size_t width = detail::is_complex_v<T> ? sizeof(T) / 2 : sizeof(T);
      detail::byteswap_words(p, nbytes / width, width);
    }
  }
  return Tensor<T>(std::move(s), h.shape, strides, 0);
}

/// One tensor of a .safetensors file: its dtype (none when strata has no such dtype, as U16),
/// the dtype's name in the file, sizes and byte range in the data buffer.
struct safetensors_entry {
  std::string name, dtype_name;
  std::optional<dtype> type;
  std::vector<std::int64_t> sizes;
  std::uint64_t begin = 0, end = 0;
};
/// A .safetensors file mapped into memory (src/safetensors.cpp), its header checked when opened.
class safetensors_reader {
 public:
  explicit safetensors_reader(const std::string& path);
  /// The tensors, in the order of their data in the file.
  const std::vector<safetensors_entry>& entries() const noexcept;
  /// The header's "__metadata__" pairs.
  const std::vector<std::pair<std::string, std::string>>& metadata() const noexcept;
  /// The index of the tensor called name (index_error when there is none).
  std::size_t find(const std::string& name) const;
  /// The first byte of entry i's data, inside the mapping.
  const void* data(std::size_t i) const;
  /// What keeps the mapping alive: views of it hold a copy.
  std::shared_ptr<void> owner() const;
  /// The file's path.
  const std::string& path() const noexcept;

 private:
  struct impl;
  std::shared_ptr<impl> impl_;
};
/// A tensor to write: its bytes, contiguous.
struct safetensors_blob {
  std::string name;
  dtype type;
  std::vector<std::int64_t> sizes;
  const void* data;
  std::size_t nbytes;
};
/// Writes a .safetensors file of blobs and metadata (src/safetensors.cpp).
void write_safetensors(const std::string& path, std::vector<safetensors_blob> blobs,
                       const std::vector<std::pair<std::string, std::string>>& metadata);
/// Throws dtype_error when T has no safetensors dtype (float128, complex128).
void check_safetensors_dtype(dtype t);
}  // namespace strata::detail

export namespace strata {
/// torch's repr of t: "tensor([[2, 4, 6],\n        [5, 7, 9]])", with dtype and summary.
template <element T>
std::string to_string(const Tensor<T>& t) {
  detail::print_values v;
  v.type = dtype_v<T>;
  const T* base = static_cast<const T*>(t.storage().data());
  for (const std::int64_t off : detail::printed_offsets({t.sizes().vec(), t.strides().vec(), t.storage_offset()})) {
    const T& x = base[off];
    if constexpr (detail::is_complex_v<T>) {
      v.re.push_back(static_cast<double>(x.real()));
      v.im.push_back(static_cast<double>(x.imag()));
    } else if constexpr (std::is_integral_v<T>) {
      v.ints.push_back(static_cast<std::int64_t>(x));
    } else {
      v.re.push_back(detail::convert<double>(x));
    }
  }
  return detail::format_tensor(v, t.sizes());
}

/// Prints to_string(t).
template <element T>
std::ostream& operator<<(std::ostream& os, const Tensor<T>& t) { return os << to_string(t); }
/// torch's repr of an expression's value (printing evaluates it, as PyTorch prints).
template <expression E>
std::string to_string(const E& e) { return to_string(e.eval()); }
/// Prints an expression's value (evaluating it).
template <expression E>
std::ostream& operator<<(std::ostream& os, const E& e) { return os << to_string(e.eval()); }

/// Writes t (any strides; elements in logical order) as a .npy file.
template <element T>
void save_npy(const std::string& path, const Tensor<T>& t) {
  std::ofstream out = detail::open_out(path);
  detail::write_npy(out, t, path);
}

/// What a .npy file holds, read from its header alone.
struct npy_info {
  strata::dtype dtype;         ///< the element type (any byte order)
  std::vector<std::int64_t> sizes;  ///< the array's sizes
  bool fortran_order = false;  ///< column-major data
};
/// The dtype, sizes and order of a .npy file, without reading its data (so a program can
/// choose the T of load_npy<T>); io_error for a malformed file or a dtype strata does not read.
inline npy_info npy_header(const std::string& path) {
  std::ifstream in = detail::open_in(path);
  const detail::npy_header h = detail::read_npy_header(in, path);
  return npy_info{detail::npy_dtype(h.descr, path), std::vector<std::int64_t>(int_list(h.shape)), h.fortran_order};
}

/// Writes an expression's result as a .npy file (evaluating it).
template <expression E>
void save_npy(const std::string& path, const E& e) { save_npy(path, e.eval()); }

/// Reads a .npy file of element type T (C or Fortran order, either byte order); throws dtype_error
/// for a file of another dtype, io_error for a malformed or truncated one (before allocating).
template <element T>
Tensor<T> load_npy(const std::string& path) {
  std::ifstream in = detail::open_in(path);
  return detail::read_npy<T>(in, path);
}

/// Writes named tensors as a .npz file (np.savez's format: stored .npy entries), which
/// np.load and torch read; names are the keys (".npy" is added).
template <element T>
void save_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor<T>>>& arrays) {
  detail::npz_writer w(path);
  for (const auto& [name, t] : arrays) detail::write_npy(w.add(name), t, path);
  w.finish();
}
/// save_npz with each entry deflated (np.savez_compressed's format).
template <element T>
void save_npz_compressed(const std::string& path, const std::vector<std::pair<std::string, Tensor<T>>>& arrays) {
  detail::npz_writer w(path, true);
  for (const auto& [name, t] : arrays) detail::write_npy(w.add(name), t, path);
  w.finish();
}
/// A .npz archive written entry by entry, with arrays of any dtypes (np.savez of mixed arrays);
/// nothing reaches the file before finish().
class NpzWriter {
 public:
  /// An empty archive to be written to path; compressed: each entry deflated (np.savez_compressed).
  explicit NpzWriter(const std::string& path, bool compressed = false) : writer_(path, compressed), path_(path) {}
  /// Adds t (any strides) as entry name (".npy" is added).
  template <element T>
  void add(const std::string& name, const Tensor<T>& t) {
    detail::write_npy(writer_.add(name), t, path_);
  }
  /// Writes the archive.
  void finish() { writer_.finish(); }

 private:
  detail::npz_writer writer_;
  std::string path_;
};
/// A .npz archive open for reading (np.load of a .npz), checked when opened: its entries'
/// names, and each entry's dtype and array read on demand.
class NpzFile {
 public:
  /// Opens and checks path (io_error for a malformed or truncated archive).
  explicit NpzFile(const std::string& path) : reader_(path), path_(path) {}
  /// The number of entries.
  std::size_t size() const noexcept { return reader_.size(); }
  /// Entry i's name (without ".npy").
  const std::string& name(std::size_t i) const { return reader_.name(i); }
  /// Entry i's dtype, from its header.
  strata::dtype dtype(std::size_t i) {
    return detail::npy_dtype(detail::read_npy_header(reader_.open(i), entry(i)).descr, entry(i));
  }
  /// Entry i as a tensor of element type T (dtype_error for another dtype).
  template <element T>
  Tensor<T> read(std::size_t i) {
    return detail::read_npy<T>(reader_.open(i), entry(i));
  }

 private:
  std::string entry(std::size_t i) const { return path_ + "/" + name(i); }
  detail::npz_reader reader_;
  std::string path_;
};

/// A .safetensors file (Hugging Face's format) opened for reading: mapped into memory and its
/// header checked (io_error for a malformed file); each tensor is a view of the file's pages,
/// copied only when its data is not aligned for its type (or is bool). The mapping is private:
/// writing into a tensor never changes the file. Tensors keep the mapping alive.
class SafetensorsFile {
 public:
  /// Maps path and checks its header.
  explicit SafetensorsFile(const std::string& path) : reader_(path) {}
  /// The number of tensors.
  std::size_t size() const noexcept { return reader_.entries().size(); }
  /// The tensors' names, in the order of their data in the file (safe_open's keys()).
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& e : reader_.entries()) out.push_back(e.name);
    return out;
  }
  /// The dtype of tensor name (dtype_error when strata has no such dtype, as U16).
  strata::dtype dtype(const std::string& name) const { return type_of(reader_.entries()[reader_.find(name)]); }
  /// The sizes of tensor name.
  std::vector<std::int64_t> sizes(const std::string& name) const { return reader_.entries()[reader_.find(name)].sizes; }
  /// Tensor name as a Tensor<T> (get_tensor); dtype_error when it holds another dtype.
  template <element T>
  Tensor<T> get(const std::string& name) const {
    const std::size_t i = reader_.find(name);
    const detail::safetensors_entry& e = reader_.entries()[i];
    if (type_of(e) != dtype_v<T>)
      throw dtype_error("safetensors: tensor '" + name + "' of '" + reader_.path() + "' holds " + e.dtype_name +
                        ", not " + std::string(dtype_name(dtype_v<T>)));
    const void* p = reader_.data(i);  // a T* only once it is known to be aligned for T
    std::int64_t n = 1;
    for (const std::int64_t s : e.sizes) n *= s;
    std::vector<std::int64_t> strides(e.sizes.size(), 1);
    for (std::size_t d = e.sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<std::int64_t>(e.sizes[d], 1);
    if constexpr (!std::is_same_v<T, bool>) {
      if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0)
        return Tensor<T>(storage::borrow(static_cast<T*>(const_cast<void*>(p)), n, reader_.owner()), e.sizes, strides, 0);
    }
    Tensor<T> t = empty<T>(e.sizes);
    if constexpr (std::is_same_v<T, bool>) {
      const auto* bytes = static_cast<const unsigned char*>(p);
      for (std::int64_t k = 0; k < n; ++k) t.data_ptr()[k] = bytes[k] != 0;
    } else {
      std::memcpy(static_cast<void*>(t.data_ptr()), p, static_cast<std::size_t>(n) * sizeof(T));
    }
    return t;
  }
  /// The header's "__metadata__" (string pairs, in the file's order).
  const std::vector<std::pair<std::string, std::string>>& metadata() const noexcept { return reader_.metadata(); }

 private:
  strata::dtype type_of(const detail::safetensors_entry& e) const {
    if (!e.type)
      throw dtype_error("safetensors: tensor '" + e.name + "' of '" + reader_.path() + "' holds " + e.dtype_name +
                        ", which strata has no dtype for");
    return *e.type;
  }
  detail::safetensors_reader reader_;
};

/// Writes tensors of any dtypes as a .safetensors file (safetensors' save_file): added one by
/// one (any strides; written in logical order), written by finish() with string metadata.
class SafetensorsWriter {
 public:
  /// An empty file to be written to path.
  explicit SafetensorsWriter(const std::string& path) : path_(path) {}
  /// Adds t as tensor name (dtype_error for float128 and complex128, which the format lacks).
  template <element T>
  void add(const std::string& name, const Tensor<T>& t) {
    detail::check_safetensors_dtype(dtype_v<T>);
    const Tensor<T> c = t.detach().contiguous();
    keep_.push_back(c.storage());
    blobs_.push_back({name, dtype_v<T>, std::vector<std::int64_t>(c.sizes().begin(), c.sizes().end()),
                      static_cast<const void*>(c.data_ptr()),
                      static_cast<std::size_t>(c.numel()) * sizeof(T)});
  }
  /// Writes the file, with metadata as its "__metadata__".
  void finish(const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
    detail::write_safetensors(path_, blobs_, metadata);
  }

 private:
  std::string path_;
  std::vector<detail::safetensors_blob> blobs_;
  std::vector<storage> keep_;
};
/// Writes named tensors as a .safetensors file (safetensors' save_file), with string metadata.
template <element T>
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor<T>>>& tensors,
                      const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  SafetensorsWriter w(path);
  for (const auto& [name, t] : tensors) w.add(name, t);
  w.finish(metadata);
}
/// Every tensor of a .safetensors file as Tensor<T>, in the file's order (safetensors'
/// load_file); views of the mapped file where aligned. dtype_error for a tensor of another dtype.
template <element T>
std::vector<std::pair<std::string, Tensor<T>>> load_safetensors(const std::string& path) {
  const SafetensorsFile f(path);
  std::vector<std::pair<std::string, Tensor<T>>> out;
  for (const std::string& name : f.keys()) out.emplace_back(name, f.template get<T>(name));
  return out;
}

/// Reads every array of a .npz file written by np.savez or np.savez_compressed (stored or
/// deflated entries, ZIP64 or not), in the archive's order, as tensors of element type T;
/// dtype_error for an entry of another dtype, io_error for a malformed or truncated archive.
template <element T>
std::vector<std::pair<std::string, Tensor<T>>> load_npz(const std::string& path) {
  detail::npz_reader r(path);
  std::vector<std::pair<std::string, Tensor<T>>> out;
  for (std::size_t i = 0; i < r.size(); ++i) out.emplace_back(r.name(i), detail::read_npy<T>(r.open(i), path + "/" + r.name(i)));
  return out;
}
}  // namespace strata

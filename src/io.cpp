// SPDX-License-Identifier: MIT
// torch's repr (torch/_tensor_str.py: precision 4, linewidth 80, threshold 1000, edgeitems 3)
// and the .npy format (NumPy's format.py: magic, version, header dict, raw data).
module;
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <istream>
#include <iterator>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>
module strata.io;

namespace strata::detail {
namespace {
constexpr std::int64_t threshold = 1000, edgeitems = 3, linewidth = 80;  // torch.set_printoptions defaults

bool summarized(int_list sizes) { return numel_of(sizes) > threshold; }

// The indices of dim d that are shown: all, or edgeitems at each end.
std::vector<std::int64_t> shown(std::int64_t size, bool summarize) {
  std::vector<std::int64_t> idx;
  if (summarize && size > 2 * edgeitems) {
    for (std::int64_t i = 0; i < edgeitems; ++i) idx.push_back(i);
    for (std::int64_t i = size - edgeitems; i < size; ++i) idx.push_back(i);
  } else {
    for (std::int64_t i = 0; i < size; ++i) idx.push_back(i);
  }
  return idx;
}

std::string printf_double(const char* fmt, double v) {
  if (std::isnan(v)) return "nan";  // Python never prints a sign on NaN
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// torch's _Formatter for one real-valued set of shown elements.
class formatter {
 public:
  formatter(const print_values& v, const std::vector<double>& vals) : floating_(is_floating(v.type)) {
    if (!floating_) {
      for (const std::int64_t x : v.ints) width_ = std::max(width_, int_str(v.type, x).size());
      return;
    }
    std::vector<double> finite;
    for (const double x : vals)
      if (std::isfinite(x) && x != 0) finite.push_back(x);
    if (finite.empty()) return;
    double lo = std::abs(finite[0]), hi = lo;
    for (const double x : finite) {
      lo = std::min(lo, std::abs(x));
      hi = std::max(hi, std::abs(x));
      if (x != std::ceil(x)) int_mode_ = false;
    }
    if (int_mode_) {
      sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8;
      for (const double x : finite)
        width_ = std::max(width_, sci_mode_ ? printf_double("%.4e", x).size()
                                            : printf_double("%.0f", x).size() + 1);
    } else {
      sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4;
      for (const double x : finite)
        width_ = std::max(width_, printf_double(sci_mode_ ? "%.4e" : "%.4f", x).size());
    }
  }

  std::size_t width() const { return width_; }

  std::string format(double x) const {
    std::string s;
    if (sci_mode_) {
      s = printf_double("%.4e", x);
    } else if (int_mode_) {
      s = printf_double("%.0f", x);
      if (std::isfinite(x)) s += ".";
    } else {
      s = printf_double("%.4f", x);
    }
    return pad(s);
  }
  std::string format(dtype type, std::int64_t x) const { return pad(int_str(type, x)); }

 private:
  static bool is_floating(dtype t) { return t != dtype::bool_ && category_of(t) != category::integral; }
  static std::string int_str(dtype type, std::int64_t x) {
    if (type == dtype::bool_) return x ? "True" : "False";
    return std::to_string(x);
  }
  std::string pad(const std::string& s) const {
    return s.size() < width_ ? std::string(width_ - s.size(), ' ') + s : s;
  }

  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  std::size_t width_ = 1;
};

struct printer {
  const print_values& v;
  int_list sizes;
  bool summarize;
  formatter real;
  formatter imag;
  bool complex;
  std::size_t next = 0;  // the next shown element, in row-major order of the shown ones

  std::string scalar() {
    const std::size_t i = next++;
    if (!complex) return v.ints.empty() && !v.re.empty() ? real.format(v.re[i]) : real.format(v.type, v.ints[i]);
    std::string re = real.format(v.re[i]);
    std::string im = imag.format(v.im[i]) + "j";
    im.erase(0, im.find_first_not_of(' '));
    return re + (im[0] == '+' || im[0] == '-' ? "" : "+") + im;
  }

  std::string vector(std::int64_t size, std::int64_t indent) {
    std::size_t element = real.width() + 2;
    if (complex) element += imag.width() + 1;
    const auto per_line = std::max<std::int64_t>(1, (linewidth - indent) / static_cast<std::int64_t>(element));
    std::vector<std::string> data;
    const bool cut = summarize && size > 2 * edgeitems;
    for (std::int64_t k = 0; k < (cut ? 2 * edgeitems : size); ++k) {
      if (cut && k == edgeitems) data.push_back(" ...");
      data.push_back(scalar());
    }
    std::string out = "[";
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (i) out += static_cast<std::int64_t>(i) % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : ", ";
      out += data[i];
    }
    return out + "]";
  }

  std::string tensor(std::size_t d, std::int64_t indent) {
    const std::size_t ndim = sizes.size();
    if (ndim == 0) return scalar();
    if (d + 1 == ndim) return vector(sizes[d], indent);
    const std::int64_t size = sizes[d];
    const bool cut = summarize && size > 2 * edgeitems;
    std::vector<std::string> slices;
    for (std::int64_t k = 0; k < (cut ? 2 * edgeitems : size); ++k) {
      if (cut && k == edgeitems) slices.push_back("...");
      slices.push_back(tensor(d + 1, indent + 1));
    }
    const std::string sep = "," + std::string(ndim - d - 1, '\n') + std::string(indent + 1, ' ');
    std::string out = "[";
    for (std::size_t i = 0; i < slices.size(); ++i) out += (i ? sep : "") + slices[i];
    return out + "]";
  }
};

std::string dtype_suffix(dtype t) {
  return t == dtype::float128 ? "dtype=strata.float128" : "dtype=torch." + std::string(dtype_name(t));
}
}  // namespace

std::vector<std::int64_t> printed_offsets(const layout& l) {
  std::vector<std::int64_t> out;
  if (numel_of(l.sizes) == 0) return out;
  const bool summarize = summarized(l.sizes);
  std::vector<std::vector<std::int64_t>> idx;
  for (const std::int64_t s : l.sizes) idx.push_back(shown(s, summarize));
  std::vector<std::size_t> pos(l.sizes.size(), 0);
  for (;;) {
    std::int64_t off = l.offset;
    for (std::size_t d = 0; d < pos.size(); ++d) off += idx[d][pos[d]] * l.strides[d];
    out.push_back(off);
    std::size_t d = pos.size();
    for (;;) {
      if (d == 0) return out;
      --d;
      if (++pos[d] < idx[d].size()) break;
      pos[d] = 0;
    }
  }
}

std::string format_tensor(const print_values& v, int_list sizes) {
  constexpr std::int64_t indent = 7;  // strlen("tensor(")
  const bool complex = is_complex(v.type);
  const bool default_type = v.type == dtype::float32 || v.type == dtype::complex64 ||
                            v.type == dtype::int64 || v.type == dtype::bool_;
  std::vector<std::string> suffixes;
  std::string body;
  if (numel_of(sizes) == 0) {
    if (sizes.size() != 1) {
      std::string tuple = "(";
      for (std::size_t d = 0; d < sizes.size(); ++d) tuple += (d ? ", " : "") + std::to_string(sizes[d]);
      suffixes.push_back("size=" + tuple + ")");
    }
    if (v.type != dtype::float32) suffixes.push_back(dtype_suffix(v.type));
    body = "[]";
  } else {
    if (!default_type) suffixes.push_back(dtype_suffix(v.type));
    printer p{v, sizes, summarized(sizes), formatter(v, v.re), formatter(v, v.im), complex};
    body = p.tensor(0, indent);
  }
  std::string out = "tensor(" + body;
  // As torch: the length of the last line plus 2 (npos + 1 wraps to 0 for one line).
  std::int64_t last_line = static_cast<std::int64_t>(out.size() - (out.rfind('\n') + 1)) + 2;
  for (const std::string& s : suffixes) {
    const auto len = static_cast<std::int64_t>(s.size());
    if (last_line + len + 2 > linewidth) {
      out += ",\n" + std::string(indent, ' ') + s;
      last_line = indent + len;
    } else {
      out += ", " + s;
      last_line += len + 2;
    }
  }
  return out + ")";
}

// ---- .npy ----
namespace {
// NumPy 2's NPY_MAXDIMS (NumPy 1 allows 32); strata's expressions take up to 64 dims.
constexpr std::size_t max_npy_dims = 64;

// The descr of each dtype NumPy and strata share (little-endian, or '|' for single bytes).
struct npy_code {
  dtype type;
  const char* descr;
};
constexpr npy_code npy_codes[] = {
    {dtype::bool_, "|b1"},  {dtype::uint8, "|u1"},   {dtype::int8, "|i1"},      {dtype::int16, "<i2"},
    {dtype::int32, "<i4"},  {dtype::int64, "<i8"},   {dtype::float16, "<f2"},   {dtype::float32, "<f4"},
    {dtype::float64, "<f8"}, {dtype::complex64, "<c8"}, {dtype::complex128, "<c16"}};

[[noreturn]] void malformed(const std::string& path, const std::string& why) {
  throw io_error("load_npy: '" + path + "' is not a valid .npy file: " + why);
}

// The bytes from in's position to its end (seeks to the end and back). Every size a header
// claims is checked against this before anything is allocated for it.
std::uint64_t bytes_left(std::istream& in, const std::string& path) {
  const std::streampos here = in.tellg();
  if (here != std::streampos(-1) && in.seekg(0, std::ios::end)) {
    const std::streampos end = in.tellg();
    if (end != std::streampos(-1) && end >= here && in.seekg(here))
      return static_cast<std::uint64_t>(end - here);
  }
  throw io_error("load_npy: cannot tell the size of '" + path + "' (load_npy reads seekable files only)");
}

// A cursor over the header's Python dict literal.
struct dict_parser {
  std::string_view s;
  const std::string& path;
  std::size_t i = 0;

  void skip() { while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i; }
  bool eat(char c) {
    skip();
    if (i < s.size() && s[i] == c) { ++i; return true; }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) malformed(path, std::string("expected '") + c + "' in header");
  }
  std::string quoted() {
    skip();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) malformed(path, "expected a string in header");
    const char q = s[i++];
    const std::size_t end = s.find(q, i);
    if (end == std::string_view::npos) malformed(path, "unterminated string in header");
    std::string out(s.substr(i, end - i));
    i = end + 1;
    return out;
  }
  bool boolean() {
    skip();
    if (s.substr(i, 4) == "True") { i += 4; return true; }
    if (s.substr(i, 5) == "False") { i += 5; return false; }
    malformed(path, "expected True or False in header");
  }
  // A Python int literal for a dim: digits only (no sign), no leading zero unless all zeros.
  std::int64_t dim() {
    skip();
    const std::size_t start = i;
    std::int64_t v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
        malformed(path, "shape entry overflows int64");
      ++i;
    }
    if (i == start) malformed(path, "expected a non-negative integer in shape");
    if (s[start] == '0' && v != 0) malformed(path, "shape entry with a leading zero");
    return v;
  }
  // A Python tuple of dims: (), (3,), (2, 3) or (2, 3,). (3) is the int 3, which NumPy refuses.
  dim_vector tuple() {
    expect('(');
    dim_vector out;
    bool comma = false;
    while (!eat(')')) {
      if (out.size() == max_npy_dims)
        malformed(path, "shape has more than " + std::to_string(max_npy_dims) + " dims");
      out.push_back(dim());
      comma = eat(',');
      if (!comma) { expect(')'); break; }
    }
    if (out.size() == 1 && !comma) malformed(path, "shape is not a tuple (a 1-tuple is written (n,))");
    return out;
  }
};
}  // namespace

std::ifstream open_in(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io_error("load_npy: cannot open '" + path + "'");
  return in;
}

std::ofstream open_out(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw io_error("save_npy: cannot open '" + path + "' for writing");
  return out;
}

npy_header read_npy_header(std::istream& in, const std::string& path) {
  char magic[8];
  if (!in.read(magic, 8) || std::string_view(magic, 6) != "\x93NUMPY") malformed(path, "bad magic string");
  const int major = static_cast<unsigned char>(magic[6]);
  const int minor = static_cast<unsigned char>(magic[7]);
  if (minor != 0)  // as NumPy: versions 1.0, 2.0 and 3.0 only
    malformed(path, "unsupported format version " + std::to_string(major) + "." + std::to_string(minor));
  std::uint32_t len = 0;
  unsigned char lb[4] = {0, 0, 0, 0};
  if (major == 1) {
    if (!in.read(reinterpret_cast<char*>(lb), 2)) malformed(path, "truncated header");
    len = lb[0] | (lb[1] << 8);
  } else if (major == 2 || major == 3) {
    if (!in.read(reinterpret_cast<char*>(lb), 4)) malformed(path, "truncated header");
    len = lb[0] | (lb[1] << 8) | (lb[2] << 16) | (static_cast<std::uint32_t>(lb[3]) << 24);
  } else {
    malformed(path, "unsupported format version " + std::to_string(major));
  }
  if (len > (1u << 20)) malformed(path, "header of " + std::to_string(len) + " bytes is too large");
  if (len > bytes_left(in, path))
    malformed(path, "header of " + std::to_string(len) + " bytes runs past the end of the file");
  std::string text(len, '\0');
  if (!in.read(text.data(), len)) malformed(path, "truncated header");

  npy_header h;
  dict_parser p{text, path};
  bool have_descr = false, have_order = false, have_shape = false;
  p.expect('{');
  while (!p.eat('}')) {
    const std::string key = p.quoted();
    p.expect(':');
    bool* have = key == "descr" ? &have_descr : key == "fortran_order" ? &have_order
               : key == "shape" ? &have_shape : nullptr;
    if (!have) malformed(path, "unexpected key '" + key + "' in header");
    // NumPy's literal_eval would keep the last of duplicate keys; NumPy never writes them, and
    // a header with two shapes is ambiguous, so it is refused.
    if (*have) malformed(path, "duplicate key '" + key + "' in header");
    *have = true;
    if (key == "descr") h.descr = p.quoted();
    else if (key == "fortran_order") h.fortran_order = p.boolean();
    else h.shape = p.tuple();
    if (!p.eat(',')) { p.expect('}'); break; }
  }
  p.skip();  // NumPy pads with spaces and a newline; anything else after the dict is garbage
  if (p.i != text.size()) malformed(path, "unexpected characters after the header dict");
  if (!have_descr || !have_order || !have_shape) malformed(path, "header lacks descr, fortran_order or shape");
  return h;
}

void write_npy_header(std::ostream& out, std::string_view descr, int_list shape) {
  std::string tuple;
  for (std::size_t d = 0; d < shape.size(); ++d) tuple += (d ? ", " : "") + std::to_string(shape[d]);
  if (shape.size() == 1) tuple += ",";  // Python's one-element tuple: (3,)
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" +
                     tuple + "), }";
  // Pad with spaces and a newline so that the data starts on a 64-byte boundary.
  std::size_t prefix = 10;
  if (dict.size() + 1 + prefix > 65535) prefix = 12;
  const std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  const auto len = static_cast<std::uint32_t>(dict.size());
  out.write("\x93NUMPY", 6);
  if (prefix == 10) {
    const char v[4] = {1, 0, static_cast<char>(len & 0xFF), static_cast<char>(len >> 8)};
    out.write(v, 4);
  } else {
    const char v[6] = {2, 0, static_cast<char>(len & 0xFF), static_cast<char>((len >> 8) & 0xFF),
                       static_cast<char>((len >> 16) & 0xFF), static_cast<char>(len >> 24)};
    out.write(v, 6);
  }
  out.write(dict.data(), static_cast<std::streamsize>(dict.size()));
}

std::string npy_descr(dtype d) {
  for (const npy_code& c : npy_codes)
    if (c.type == d) return c.descr;
  throw dtype_error("save_npy/load_npy: NumPy has no " + std::string(dtype_name(d)) + " dtype");
}

namespace {
// A descr's type code after its byte order ('<', '>', '=' native, '|' not applicable); empty
// when it has no byte order.
std::string_view descr_code(const std::string& descr) {
  const bool ordered = descr.size() >= 2 && std::string_view("<>=|").find(descr[0]) != std::string_view::npos;
  return ordered ? std::string_view(descr).substr(1) : std::string_view();
}
}  // namespace

bool check_npy_descr(const std::string& descr, dtype d, const std::string& path) {
  const std::string want = npy_descr(d);
  const std::string_view code = descr_code(descr);
  const bool ordered = !code.empty();
  if (ordered && code == std::string_view(want).substr(1)) return descr[0] == '>' && itemsize(d) > 1;
  // Another dtype strata reads: the caller asked for the wrong type (dtype_error). Anything
  // else is a descr load_npy cannot read as any type: a malformed or unsupported file (io_error).
  const bool known = ordered && std::any_of(std::begin(npy_codes), std::end(npy_codes),
                                            [&](const npy_code& c) { return code == c.descr + 1; });
  const std::string what = "load_npy: '" + path + "' holds dtype '" + descr + "', expected '" + want +
                           "' (" + std::string(dtype_name(d)) + ")";
  if (known) throw dtype_error(what);
  throw io_error(what + ", and load_npy reads no such dtype");
}

dtype npy_dtype(const std::string& descr, const std::string& path) {
  const std::string_view code = descr_code(descr);
  for (const npy_code& c : npy_codes)
    if (!code.empty() && code == c.descr + 1) return c.type;
  throw io_error("npy_header: '" + path + "' holds dtype '" + descr + "', which strata reads as no dtype");
}

std::size_t npy_data_bytes(const npy_header& h, std::size_t itemsize, std::istream& in,
                           const std::string& path) {
  // As NumPy ("array is too big"): the extents, a 0 counted as 1, times the item size must fit
  // in int64, so that numel, every stride and every byte offset do, even for an empty array.
  auto extent = static_cast<std::int64_t>(itemsize);
  std::int64_t bytes = extent;
  for (const std::int64_t d : h.shape) {
    if (d < 0) malformed(path, "negative dim in shape " + to_string(h.shape));
    if (__builtin_mul_overflow(extent, d > 1 ? d : 1, &extent))
      malformed(path, "shape " + to_string(h.shape) + " is too large");
    bytes *= d;  // at most extent: cannot overflow
  }
  // Compared with what the file holds before anything is allocated. Bytes after the data are
  // ignored, as np.load ignores them (it reads the shape's worth and never looks further).
  const std::uint64_t left = bytes_left(in, path);
  if (static_cast<std::uint64_t>(bytes) > left)
    throw io_error("load_npy: '" + path + "' is truncated: its header claims " + std::to_string(bytes) +
                   " bytes of data, the file holds " + std::to_string(left));
  return static_cast<std::size_t>(bytes);
}

void read_npy_data(std::istream& in, char* dst, std::size_t n, const std::string& path) {
  in.read(dst, static_cast<std::streamsize>(n));
  if (static_cast<std::size_t>(in.gcount()) != n)
    throw io_error("load_npy: '" + path + "' is truncated: expected " + std::to_string(n) +
                   " bytes of data, found " + std::to_string(in.gcount()));
}

void byteswap_words(char* p, std::size_t count, std::size_t width) noexcept {
  for (std::size_t k = 0; k < count; ++k) std::reverse(p + k * width, p + (k + 1) * width);
}
}  // namespace strata::detail

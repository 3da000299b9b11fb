// SPDX-License-Identifier: MIT
// load_npy against thousands of corrupted .npy files: random bytes, truncation, absurd and
// overflowing shapes, bad dtype strings, bad fortran_order, broken header dicts and prefixes;
// at the end, corrupted .npz archives and .safetensors headers the same way.
// Every file either loads, holding exactly the data bytes its header claims, or throws
// strata::io_error. The one other answer allowed is dtype_error for a well-formed descr of
// another dtype strata reads; loaded as that dtype, the file must then load or throw io_error.
// No single allocation made while loading may exceed the file's size (or a small fixed
// allowance for the stream's buffer and the error message).
#include <catch2/catch.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>
#include <unistd.h>
#include "count_allocations.hpp"
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_FUZZ_ASAN 1
#endif
#endif
#ifdef STRATA_FUZZ_ASAN
#include <sanitizer/allocator_interface.h>
#else
#include <dlfcn.h>
#endif
import strata;

// Storage comes from posix_memalign, which count_allocations.hpp's operator new does not see:
// record its sizes as well. AddressSanitizer owns malloc and friends, so under it through its
// allocation hook (which sees every allocation); otherwise by interposing posix_memalign.
#ifdef STRATA_FUZZ_ASAN
namespace {
void on_malloc(const volatile void*, std::size_t n) { counting::note_size(n); }
void on_free(const volatile void*) {}
[[maybe_unused]] const int hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}  // namespace
#else
extern "C" int posix_memalign(void** p, std::size_t align, std::size_t n) noexcept {
  using real_t = int (*)(void**, std::size_t, std::size_t);
  static const auto real = reinterpret_cast<real_t>(dlsym(RTLD_NEXT, "posix_memalign"));
  counting::note_size(n);
  return real(p, align, n);
}
#endif

namespace {
using i64 = std::int64_t;

// The element types load_npy reads, with NumPy's descr of each (little-endian or '|').
using npy_types = std::tuple<bool, std::uint8_t, std::int8_t, std::int16_t, std::int32_t, std::int64_t,
                             strata::half, float, double, std::complex<float>, std::complex<double>>;
constexpr std::size_t num_types = std::tuple_size_v<npy_types>;
const std::array<std::string, num_types> descrs = {"|b1", "|u1", "|i1", "<i2", "<i4", "<i8",
                                                   "<f2", "<f4", "<f8", "<c8", "<c16"};
constexpr std::array<std::size_t, num_types> itemsizes = {1, 1, 1, 2, 4, 8, 2, 4, 8, 8, 16};

// What a load may allocate whatever the file's size: std::ifstream's buffer (BUFSIZ, 8 KiB in
// libstdc++), the exception and its message.
constexpr std::size_t allowance = 16384;

enum class outcome { loaded, io_error, dtype_error, other };

struct result {
  outcome what = outcome::other;
  std::vector<i64> sizes;  // when loaded
  std::size_t largest = 0;  // the largest single allocation during load_npy
  std::string message;
};

template <class T>
result try_load(const std::string& path) {
  result r;
  largest_allocation.store(0);
  try {
    const strata::Tensor<T> t = strata::load_npy<T>(path);
    r.largest = largest_allocation.load();
    r.what = outcome::loaded;
    r.sizes.assign(t.sizes().begin(), t.sizes().end());
  } catch (const std::exception& e) {
    r.largest = largest_allocation.load();
    r.what = dynamic_cast<const strata::io_error*>(&e)      ? outcome::io_error
             : dynamic_cast<const strata::dtype_error*>(&e) ? outcome::dtype_error
                                                            : outcome::other;
    r.message = e.what();
  } catch (...) {
    r.largest = largest_allocation.load();
    r.message = "(not a std::exception)";
  }
  return r;
}

// load_npy<the type'th of npy_types>(path).
result load_as(std::size_t type, const std::string& path) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    result r;
    ((I == type ? (void)(r = try_load<std::tuple_element_t<I, npy_types>>(path)) : void()), ...);
    return r;
  }(std::make_index_sequence<num_types>{});
}

// A .npy file: magic, version, header length, the header (padded as NumPy pads it: spaces and a
// newline up to a multiple of 64 bytes), then the data.
std::string npy_file(const std::string& dict, const std::string& data, int version = 1, bool pad = true) {
  const std::size_t prefix = version == 1 ? 10 : 12;
  std::string header = dict;
  if (pad) {
    header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
  }
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  for (std::size_t k = 0; k < prefix - 8; ++k) out += static_cast<char>((header.size() >> (8 * k)) & 0xFF);
  return out + header + data;
}

std::string tuple_text(const std::vector<i64>& shape) {
  std::string s = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string dict(const std::string& descr, const std::string& fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

i64 numel(const std::vector<i64>& shape) {
  i64 n = 1;
  for (const i64 d : shape) n *= d;
  return n;
}

// The file's bytes with everything outside printable ASCII escaped (for failure messages).
std::string printable(const std::string& s, std::size_t limit = 240) {
  std::string out;
  for (std::size_t k = 0; k < s.size() && k < limit; ++k) {
    const auto c = static_cast<unsigned char>(s[k]);
    if (c >= 32 && c < 127 && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return s.size() > limit ? out + "..." : out;
}

// What a header that load_npy accepted claims, read without load_npy's parser: the numbers of
// its shape tuple, the item width at the end of its descr, and where its data starts.
struct claim {
  std::vector<i64> dims;
  std::size_t width = 0;
  std::size_t data_offset = 0;
};

claim read_claim(const std::string& file) {
  claim c;
  const std::size_t prefix = file.at(6) == 1 ? 10 : 12;
  std::size_t len = 0;
  for (std::size_t k = prefix; k-- > 8;) len = len << 8 | static_cast<unsigned char>(file.at(k));
  c.data_offset = prefix + len;
  const std::string header = file.substr(prefix, len);
  const std::size_t open = header.find('(', header.find("shape"));
  const std::string inside = header.substr(open + 1, header.find(')', open) - open - 1);
  for (std::size_t k = 0; k < inside.size();) {
    const std::size_t end = inside.find_first_not_of("0123456789", k);
    if (end != k) c.dims.push_back(std::stoll(inside.substr(k, end - k)));
    k = end == std::string::npos ? inside.size() : std::max(end, k + 1);
  }
  const std::size_t quote = header.find_first_of("'\"", header.find(':', header.find("descr")));
  const std::string descr = header.substr(quote + 1, header.find(header[quote], quote + 1) - quote - 1);
  const std::size_t digits = descr.find_last_not_of("0123456789") + 1;
  c.width = std::stoul(descr.substr(digits));
  return c;
}

// What a case must give.
enum class want {
  load,         // a valid file
  io_error,     // a malformed one
  dtype_error,  // a valid file of another strata dtype
  any,          // loads or io_error, or dtype_error when the descr is another strata dtype's
};

// Writes each case to one file in a fresh temporary directory, loads it, and checks the outcome.
class fuzzer {
 public:
  fuzzer() : dir_(std::filesystem::temp_directory_path() / ("strata_io_fuzz_" + std::to_string(getpid()))) {
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "case.npy").string();
  }
  fuzzer(const fuzzer&) = delete;
  fuzzer& operator=(const fuzzer&) = delete;
  ~fuzzer() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  /// Writes file to the case's path and returns that path.
  const std::string& write(const std::string& file) {
    // A fresh file each time: ext4 flushes a file truncated and rewritten when it is closed,
    // which makes thousands of rewrites of one file slow on a busy disk.
    std::filesystem::remove(path_);
    std::ofstream out(path_, std::ios::binary);
    out.write(file.data(), static_cast<std::streamsize>(file.size()));
    return path_;
  }

  /// Loads file as the type'th of npy_types, checks the outcome against w, returns it.
  outcome check(const std::string& name, const std::string& file, std::size_t type, want w) {
    write(file);
    ++cases;
    INFO("case " << cases << " (" << name << "): " << file.size() << " bytes loaded as " << descrs[type]
                 << ": " << printable(file));
    const result r = load_as(type, path_);
    judge(file, type, r, w);
    if (r.what == outcome::dtype_error && (w == want::dtype_error || w == want::any)) {
      // Only a descr of another dtype strata reads may say so: as that dtype the file loads
      // or gives io_error.
      std::size_t other = 0;
      result as_other;
      for (; other < num_types; ++other) {
        if (other == type) continue;
        as_other = load_as(other, path_);
        if (as_other.what != outcome::dtype_error) break;
      }
      INFO("dtype_error: " << r.message);
      REQUIRE(other < num_types);
      INFO("loaded as " << descrs[other]);
      judge(file, other, as_other, want::any);
      CHECK(as_other.what != outcome::dtype_error);
    }
    return r.what;
  }

  std::size_t cases = 0, loads = 0, io_errors = 0, dtype_errors = 0;

 private:
  void judge(const std::string& file, std::size_t type, const result& r, want w) {
    INFO("threw: " << r.message);
    CHECK(r.largest <= std::max(file.size(), allowance));
    CHECK(r.what != outcome::other);
    switch (w) {
      case want::load: CHECK(r.what == outcome::loaded); break;
      case want::io_error: CHECK(r.what == outcome::io_error); break;
      case want::dtype_error: CHECK(r.what == outcome::dtype_error); break;
      case want::any: break;
    }
    if (r.what == outcome::loaded) {
      ++loads;
      const claim c = read_claim(file);
      CHECK(r.sizes == c.dims);
      CHECK(c.width == itemsizes[type]);
      const auto bytes = static_cast<std::size_t>(numel(r.sizes)) * itemsizes[type];
      CHECK(bytes == static_cast<std::size_t>(numel(c.dims)) * c.width);  // what the header claims
      CHECK(bytes <= file.size() - c.data_offset);                          // and the file holds
    } else if (r.what == outcome::io_error) {
      ++io_errors;
    } else {
      ++dtype_errors;
    }
  }

  std::filesystem::path dir_;
  std::string path_;
};

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xFF);
  return s;
}

std::size_t pick(std::mt19937_64& rng, std::size_t n) { return static_cast<std::size_t>(rng() % n); }

// A valid file of a random type, shape, order, byte order and version.
struct base_file {
  std::string file;
  std::size_t type = 0;
  std::vector<i64> shape;
};

base_file random_base(std::mt19937_64& rng) {
  base_file b;
  b.type = pick(rng, num_types);
  const std::size_t ndim = pick(rng, 4);
  for (std::size_t d = 0; d < ndim; ++d)
    b.shape.push_back(pick(rng, 8) == 0 ? 0 : 1 + static_cast<i64>(pick(rng, 4)));
  std::string descr = descrs[b.type];
  if (pick(rng, 3) == 0) descr[0] = "<>=|"[pick(rng, 4)];
  const int version = pick(rng, 4) == 0 ? 2 + static_cast<int>(pick(rng, 2)) : 1;
  const std::string data = random_bytes(rng, static_cast<std::size_t>(numel(b.shape)) * itemsizes[b.type]);
  b.file = npy_file(dict(descr, pick(rng, 2) ? "True" : "False", tuple_text(b.shape)), data, version);
  return b;
}

std::size_t data_offset(const std::string& file) { return read_claim(file).data_offset; }

template <class T>
strata::Tensor<T> load_ok(const std::string& path) {
  const result r = try_load<T>(path);
  INFO(r.message);
  REQUIRE(r.what == outcome::loaded);
  return strata::load_npy<T>(path);
}
}  // namespace

TEST_CASE("fuzz: the allocation tracker sees the storage load_npy allocates", "[io][npy][fuzz]") {
  fuzzer f;
  const std::vector<i64> shape = {512, 256};  // 512 KiB of float32
  std::mt19937_64 rng(1);
  const std::string file = npy_file(dict("<f4", "False", tuple_text(shape)), random_bytes(rng, 512 * 256 * 4));
  CHECK(f.check("512 KiB of float32", file, 7, want::load) == outcome::loaded);
  const result r = try_load<float>(f.write(file));
  REQUIRE(r.what == outcome::loaded);
  CHECK(r.largest >= std::size_t{512} * 256 * 4);  // the storage was seen...
  CHECK(r.largest <= file.size());                 // ...and nothing larger
}

TEST_CASE("fuzz: regressions: overflowing and oversized shapes throw io_error before allocating",
          "[io][npy][fuzz]") {
  fuzzer f;
  // From the issue: 99999999999^2 overflows int64 (numel_of's shape_error must not escape).
  auto f32 = [](const std::string& shape) { return dict("<f4", "False", shape); };
  f.check("(99999999999, 99999999999)", npy_file(f32("(99999999999, 99999999999)"), std::string(64, '\1')), 7,
          want::io_error);
  // From the issue: a 100-byte file claiming 400 MB of float32 data.
  std::string hundred = npy_file(f32("(100000000,)") + "\n", "", 1, false);
  hundred += std::string(100 - hundred.size(), '\7');
  REQUIRE(hundred.size() == 100);
  f.check("100-byte file claiming (100000000,)", hundred, 7, want::io_error);
  // Byte counts that overflow only once multiplied by the item size, or only through the
  // extents of an empty array (NumPy: "array is too big").
  f.check("(2**62, 2) float32", npy_file(f32("(4611686018427387904, 2)"), ""), 7, want::io_error);
  f.check("(2**61,) complex128: 2**65 bytes wrap to 0",
          npy_file(dict("<c16", "False", "(2305843009213693952,)"), ""), 10, want::io_error);
  f.check("(0, 99999999999, 99999999999)", npy_file(f32("(0, 99999999999, 99999999999)"), ""), 7,
          want::io_error);
  f.check("(2**63 - 1,) bool", npy_file(dict("|b1", "False", "(9223372036854775807,)"), "x"), 0,
          want::io_error);
  f.check("(2**63,) overflows the parse", npy_file(dict("|u1", "False", "(9223372036854775808,)"), "x"), 1,
          want::io_error);
  f.check("(0, 2**31, 2**31) int8: the extents fit",
          npy_file(dict("|i1", "False", "(0, 2147483648, 2147483648)"), ""), 2, want::load);
  f.check("(2**20, 2**20) int64 in a small file",
          npy_file(dict("<i8", "True", "(1048576, 1048576)"), "12345678"), 5, want::io_error);
  CHECK(f.io_errors == 8);
}

TEST_CASE("fuzz: bytes after the data are ignored, as NumPy's np.load ignores them", "[io][npy][fuzz]") {
  fuzzer f;
  const std::string data = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0};
  for (const std::string& extra : {std::string(), std::string("x"), std::string("trailing garbage"),
                                   std::string(1000, '\0')})
    f.check("3 int32 + " + std::to_string(extra.size()) + " extra bytes",
            npy_file(dict("<i4", "False", "(3,)"), data + extra), 4, want::load);
  const std::string& path = f.write(npy_file(dict("<i4", "False", "(3,)"), data + "extra"));
  CHECK(load_ok<std::int32_t>(path).to_vector() == std::vector<std::int32_t>{1, 2, 3});
}

TEST_CASE("fuzz: absurd, overflowing and malformed shapes", "[io][npy][fuzz]") {
  fuzzer f;
  std::mt19937_64 rng(20240611);
  struct token {
    std::string text;
    i64 value;  // -1: not a valid dim
  };
  const std::vector<token> small = {{"0", 0}, {"1", 1}, {"2", 2}, {"3", 3}, {"4", 4}, {"5", 5}, {"00", 0}};
  const std::vector<token> large = {
      {"1000", 1000}, {"65536", 65536}, {"2147483647", 2147483647}, {"2147483648", 2147483648},
      {"4294967296", 4294967296}, {"99999999999", 99999999999}, {"1099511627776", 1099511627776},
      {"4611686018427387904", 4611686018427387904}, {"9223372036854775807", 9223372036854775807}};
  const std::vector<std::string> invalid = {
      "9223372036854775808", "99999999999999999999", "18446744073709551616", "-1", "-5", "3.0", "1e3",
      "0x10", "True", "None", "03", "''", "(2)", "[2]", "2j", "\xff"};
  const std::vector<std::string> spaces = {"", " ", "  ", "\t", "\n"};
  for (int k = 0; k < 1200; ++k) {
    const std::size_t type = pick(rng, num_types);
    std::size_t ndim = pick(rng, 6);
    if (pick(rng, 10) == 0) ndim = 60 + pick(rng, 10);  // around the 64-dim limit
    bool valid = true;
    std::vector<i64> dims;
    std::string text = "(" + spaces[pick(rng, spaces.size())];
    for (std::size_t d = 0; d < ndim; ++d) {
      const std::size_t kind = pick(rng, 10);
      std::string t;
      if (ndim > 8) {  // mostly 1s, so that some of these fit the file
        const token& tk = small[pick(rng, 30) == 0 ? 2 : 1];
        t = tk.text;
        dims.push_back(tk.value);
      } else if (kind < 6) {
        const token& tk = small[pick(rng, small.size())];
        t = tk.text;
        dims.push_back(tk.value);
      } else if (kind < 9) {
        const token& tk = large[pick(rng, large.size())];
        t = tk.text;
        dims.push_back(tk.value);
      } else {
        t = invalid[pick(rng, invalid.size())];
        valid = false;
      }
      text += (d ? "," + spaces[pick(rng, spaces.size())] : "") + t;
    }
    const bool trailing_comma = ndim == 1 ? pick(rng, 8) != 0 : ndim > 1 && pick(rng, 2) == 0;
    if (ndim == 1 && !trailing_comma) valid = false;  // (3) is the int 3, not a tuple
    if (ndim > 64) valid = false;
    text += (trailing_comma ? "," : "") + spaces[pick(rng, spaces.size())] + ")";
    // The claim, as NumPy checks it: extents (0 counted as 1) times the item size fit in int64.
    __int128 extent = static_cast<__int128>(itemsizes[type]), bytes = extent;
    for (const i64 d : dims) {
      extent *= std::max<i64>(d, 1);
      bytes *= d;
      if (extent > INT64_MAX) valid = false;
      if (!valid) break;
    }
    // Data: exactly the claim when small, else a random amount.
    std::size_t size = pick(rng, 300);
    if (valid && bytes <= 4096) {
      const auto b = static_cast<std::size_t>(bytes);
      switch (pick(rng, 4)) {
        case 0: size = b; break;
        case 1: size = b + pick(rng, 16); break;
        case 2: size = b ? b - 1 - pick(rng, b) : 0; break;
        default: break;
      }
    }
    const want w = valid && bytes <= static_cast<__int128>(size) ? want::load : want::io_error;
    f.check("shape " + printable(text), npy_file(dict(descrs[type], pick(rng, 2) ? "True" : "False", text),
                                                 random_bytes(rng, size), 1 + static_cast<int>(pick(rng, 3))),
            type, w);
  }
  CHECK(f.loads > 100);
  CHECK(f.io_errors > 300);
}

TEST_CASE("fuzz: dtype strings", "[io][npy][fuzz]") {
  fuzzer f;
  std::mt19937_64 rng(7);
  // Well-formed descrs: this dtype in any byte order loads; another strata dtype is dtype_error.
  for (std::size_t type = 0; type < num_types; ++type) {
    for (std::size_t as = 0; as < num_types; ++as) {
      for (const char order : std::string("<>=|")) {
        std::string descr = descrs[as];
        descr[0] = order;
        const std::string data = random_bytes(rng, 2 * 3 * itemsizes[as]);
        f.check("descr " + descr, npy_file(dict(descr, "False", "(2, 3)"), data), type,
                as == type ? want::load : want::dtype_error);
      }
    }
  }
  // Descrs that name no dtype load_npy reads (or no dtype at all).
  const std::vector<std::string> unreadable = {
      "<u2", "<u4", "<u8", ">u2", "<U10", "|S3", "|O", "<M8[ns]", "<m8[s]", "|V4", "f4", "float32", "i4",
      "b1", "<f4 ", " <f4", "<f", "<", "", "<f16", "<f04", "<F4", "<ff4", "<<f4", "!f4", "<i3", "<c4",
      "<b2", "O", std::string("<f4\0", 4), "<i\xff", "<c32", "<f12", "|b", "<i88", "<V", "|b1,", "<f4<f4"};
  for (const std::string& descr : unreadable)
    f.check("descr " + printable(descr), npy_file(dict(descr, "False", "(4,)"), random_bytes(rng, 64)),
            pick(rng, num_types), want::io_error);
  // Descrs that are not strings.
  for (const std::string& value :
       {"5", "None", "[('a', '<f4')]", "{'a': 1}", "'<f4", "\"<f4'", "<f4", "('<f4',)"}) {
    const std::string text = "{'descr': " + value + ", 'fortran_order': False, 'shape': (4,), }";
    f.check("descr value " + value, npy_file(text, random_bytes(rng, 64)), pick(rng, num_types),
            want::io_error);
  }
  // Random strings over a descr's alphabet: the expected outcome from the string itself.
  const std::string alphabet = "<>=|!fiucbUSOVMm01234568";
  for (int k = 0; k < 800; ++k) {
    std::string descr;
    const std::size_t len = pick(rng, 5);
    for (std::size_t c = 0; c < len; ++c) descr += alphabet[pick(rng, alphabet.size())];
    const std::size_t type = pick(rng, num_types);
    want w = want::io_error;
    std::size_t as = type;
    if (descr.size() >= 2 && std::string("<>=|").find(descr[0]) != std::string::npos) {
      for (std::size_t t = 0; t < num_types; ++t)
        if (descr.substr(1) == descrs[t].substr(1)) {
          w = t == type ? want::load : want::dtype_error;
          as = t;
        }
    }
    const std::string data = random_bytes(rng, 3 * itemsizes[as]);
    f.check("random descr " + descr, npy_file(dict(descr, "False", "(3,)"), data), type, w);
  }
  CHECK(f.dtype_errors > 400);
}

TEST_CASE("fuzz: fortran_order values and header dicts", "[io][npy][fuzz]") {
  fuzzer f;
  std::mt19937_64 rng(99);
  const std::string data = random_bytes(rng, 6 * 4);
  auto file = [&](const std::string& text) { return npy_file(text, data); };
  for (const std::string order : {"True", "False"})
    f.check("fortran_order " + order, file(dict("<f4", order, "(2, 3)")), 7, want::load);
  for (const std::string order : {"1", "0", "true", "false", "None", "'False'", "\"True\"", "Fals", "TrueX",
                                  "Truee", "", "False False", "not False", "~True", "T", "F", "1.0", "b'True'"})
    f.check("fortran_order " + order, file(dict("<f4", order, "(2, 3)")), 7, want::io_error);

  const std::string d = "'descr': '<f4'", o = "'fortran_order': False", s = "'shape': (2, 3)";
  const std::vector<std::pair<std::string, want>> dicts = {
      {"{" + d + ", " + o + ", " + s + "}", want::load},  // no trailing comma
      {"{" + d + "," + o + "," + s + ",}", want::load},
      {"{" + s + ", " + d + ", " + o + "}", want::load},  // any key order
      {"{" + o + ", " + s + ", " + d + "}", want::load},
      {"{" + s + ", " + o + ", " + d + "}", want::load},
      {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}", want::load},
      {" \t{" + d + ", " + o + ", " + s + "}", want::load},
      {"{\n " + d + ",\n " + o + ",\n " + s + "\n}\n\n", want::load},
      {"{" + o + ", " + s + "}", want::io_error},  // a key missing
      {"{" + d + ", " + s + "}", want::io_error},
      {"{" + d + ", " + o + "}", want::io_error},
      {"{}", want::io_error},
      {"", want::io_error},
      {"{" + d + ", " + o + ", " + s + ", " + s + "}", want::io_error},  // duplicate keys
      {"{" + d + ", " + o + ", " + s + ", 'shape': (3, 2)}", want::io_error},
      {"{" + d + ", " + d + ", " + o + ", " + s + "}", want::io_error},
      {"{" + d + ", " + o + ", 'fortran_order': True, " + s + "}", want::io_error},
      {"{" + d + ", " + o + ", " + s + ", 'x': 1}", want::io_error},  // an extra key
      {"{" + d + ", " + o + ", " + s + ", '': 1}", want::io_error},
      {"{" + d + ", " + o + ", " + s + "} x", want::io_error},  // trailing garbage
      {"{" + d + ", " + o + ", " + s + "}}", want::io_error},
      {"{" + d + ", " + o + ", " + s + "},", want::io_error},
      {"{" + d + ", " + o + ", " + s + "} {}", want::io_error},
      {"{" + d + ", " + o + ", " + s + "}" + std::string(1, '\0'), want::io_error},
      {"{" + d + ", " + o + ", " + s + "} # comment", want::io_error},
      {d + ", " + o + ", " + s + "}", want::io_error},  // broken punctuation
      {"{" + d + ", " + o + ", " + s, want::io_error},
      {"{" + d + " " + o + ", " + s + "}", want::io_error},
      {"{'descr' '<f4', " + o + ", " + s + "}", want::io_error},
      {"{" + d + ",, " + o + ", " + s + "}", want::io_error},
      {"{, " + d + ", " + o + ", " + s + "}", want::io_error},
      {"{descr: '<f4', " + o + ", " + s + "}", want::io_error},
      {"{'descr: '<f4', " + o + ", " + s + "}", want::io_error},
      {"[" + d + ", " + o + ", " + s + "]", want::io_error},
      {"{{" + d + ", " + o + ", " + s + "}}", want::io_error},
      {"{" + d + ", " + o + ", 'shape': [2, 3]}", want::io_error},
      {"{" + d + ", " + o + ", 'shape': 6}", want::io_error},
      {"{" + d + ", " + o + ", 'shape': (2, 3}", want::io_error},
      {"{" + d + ", " + o + ", 'shape': (2, 3))}", want::io_error},
  };
  for (const auto& [text, w] : dicts) f.check("dict " + printable(text), file(text), 7, w);
  for (const auto& [text, w] : dicts)  // the same without NumPy's padding
    f.check("unpadded dict " + printable(text), npy_file(text, data, 1, false), 7, w);
  // Padding with NUL bytes instead of spaces.
  f.check("NUL padding", npy_file(dict("<f4", "False", "(2, 3)") + std::string(10, '\0'), data, 1, false), 7,
          want::io_error);
}

TEST_CASE("fuzz: magic, version, header length and data length", "[io][npy][fuzz]") {
  fuzzer f;
  std::mt19937_64 rng(5);
  const std::string good = npy_file(dict("<i2", "False", "(5,)"), random_bytes(rng, 10));
  f.check("good", good, 3, want::load);
  for (std::size_t k = 0; k < 6; ++k)
    for (const char c : {'\0', 'x', '\x92', 'n'}) {
      std::string b = good;
      b[k] = c;
      f.check("magic byte " + std::to_string(k), b, 3, want::io_error);
    }
  for (const auto& [major, minor] : std::vector<std::pair<int, int>>{{1, 0}, {2, 0}, {3, 0}})
    for (const bool extra : {false, true}) {
      std::string b = npy_file(dict("<i2", "False", "(5,)"), random_bytes(rng, extra ? 11 : 10), major);
      b[7] = static_cast<char>(minor);
      f.check("version " + std::to_string(major), b, 3, want::load);
    }
  for (const auto& [major, minor] :
       std::vector<std::pair<int, int>>{{0, 0}, {4, 0}, {1, 1}, {2, 5}, {3, 255}, {255, 0}}) {
    const int layout = major > 3 || major < 1 ? 1 : major;
    std::string b = npy_file(dict("<i2", "False", "(5,)"), random_bytes(rng, 10), layout);
    b[6] = static_cast<char>(major);
    b[7] = static_cast<char>(minor);
    f.check("version " + std::to_string(major) + "." + std::to_string(minor), b, 3, want::io_error);
  }
  // Header lengths past the end of the file (the header must not be allocated first).
  for (const unsigned len : {129u, 200u, 4096u, 0xFFFFu}) {  // 118 bytes of header, 10 of data
    std::string b = good;
    b[8] = static_cast<char>(len & 0xFF);
    b[9] = static_cast<char>(len >> 8);
    f.check("header length " + std::to_string(len), b, 3, want::io_error);
  }
  for (const std::uint32_t len : {1000u, 1u << 20, (1u << 20) + 1, 0x7FFFFFFFu, 0xFFFFFFFFu}) {
    std::string b = npy_file(dict("<i2", "False", "(5,)"), random_bytes(rng, 10), 2);
    for (int k = 0; k < 4; ++k) b[8 + k] = static_cast<char>((len >> (8 * k)) & 0xFF);
    f.check("v2 header length " + std::to_string(len), b, 3, want::io_error);
  }
  f.check("header length 0", std::string("\x93NUMPY\x01\x00\x00\x00", 10) + "{'descr': '<i2'}", 3,
          want::io_error);
  // Header lengths a little short or long of the dict's end: whatever they give.
  for (int delta = -70; delta <= 70; ++delta) {
    std::string b = good;
    const int len = static_cast<unsigned char>(b[8]) + delta;
    b[8] = static_cast<char>(len & 0xFF);
    b[9] = static_cast<char>(len >> 8);
    f.check("header length delta " + std::to_string(delta), b, 3, delta > 10 ? want::io_error : want::any);
  }
  // Every truncation of a valid file; every extension loads.
  for (int k = 0; k < 12; ++k) {
    const base_file base = random_base(rng);
    const std::size_t end = base.file.size();
    for (std::size_t cut = 0; cut < end; ++cut)
      f.check("truncated to " + std::to_string(cut), base.file.substr(0, cut), base.type, want::io_error);
    f.check("whole", base.file, base.type, want::load);
    f.check("extended", base.file + random_bytes(rng, 1 + pick(rng, 40)), base.type, want::load);
  }
  // Shorter data than the shape claims.
  for (std::size_t missing = 1; missing <= 10; ++missing)
    f.check("data short by " + std::to_string(missing), good.substr(0, good.size() - missing), 3,
            want::io_error);
}

TEST_CASE("fuzz: randomly corrupted files", "[io][npy][fuzz]") {
  fuzzer f;
  std::mt19937_64 rng(0x5eed);
  const char chars[] = "\0\xff ()[]{},:'\"0123456789-.LTFx<>=|\n\t";
  const std::string interesting(chars, sizeof chars - 1);
  for (int k = 0; k < 2400; ++k) {
    const base_file base = random_base(rng);
    std::string b = base.file;
    const std::size_t header_end = data_offset(b);
    want w = want::any;
    std::string name;
    switch (pick(rng, 8)) {
      case 0:  // random bytes anywhere in the prefix and header
      case 1: {
        const std::size_t n = 1 + pick(rng, 4);
        for (std::size_t j = 0; j < n; ++j) b[pick(rng, header_end)] = static_cast<char>(rng() & 0xFF);
        name = "random header bytes";
        break;
      }
      case 2: {  // syntax characters in the header
        const std::size_t n = 1 + pick(rng, 3);
        for (std::size_t j = 0; j < n; ++j)
          b[10 + pick(rng, header_end - 10)] = interesting[pick(rng, interesting.size())];
        name = "header characters";
        break;
      }
      case 3: {  // a byte inserted into or removed from the header (the length no longer fits)
        const std::size_t at = 10 + pick(rng, header_end - 10);
        if (pick(rng, 2)) b.insert(at, 1, interesting[pick(rng, interesting.size())]);
        else b.erase(at, 1);
        name = "header byte inserted or removed";
        break;
      }
      case 4: {  // random truncation
        b.resize(pick(rng, b.size()));
        name = "truncated";
        w = want::io_error;
        break;
      }
      case 5: {  // random data: still loads
        if (b.size() > header_end) {
          const std::size_t n = 1 + pick(rng, 8);
          for (std::size_t j = 0; j < n; ++j)
            b[header_end + pick(rng, b.size() - header_end)] = static_cast<char>(rng());
        }
        name = "random data bytes";
        w = want::load;
        break;
      }
      case 6: {  // garbage, sometimes after a valid magic and version
        b = random_bytes(rng, pick(rng, 300));
        if (pick(rng, 2)) b = std::string("\x93NUMPY", 6) + static_cast<char>(1 + pick(rng, 3)) + '\0' + b;
        name = "garbage";
        break;
      }
      default: {  // a random length field
        for (std::size_t j = 8; j < (b[6] == 1 ? 10u : 12u); ++j)
          if (pick(rng, 2)) b[j] = static_cast<char>(rng());
        name = "random header length";
        break;
      }
    }
    f.check(name, b, base.type, w);
  }
  CHECK(f.cases == 2400);
  CHECK(f.loads > 300);
  CHECK(f.io_errors > 1000);
}

namespace {
// Runs load, recording the outcome, its message and the largest allocation made.
template <class Load>
result attempt(const Load& load) {
  result r;
  largest_allocation.store(0);
  try {
    load();
    r.what = outcome::loaded;
  } catch (const std::exception& e) {
    r.what = dynamic_cast<const strata::io_error*>(&e)      ? outcome::io_error
             : dynamic_cast<const strata::dtype_error*>(&e) ? outcome::dtype_error
                                                            : outcome::other;
    r.message = e.what();
  }
  r.largest = largest_allocation.load();
  return r;
}

// Calls read.template operator()<T>() for the element type T of dtype d (npy_types and bfloat16).
template <class Read>
void as_dtype(strata::dtype d, const Read& read) {
  bool done = false;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((!done && strata::dtype_v<std::tuple_element_t<I, npy_types>> == d
          ? (void)(done = true, read.template operator()<std::tuple_element_t<I, npy_types>>())
          : void()),
     ...);
  }(std::make_index_sequence<num_types>{});
  if (!done && d == strata::dtype::bfloat16) done = true, read.template operator()<strata::bfloat16>();
  if (!done) throw std::logic_error("a dtype the fuzz test does not read");
}

// Opens an archive and reads every entry as the dtype its header gives, as a program that does
// not know the archive would.
result try_npz(const std::string& path) {
  return attempt([&] {
    strata::NpzFile in(path);
    for (std::size_t i = 0; i < in.size(); ++i) as_dtype(in.dtype(i), [&]<class T>() { (void)in.read<T>(i); });
  });
}
}  // namespace

TEST_CASE("fuzz: randomly corrupted .npz archives, stored, deflated and ZIP64", "[io][npz][fuzz]") {
  fuzzer f;
  std::mt19937_64 rng(20261128);
  std::size_t loads = 0, errors = 0;
  for (const char* name : {"stored.npz", "deflated.npz", "zip64.npz"}) {
    std::ifstream in(std::string(STRATA_GOLDEN_DIR) + "/npy/" + name, std::ios::binary);
    const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(good.size() > 1000);
    CHECK(try_npz(f.write(good)).what == outcome::loaded);
    // The largest entry the archive holds, inflated: the zeros, 40 x 50 doubles and a header.
    const std::size_t largest_entry = 16128;
    for (int c = 0; c < 400; ++c) {
      std::string bad = good;
      const std::size_t kind = pick(rng, 4);
      if (kind == 0) {
        bad.resize(pick(rng, good.size()));  // truncated
      } else if (kind == 1) {
        for (std::size_t k = 0, n = 1 + pick(rng, 8); k < n; ++k) bad[pick(rng, bad.size())] ^= static_cast<char>(1 + pick(rng, 255));
      } else {
        // A 16- or 32-bit field near a signature set to a random or an all-ones value.
        const std::size_t at = pick(rng, bad.size() - 4);
        const std::uint32_t v = kind == 2 ? 0xffffffffu : static_cast<std::uint32_t>(rng());
        for (std::size_t k = 0; k < 4; ++k) bad[at + k] = static_cast<char>((v >> (8 * k)) & 0xff);
      }
      const result r = try_npz(f.write(bad));
      INFO(name << " case " << c << " (kind " << kind << "): " << r.message);
      CHECK((r.what == outcome::loaded || r.what == outcome::io_error));
      CHECK(r.largest <= std::max({2 * largest_entry, 2 * bad.size(), std::size_t{4096}}) + allowance);
      (r.what == outcome::loaded ? loads : errors) += 1;
    }
  }
  CHECK(errors > 600);  // most corruptions are caught (CRC-32, sizes, signatures)
  CHECK(loads > 0);     // and some leave the data intact (a comment, a time field)
}

namespace {
// Opens a .safetensors file and reads every tensor strata has a dtype for, as its own dtype
// (U16 and the like are listed, not loaded).
result try_safetensors(const std::string& path) {
  return attempt([&] {
    const strata::SafetensorsFile f(path);
    for (const std::string& name : f.keys()) {
      strata::dtype d;
      try {
        d = f.dtype(name);
      } catch (const strata::dtype_error&) {
        continue;
      }
      as_dtype(d, [&]<class T>() { (void)f.get<T>(name); });
    }
  });
}
}  // namespace

TEST_CASE("fuzz: randomly corrupted .safetensors headers", "[io][safetensors][fuzz]") {
  fuzzer f;
  std::mt19937_64 rng(20261129);
  std::ifstream in(std::string(STRATA_GOLDEN_DIR) + "/safetensors/mixed.safetensors", std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t header = 0;
  for (int k = 7; k >= 0; --k) header = header << 8 | static_cast<unsigned char>(good[static_cast<std::size_t>(k)]);
  REQUIRE(header + 8 < good.size());
  CHECK(try_safetensors(f.write(good)).what == outcome::loaded);
  std::size_t loads = 0, errors = 0;
  for (int c = 0; c < 1500; ++c) {
    std::string bad = good;
    const std::size_t kind = pick(rng, 5);
    if (kind == 0) {
      bad.resize(pick(rng, good.size()));  // truncated
    } else if (kind == 1) {
      for (int k = 0; k < 8; ++k) bad[static_cast<std::size_t>(k)] = static_cast<char>(rng() & 0xff);  // the length
    } else if (kind == 2) {
      // A digit of the header changed: sizes and offsets that disagree, overflow or tile badly.
      std::size_t at = 8 + pick(rng, header);
      while (at < 8 + header && (bad[at] < '0' || bad[at] > '9')) ++at;
      if (at < 8 + header) bad[at] = static_cast<char>('0' + pick(rng, 10));
      if (pick(rng, 3) == 0 && at < 8 + header) bad.insert(at, std::string(1 + pick(rng, 20), '9'));
    } else {
      for (std::size_t k = 0, n = 1 + pick(rng, 4); k < n; ++k) bad[8 + pick(rng, header)] = static_cast<char>(rng() & 0xff);
    }
    const result r = try_safetensors(f.write(bad));
    INFO("case " << c << " (kind " << kind << "): " << r.message << "\n" << printable(bad.substr(0, 8 + header)));
    CHECK((r.what == outcome::loaded || r.what == outcome::io_error));
    CHECK(r.largest <= std::max(bad.size(), allowance));
    (r.what == outcome::loaded ? loads : errors) += 1;
  }
  CHECK(errors > 1000);
  CHECK(loads > 0);  // a changed byte inside a name or the metadata leaves a valid file
}

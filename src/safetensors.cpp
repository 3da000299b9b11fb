// SPDX-License-Identifier: MIT
// .safetensors files (Hugging Face's format): an 8-byte little-endian header length N, N bytes
// of JSON ({"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
// "__metadata__": {"key": "value"}}, padded with spaces), then the data buffer, each tensor's
// bytes row-major at its offsets. Reading maps the file privately (copy-on-write) and checks the
// header as the format's reference implementation does: a strict JSON parse, every dtype known,
// each tensor's byte range equal to its elements' size, and the ranges tiling the buffer from
// its start to the end of the file without a gap or an overlap. So a corrupted file gives
// io_error before anything is read from its data, and nothing is allocated for it beyond the
// header's own size.
module;
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <unordered_set>
#include <string>
#include <utility>
#include <vector>
module strata.io;

namespace strata::detail {
namespace {
constexpr std::uint64_t max_header = 100'000'000;  // the reference implementation's limit

struct dtype_code {
  const char* name;
  std::optional<dtype> type;
  std::uint64_t itemsize;
};
// Every dtype of the format; those strata lacks are read (their tensors listed) but not loaded.
const dtype_code dtype_codes[] = {
    {"BOOL", dtype::bool_, 1},     {"U8", dtype::uint8, 1},        {"I8", dtype::int8, 1},
    {"I16", dtype::int16, 2},      {"I32", dtype::int32, 4},       {"I64", dtype::int64, 8},
    {"F16", dtype::float16, 2},    {"BF16", dtype::bfloat16, 2},   {"F32", dtype::float32, 4},
    {"F64", dtype::float64, 8},    {"C64", dtype::complex64, 8},   {"U16", std::nullopt, 2},
    {"U32", std::nullopt, 4},      {"U64", std::nullopt, 8},       {"F8_E4M3", std::nullopt, 1},
    {"F8_E5M2", std::nullopt, 1}};

[[noreturn]] void bad_file(const std::string& path, const std::string& why) {
  throw io_error("safetensors: '" + path + "' is not a valid .safetensors file: " + why);
}

// The subset of JSON a header is: objects, strings, arrays of non-negative integers.
class json_reader {
 public:
  json_reader(const std::string& text, const std::string& path) : s_(text), path_(path) {}
  [[noreturn]] void fail(const std::string& why) const {
    bad_file(path_, why + " at byte " + std::to_string(8 + at_) + " of the header");
  }
  void space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
  }
  bool eat(char c) {
    space();
    if (at_ < s_.size() && s_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool at_end() {
    space();
    return at_ == s_.size();
  }
  std::string string() {
    space();
    if (at_ >= s_.size() || s_[at_] != '"') fail("expected a string");
    ++at_;
    std::string out;
    for (;;) {
      if (at_ >= s_.size()) fail("an unterminated string");
      const char c = s_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= s_.size()) fail("an unterminated string");
      switch (const char e = s_[at_++]) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t code = hex4();
          if (code >= 0xdc00 && code <= 0xdfff) fail("a lone low surrogate");
          if (code >= 0xd800 && code <= 0xdbff) {
            if (at_ + 2 > s_.size() || s_[at_] != '\\' || s_[at_ + 1] != 'u') fail("a lone high surrogate");
            at_ += 2;
            const std::uint32_t low = hex4();
            if (low < 0xdc00 || low > 0xdfff) fail("a lone high surrogate");
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          }
          utf8(out, code);
          break;
        }
        default: fail("a bad escape in a string");
      }
    }
  }
  // A non-negative integer without sign, fraction or exponent (the format's offsets and sizes).
  std::uint64_t integer() {
    space();
    const std::size_t start = at_;
    std::uint64_t v = 0;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') {
      const auto digit = static_cast<std::uint64_t>(s_[at_] - '0');
      if (v > (std::uint64_t{1} << 62) / 10) fail("an integer too large");
      v = v * 10 + digit;
      ++at_;
    }
    if (at_ == start) fail("expected a non-negative integer");
    if (s_[start] == '0' && at_ - start > 1) fail("an integer with a leading zero");
    if (at_ < s_.size() && (s_[at_] == '.' || s_[at_] == 'e' || s_[at_] == 'E')) fail("expected an integer");
    return v;
  }
  std::vector<std::uint64_t> integers() {
    std::vector<std::uint64_t> out;
    expect('[');
    if (eat(']')) return out;
    do {
      if (out.size() >= 64) fail("an array of more than 64 integers");
      out.push_back(integer());
    } while (eat(','));
    expect(']');
    return out;
  }

 private:
  std::uint32_t hex4() {
    if (at_ + 4 > s_.size()) fail("a short \\u escape");
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[at_++];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) fail("a bad \\u escape");
      v = v << 4 | static_cast<std::uint32_t>(d);
    }
    return v;
  }
  static void utf8(std::string& out, std::uint32_t c) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xc0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xe0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (c & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (c & 0x3f));
    }
  }
  const std::string& s_;
  const std::string& path_;
  std::size_t at_ = 0;
};

// A file mapped privately: pages read on demand, writes copied, never reaching the file.
struct mapping {
  void* base = nullptr;
  std::size_t size = 0;
  mapping() = default;
  mapping(const mapping&) = delete;
  mapping& operator=(const mapping&) = delete;
  ~mapping() {
    if (base) munmap(base, size);
  }
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}
}  // namespace

struct safetensors_reader::impl {
  std::string path;
  std::shared_ptr<mapping> map;
  const char* buffer = nullptr;  // the data buffer's first byte
  std::vector<safetensors_entry> entries;
  std::vector<std::pair<std::string, std::string>> metadata;
};

safetensors_reader::safetensors_reader(const std::string& path) : impl_(std::make_shared<impl>()) {
  impl_->path = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw io_error("safetensors: cannot open '" + path + "'");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw io_error("safetensors: '" + path + "' is not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    bad_file(path, "shorter than its 8-byte header length");
  }
  auto map = std::make_shared<mapping>();
  map->base = mmap(nullptr, static_cast<std::size_t>(size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map->base == MAP_FAILED) {
    map->base = nullptr;
    throw io_error("safetensors: cannot map '" + path + "'");
  }
  map->size = static_cast<std::size_t>(size);
  const auto* bytes = static_cast<const unsigned char*>(map->base);
  std::uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = n << 8 | bytes[k];
  if (n > size - 8) bad_file(path, "its header length " + std::to_string(n) + " runs past the end of the file");
  if (n > max_header) bad_file(path, "its header is longer than 100 MB");
  const std::string header(reinterpret_cast<const char*>(bytes) + 8, static_cast<std::size_t>(n));
  if (header.empty() || header[0] != '{') bad_file(path, "its header does not start with '{'");

  json_reader j(header, path);
  std::unordered_set<std::string> seen;
  bool have_metadata = false;
  j.expect('{');
  if (!j.eat('}')) {
    do {
      std::string name = j.string();
      j.expect(':');
      if (name == "__metadata__") {
        if (have_metadata) j.fail("a second __metadata__");
        have_metadata = true;
        j.expect('{');
        if (!j.eat('}')) {
          do {
            std::string key = j.string();
            j.expect(':');
            impl_->metadata.emplace_back(std::move(key), j.string());
          } while (j.eat(','));
          j.expect('}');
        }
        continue;
      }
      if (!seen.insert(name).second) j.fail("tensor '" + name + "' named twice");
      safetensors_entry e;
      e.name = std::move(name);
      bool have_dtype = false, have_shape = false, have_offsets = false;
      std::uint64_t itemsize = 0;
      std::vector<std::uint64_t> offsets;
      j.expect('{');
      do {
        const std::string key = j.string();
        j.expect(':');
        if (key == "dtype" && !have_dtype) {
          have_dtype = true;
          e.dtype_name = j.string();
          const auto* code = std::find_if(std::begin(dtype_codes), std::end(dtype_codes),
                                          [&](const dtype_code& c) { return e.dtype_name == c.name; });
          if (code == std::end(dtype_codes)) j.fail("tensor '" + e.name + "' has an unknown dtype '" + e.dtype_name + "'");
          e.type = code->type;
          itemsize = code->itemsize;
        } else if (key == "shape" && !have_shape) {
          have_shape = true;
          for (const std::uint64_t s : j.integers()) e.sizes.push_back(static_cast<std::int64_t>(s));
        } else if (key == "data_offsets" && !have_offsets) {
          have_offsets = true;
          offsets = j.integers();
          if (offsets.size() != 2) j.fail("tensor '" + e.name + "' has data_offsets of other than 2 numbers");
        } else {
          j.fail("tensor '" + e.name + "' has an unknown or repeated key '" + key + "'");
        }
      } while (j.eat(','));
      j.expect('}');
      if (!have_dtype || !have_shape || !have_offsets) j.fail("tensor '" + e.name + "' lacks dtype, shape or data_offsets");
      e.begin = offsets[0];
      e.end = offsets[1];
      // Its byte range holds exactly its elements (the product checked for overflow).
      std::uint64_t bytes_needed = itemsize;
      for (const std::int64_t s : e.sizes) {
        const auto u = static_cast<std::uint64_t>(s);
        if (u != 0 && bytes_needed > (std::uint64_t{1} << 62) / u) j.fail("tensor '" + e.name + "' has a shape too large");
        bytes_needed *= u;
      }
      if (e.end < e.begin || e.end - e.begin != bytes_needed)
        bad_file(path, "tensor '" + e.name + "' has data_offsets [" + std::to_string(e.begin) + ", " +
                           std::to_string(e.end) + "] for " + std::to_string(bytes_needed) + " bytes of data");
      impl_->entries.push_back(std::move(e));
    } while (j.eat(','));
    j.expect('}');
  }
  if (!j.at_end()) j.fail("text after the header's object");
  // The byte ranges tile the data buffer: no gap, no overlap, nothing left over.
  std::sort(impl_->entries.begin(), impl_->entries.end(), [](const safetensors_entry& a, const safetensors_entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.name < b.name;  // empty tensors share an offset
  });
  const std::uint64_t buffer_size = size - 8 - n;
  std::uint64_t at = 0;
  for (const safetensors_entry& e : impl_->entries) {
    if (e.begin != at)
      bad_file(path, "tensor '" + e.name + "' starts at byte " + std::to_string(e.begin) + " of the data, not at " +
                         std::to_string(at) + " where the one before it ends");
    at = e.end;
  }
  if (at != buffer_size)
    bad_file(path, "its tensors hold " + std::to_string(at) + " bytes but the file's data is " +
                       std::to_string(buffer_size) + " bytes");
  impl_->buffer = reinterpret_cast<const char*>(bytes) + 8 + n;
  impl_->map = std::move(map);
}

const std::vector<safetensors_entry>& safetensors_reader::entries() const noexcept { return impl_->entries; }
const std::vector<std::pair<std::string, std::string>>& safetensors_reader::metadata() const noexcept {
  return impl_->metadata;
}
std::size_t safetensors_reader::find(const std::string& name) const {
  for (std::size_t i = 0; i < impl_->entries.size(); ++i)
    if (impl_->entries[i].name == name) return i;
  throw index_error("safetensors: no tensor '" + name + "' in '" + impl_->path + "'");
}
const void* safetensors_reader::data(std::size_t i) const { return impl_->buffer + impl_->entries.at(i).begin; }
std::shared_ptr<void> safetensors_reader::owner() const { return impl_->map; }
const std::string& safetensors_reader::path() const noexcept { return impl_->path; }

void check_safetensors_dtype(dtype t) {
  for (const dtype_code& c : dtype_codes)
    if (c.type == t) return;
  throw dtype_error("safetensors: the format has no " + std::string(dtype_name(t)) + " dtype");
}

void write_safetensors(const std::string& path, std::vector<safetensors_blob> blobs,
                       const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::unordered_set<std::string> names;
  for (const safetensors_blob& b : blobs) {
    if (b.name == "__metadata__") throw error("save_safetensors: a tensor cannot be named __metadata__");
    if (!names.insert(b.name).second) throw error("save_safetensors: the name '" + b.name + "' is given twice");
  }
  const auto code_of = [](dtype t) -> const dtype_code& {
    for (const dtype_code& c : dtype_codes)
      if (c.type == t) return c;
    throw dtype_error("safetensors: the format has no " + std::string(dtype_name(t)) + " dtype");
  };
  // Wider types first, then by name (as the reference implementation orders them): each tensor
  // starts at a multiple of its item size.
  std::sort(blobs.begin(), blobs.end(), [&](const safetensors_blob& a, const safetensors_blob& b) {
    const std::uint64_t wa = code_of(a.type).itemsize, wb = code_of(b.type).itemsize;
    return wa != wb ? wa > wb : a.name < b.name;
  });
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (std::size_t k = 0; k < metadata.size(); ++k)
      header += (k ? "," : "") + json_string(metadata[k].first) + ":" + json_string(metadata[k].second);
    header += "}";
  }
  std::uint64_t at = 0;
  for (const safetensors_blob& b : blobs) {
    if (header.size() > 1) header += ",";
    header += json_string(b.name) + ":{\"dtype\":\"" + code_of(b.type).name + "\",\"shape\":[";
    for (std::size_t d = 0; d < b.sizes.size(); ++d) header += (d ? "," : "") + std::to_string(b.sizes[d]);
    header += "],\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(at + b.nbytes) + "]}";
    at += b.nbytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw io_error("save_safetensors: cannot open '" + path + "' for writing");
  std::uint64_t n = header.size();
  char len[8];
  for (char& c : len) {
    c = static_cast<char>(n & 0xff);
    n >>= 8;
  }
  out.write(len, 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (const safetensors_blob& b : blobs) out.write(static_cast<const char*>(b.data), static_cast<std::streamsize>(b.nbytes));
  if (!out) throw io_error("save_safetensors: failed writing '" + path + "'");
}
}  // namespace strata::detail

// SPDX-License-Identifier: MIT
// .npz archives as np.savez and np.savez_compressed write them: a ZIP file of .npy entries, one
// per array, named "<key>.npy", stored or deflated (PKWARE's APPNOTE: local headers, a central
// directory, its end record, the ZIP64 records and extra fields when an archive needs them;
// CRC-32 of each entry; deflate through zlib). Reading walks the central directory and checks
// every offset and size against the file, then reads one entry at a time, inflates it into a
// buffer that grows only as far as its data really inflates (never beyond the size its header
// claims) and checks its CRC-32, so a corrupted archive gives io_error, never a read outside
// the file nor memory its data does not fill.
module;
#include <zlib.h>
#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>
module strata.io;

namespace strata::detail {
namespace {
constexpr std::uint32_t local_signature = 0x04034b50, central_signature = 0x02014b50, end_signature = 0x06054b50,
                        zip64_end_signature = 0x06064b50, zip64_locator_signature = 0x07064b50;
constexpr std::uint16_t zip_version = 20;    // 2.0: stored and deflated entries
constexpr std::uint16_t zip64_version = 45;  // 4.5: ZIP64 records
constexpr std::uint16_t zip64_extra = 0x0001;
constexpr std::uint16_t stored = 0, deflated = 8;
constexpr std::uint16_t dos_date = 0x21;  // 1980-01-01, as np.savez's zipfile writes for no time
constexpr std::uint64_t zip32_limit = 0xffffffffu;
constexpr std::uint64_t zlib_chunk = 1u << 30;  // zlib counts in 32-bit unsigned

std::uint32_t crc32_of(const std::string& bytes) {
  uLong c = crc32(0, Z_NULL, 0);
  for (std::size_t at = 0; at < bytes.size(); at += zlib_chunk) {
    const std::size_t n = std::min<std::size_t>(zlib_chunk, bytes.size() - at);
    c = crc32(c, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(n));
  }
  return static_cast<std::uint32_t>(c);
}

void put16(std::string& out, std::uint32_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}
void put64(std::string& out, std::uint64_t v) {
  put32(out, static_cast<std::uint32_t>(v));
  put32(out, static_cast<std::uint32_t>(v >> 32));
}
std::uint32_t get16(const std::string& s, std::size_t at) {
  return static_cast<unsigned char>(s[at]) | static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 8;
}
std::uint32_t get32(const std::string& s, std::size_t at) { return get16(s, at) | get16(s, at + 2) << 16; }
std::uint64_t get64(const std::string& s, std::size_t at) { return get32(s, at) | std::uint64_t{get32(s, at + 4)} << 32; }

[[noreturn]] void bad_npz(const std::string& path, const std::string& why) {
  throw io_error("load_npz: '" + path + "' is not a valid .npz file: " + why);
}

// Reads `n` bytes at `offset` of a file of `size` bytes (checked first).
std::string read_at(std::ifstream& in, std::uint64_t size, std::uint64_t offset, std::uint64_t n,
                    const std::string& path, const char* what) {
  if (offset > size || n > size - offset) bad_npz(path, std::string(what) + " lies outside the file");
  std::string out(static_cast<std::size_t>(n), '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(out.data(), static_cast<std::streamsize>(n))) bad_npz(path, std::string("cannot read ") + what);
  return out;
}

// The bytes a raw deflate stream inflates to. The buffer starts at twice the stream's size and
// doubles as the output fills it, to at most one byte more than `size` (the header's claim,
// which must be exact): a false claim costs no more than twice what the stream inflates to.
std::string inflate_entry(const std::string& in, std::uint64_t size, const std::string& path, const std::string& name) {
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw io_error("load_npz: zlib cannot start inflating");
  struct ender {
    z_stream* z;
    ~ender() { inflateEnd(z); }
  } end{&z};
  const auto bad = [&](const std::string& why) { bad_npz(path, "entry '" + name + "' " + why); };
  std::string out;
  std::uint64_t have = 0, fed = 0;
  const std::uint64_t cap = size + 1;
  for (;;) {
    if (have == out.size()) {
      if (out.size() >= cap) bad("inflates to more than its header's size");
      const std::uint64_t grow = out.empty() ? std::max<std::uint64_t>(2 * in.size(), 4096) : 2 * out.size();
      out.resize(static_cast<std::size_t>(std::min(cap, grow)));
    }
    if (z.avail_in == 0 && fed < in.size()) {
      const std::uint64_t n = std::min<std::uint64_t>(zlib_chunk, in.size() - fed);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + fed));
      z.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    const uInt room = static_cast<uInt>(std::min<std::uint64_t>(zlib_chunk, out.size() - have));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + have);
    z.avail_out = room;
    const int rc = inflate(&z, Z_NO_FLUSH);
    have += room - z.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && fed == in.size()) bad("ends inside its deflate stream");
    if (rc != Z_OK && rc != Z_BUF_ERROR) bad(std::string("has corrupted deflate data (") + (z.msg ? z.msg : "zlib") + ")");
  }
  if (have != size) bad("inflates to a size other than its header's");
  out.resize(static_cast<std::size_t>(have));
  return out;
}

// The raw deflate stream of `in` (zlib's default level, as np.savez_compressed's zipfile).
std::string deflate_entry(const std::string& in) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw error("save_npz: zlib cannot start deflating");
  struct ender {
    z_stream* z;
    ~ender() { deflateEnd(z); }
  } end{&z};
  std::string out(static_cast<std::size_t>(deflateBound(&z, in.size())), '\0');
  std::uint64_t fed = 0, have = 0;
  for (;;) {
    if (z.avail_in == 0 && fed < in.size()) {
      const std::uint64_t n = std::min<std::uint64_t>(zlib_chunk, in.size() - fed);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + fed));
      z.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    if (have == out.size()) out.resize(out.size() * 2 + 64);
    const uInt room = static_cast<uInt>(std::min<std::uint64_t>(zlib_chunk, out.size() - have));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + have);
    z.avail_out = room;
    const int rc = deflate(&z, fed == in.size() ? Z_FINISH : Z_NO_FLUSH);
    have += room - z.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw error("save_npz: zlib failed deflating");
  }
  out.resize(static_cast<std::size_t>(have));
  return out;
}
}  // namespace

// Entries are located when the archive is opened and read one at a time by open(), so that
// at most one entry's bytes are held at once.
struct npz_reader::impl {
  struct entry {
    std::uint64_t data = 0, csize = 0, usize = 0;
    std::uint32_t crc = 0;
    bool deflated = false;
  };
  std::string path;
  std::ifstream in;
  std::uint64_t file_size = 0;
  std::vector<std::string> names;
  std::vector<entry> entries;
  std::istringstream stream;
};

npz_reader::npz_reader(const std::string& path) : impl_(std::make_shared<impl>()) {
  impl_->path = path;
  impl_->in.open(path, std::ios::binary);
  std::ifstream& in = impl_->in;
  if (!in) throw io_error("load_npz: cannot open '" + path + "'");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  // The end record: 22 bytes, then a comment of at most 65535 bytes.
  const std::uint64_t tail_size = std::min<std::uint64_t>(size, 22 + 65535);
  const std::string tail = read_at(in, size, size - tail_size, tail_size, path, "the end record");
  std::size_t end = std::string::npos;
  for (std::size_t i = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; i-- > 0;)
    if (get32(tail, i) == end_signature && i + 22 + get16(tail, i + 20) == tail.size()) {
      end = i;
      break;
    }
  if (end == std::string::npos) bad_npz(path, "no end-of-central-directory record");
  std::uint64_t entries = get16(tail, end + 10), dir_size = get32(tail, end + 12), dir_offset = get32(tail, end + 16);
  // ZIP64: a locator right before the end record gives the ZIP64 end record's offset. As
  // Python's zipfile, its record is read whenever the locator is there (NumPy's zipfile writes
  // one when any count, size or offset needs it, and the 32-bit fields then hold what fits).
  const std::uint64_t end_at = size - tail_size + end;
  const std::string locator = end_at >= 20 ? read_at(in, size, end_at - 20, 20, path, "the ZIP64 locator") : "";
  if (!locator.empty() && get32(locator, 0) == zip64_locator_signature) {
    if (get32(locator, 4) != 0 || get32(locator, 16) != 1) bad_npz(path, "multi-disk archives are not read");
    const std::string record = read_at(in, size, get64(locator, 8), 56, path, "the ZIP64 end record");
    if (get32(record, 0) != zip64_end_signature) bad_npz(path, "a malformed ZIP64 end record");
    if (get32(record, 16) != 0 || get32(record, 20) != 0 || get64(record, 24) != get64(record, 32))
      bad_npz(path, "multi-disk archives are not read");
    entries = get64(record, 32);
    dir_size = get64(record, 40);
    dir_offset = get64(record, 48);
  } else if (get16(tail, end + 4) != 0 || get16(tail, end + 6) != 0 || get16(tail, end + 8) != entries) {
    bad_npz(path, "multi-disk archives are not read");
  }
  const std::string dir = read_at(in, size, dir_offset, dir_size, path, "the central directory");
  std::size_t at = 0;
  for (std::uint64_t e = 0; e < entries; ++e) {
    if (at + 46 > dir.size() || get32(dir, at) != central_signature) bad_npz(path, "a malformed central directory");
    const std::uint32_t flags = get16(dir, at + 8), method = get16(dir, at + 10), crc = get32(dir, at + 16),
                        name_len = get16(dir, at + 28), extra_len = get16(dir, at + 30),
                        comment_len = get16(dir, at + 32);
    std::uint64_t csize = get32(dir, at + 20), usize = get32(dir, at + 24), local = get32(dir, at + 42);
    if (at + 46 + name_len + extra_len > dir.size()) bad_npz(path, "a malformed central directory");
    std::string name = dir.substr(at + 46, name_len);
    // ZIP64's extra field holds, in this order, each of the sizes and the offset whose 32-bit
    // field is all ones.
    for (std::size_t x = at + 46 + name_len, x_end = x + extra_len; x + 4 <= x_end;) {
      const std::uint32_t id = get16(dir, x), len = get16(dir, x + 2);
      if (x + 4 + len > x_end) bad_npz(path, "entry '" + name + "' has a malformed extra field");
      if (id == zip64_extra) {
        std::size_t v = x + 4;
        for (std::uint64_t* field : {&usize, &csize, &local}) {
          if (*field != zip32_limit) continue;
          if (v + 8 > x + 4 + len) bad_npz(path, "entry '" + name + "' has a short ZIP64 extra field");
          *field = get64(dir, v);
          v += 8;
        }
      }
      x += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    if (flags & 1) throw io_error("load_npz: entry '" + name + "' of '" + path + "' is encrypted");
    if (method != stored && method != deflated)
      throw io_error("load_npz: entry '" + name + "' of '" + path + "' uses compression method " +
                     std::to_string(method) + "; strata reads stored and deflated entries");
    if (method == stored && csize != usize) bad_npz(path, "entry '" + name + "' has inconsistent sizes");
    const std::string header = read_at(in, size, local, 30, path, "a local header");
    if (get32(header, 0) != local_signature) bad_npz(path, "entry '" + name + "' has no local header");
    const std::uint64_t data = local + 30 + get16(header, 26) + get16(header, 28);
    if (data > size || csize > size - data) bad_npz(path, "entry '" + name + "' lies outside the file");
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    impl_->names.push_back(std::move(name));
    impl_->entries.push_back({data, csize, usize, crc, method == deflated});
  }
  impl_->file_size = size;
}
npz_reader::~npz_reader() = default;
std::size_t npz_reader::size() const noexcept { return impl_->names.size(); }
const std::string& npz_reader::name(std::size_t i) const { return impl_->names.at(i); }
std::istream& npz_reader::open(std::size_t i) {
  const impl::entry& e = impl_->entries.at(i);
  std::string content = read_at(impl_->in, impl_->file_size, e.data, e.csize, impl_->path, "an entry's data");
  if (e.deflated) content = inflate_entry(content, e.usize, impl_->path, impl_->names[i]);
  if (crc32_of(content) != e.crc) bad_npz(impl_->path, "entry '" + impl_->names[i] + "' fails its CRC-32 check");
  impl_->stream.clear();
  impl_->stream.str(std::move(content));
  return impl_->stream;
}

struct npz_writer::impl {
  std::string path;
  bool compressed = false;
  std::vector<std::string> names;
  std::unordered_set<std::string> given;
  std::vector<std::ostringstream> streams;
};

npz_writer::npz_writer(const std::string& path, bool compressed) : impl_(std::make_shared<impl>()) {
  impl_->path = path;
  impl_->compressed = compressed;
}
npz_writer::~npz_writer() = default;
std::ostream& npz_writer::add(const std::string& name) {
  if (!impl_->given.insert(name).second) throw error("save_npz: the name '" + name + "' is given twice");
  if (name.size() + 4 > 0xffff) throw error("save_npz: the name '" + name.substr(0, 64) + "...' is too long");
  impl_->names.push_back(name + ".npy");
  impl_->streams.emplace_back(std::ios::binary);
  return impl_->streams.back();
}
void npz_writer::finish() {
  std::string file, dir;
  for (std::size_t i = 0; i < impl_->names.size(); ++i) {
    const std::string& name = impl_->names[i];
    std::string data = impl_->streams[i].str();
    const std::uint64_t usize = data.size();
    const std::uint32_t crc = crc32_of(data);
    if (impl_->compressed) data = deflate_entry(data);
    const std::uint64_t csize = data.size(), offset = file.size();
    // ZIP64 where a size or the offset does not fit in 32 bits: the local header then carries
    // both sizes in its extra field, the central directory each field that does not fit.
    const bool big = usize >= zip32_limit || csize >= zip32_limit, far = offset >= zip32_limit;
    const std::uint16_t method = impl_->compressed ? deflated : stored;
    const std::uint16_t version = big || far ? zip64_version : zip_version;
    put32(file, local_signature);
    put16(file, version);
    put16(file, 0);  // flags
    put16(file, method);
    put16(file, 0);  // time
    put16(file, dos_date);
    put32(file, crc);
    put32(file, static_cast<std::uint32_t>(big ? zip32_limit : csize));
    put32(file, static_cast<std::uint32_t>(big ? zip32_limit : usize));
    put16(file, static_cast<std::uint32_t>(name.size()));
    put16(file, big ? 20 : 0);  // extra
    file += name;
    if (big) {
      put16(file, zip64_extra);
      put16(file, 16);
      put64(file, usize);
      put64(file, csize);
    }
    file += data;
    std::string extra;
    if (usize >= zip32_limit) put64(extra, usize);
    if (csize >= zip32_limit) put64(extra, csize);
    if (far) put64(extra, offset);
    put32(dir, central_signature);
    put16(dir, version);  // made by
    put16(dir, version);  // needed
    put16(dir, 0);
    put16(dir, method);
    put16(dir, 0);
    put16(dir, dos_date);
    put32(dir, crc);
    put32(dir, static_cast<std::uint32_t>(std::min(csize, zip32_limit)));
    put32(dir, static_cast<std::uint32_t>(std::min(usize, zip32_limit)));
    put16(dir, static_cast<std::uint32_t>(name.size()));
    put16(dir, extra.empty() ? 0 : static_cast<std::uint32_t>(4 + extra.size()));
    put16(dir, 0);  // comment
    put16(dir, 0);  // disk
    put16(dir, 0);  // internal attributes
    put32(dir, 0);  // external attributes
    put32(dir, static_cast<std::uint32_t>(std::min(offset, zip32_limit)));
    dir += name;
    if (!extra.empty()) {
      put16(dir, zip64_extra);
      put16(dir, static_cast<std::uint32_t>(extra.size()));
      dir += extra;
    }
  }
  const std::uint64_t count = impl_->names.size(), dir_offset = file.size(), dir_size = dir.size();
  file += dir;
  if (count >= 0xffff || dir_offset >= zip32_limit || dir_size >= zip32_limit) {
    const std::uint64_t record_offset = file.size();
    put32(file, zip64_end_signature);
    put64(file, 44);  // the record's size after this field
    put16(file, zip64_version);
    put16(file, zip64_version);
    put32(file, 0);  // this disk
    put32(file, 0);  // the directory's disk
    put64(file, count);
    put64(file, count);
    put64(file, dir_size);
    put64(file, dir_offset);
    put32(file, zip64_locator_signature);
    put32(file, 0);
    put64(file, record_offset);
    put32(file, 1);  // disks
  }
  put32(file, end_signature);
  put16(file, 0);
  put16(file, 0);
  put16(file, static_cast<std::uint32_t>(std::min<std::uint64_t>(count, 0xffff)));
  put16(file, static_cast<std::uint32_t>(std::min<std::uint64_t>(count, 0xffff)));
  put32(file, static_cast<std::uint32_t>(std::min(dir_size, zip32_limit)));
  put32(file, static_cast<std::uint32_t>(std::min(dir_offset, zip32_limit)));
  put16(file, 0);  // comment
  std::ofstream out(impl_->path, std::ios::binary | std::ios::trunc);
  if (!out) throw io_error("save_npz: cannot open '" + impl_->path + "' for writing");
  out.write(file.data(), static_cast<std::streamsize>(file.size()));
  if (!out) throw io_error("save_npz: failed writing '" + impl_->path + "'");
}
}  // namespace strata::detail

// SPDX-License-Identifier: MIT
// .npz archives as np.savez writes them: a ZIP file of stored (uncompressed) .npy entries, one
// per array, named "<key>.npy" (PKWARE's APPNOTE: local headers, a central directory, its end
// record; CRC-32 of each entry). Reading walks the central directory and checks every offset
// and size against the file, then reads one entry at a time and checks its CRC-32, so a
// corrupted archive gives io_error, never a read outside the file nor more memory than the file
// holds.
module;
#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>
module strata.io;

namespace strata::detail {
namespace {
constexpr std::uint32_t local_signature = 0x04034b50, central_signature = 0x02014b50, end_signature = 0x06054b50;
constexpr std::uint16_t zip_version = 20;   // 2.0: stored entries, no ZIP64
constexpr std::uint16_t dos_date = 0x21;    // 1980-01-01, as np.savez's zipfile writes for no time
constexpr std::uint64_t zip32_limit = 0xffffffffu;

constexpr std::array<std::uint32_t, 256> crc_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<std::uint32_t, 256> crc_lookup = crc_table();

std::uint32_t crc32(const std::string& bytes) {
  std::uint32_t c = 0xffffffffu;
  for (const char ch : bytes) c = crc_lookup[(c ^ static_cast<unsigned char>(ch)) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void put16(std::string& out, std::uint32_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}
std::uint32_t get16(const std::string& s, std::size_t at) {
  return static_cast<unsigned char>(s[at]) | static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 8;
}
std::uint32_t get32(const std::string& s, std::size_t at) { return get16(s, at) | get16(s, at + 2) << 16; }

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
}  // namespace

// Entries are located when the archive is opened and read one at a time by open(), so that
// at most one entry's bytes (checked against the file's size) are held at once.
struct npz_reader::impl {
  struct entry {
    std::uint64_t data = 0, size = 0;
    std::uint32_t crc = 0;
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
  const std::uint32_t entries = get16(tail, end + 10), dir_size = get32(tail, end + 12), dir_offset = get32(tail, end + 16);
  if (get16(tail, end + 4) != 0 || get16(tail, end + 6) != 0 || get16(tail, end + 8) != entries)
    bad_npz(path, "multi-disk archives are not read");
  if (entries == 0xffff || dir_offset == zip32_limit) bad_npz(path, "ZIP64 archives are not read");
  const std::string dir = read_at(in, size, dir_offset, dir_size, path, "the central directory");
  std::size_t at = 0;
  for (std::uint32_t e = 0; e < entries; ++e) {
    if (at + 46 > dir.size() || get32(dir, at) != central_signature) bad_npz(path, "a malformed central directory");
    const std::uint32_t method = get16(dir, at + 10), crc = get32(dir, at + 16), csize = get32(dir, at + 20),
                        usize = get32(dir, at + 24), name_len = get16(dir, at + 28), extra_len = get16(dir, at + 30),
                        comment_len = get16(dir, at + 32), local = get32(dir, at + 42);
    if (at + 46 + name_len > dir.size()) bad_npz(path, "a malformed central directory");
    std::string name = dir.substr(at + 46, name_len);
    at += 46 + name_len + extra_len + comment_len;
    if (method != 0)
      throw io_error("load_npz: entry '" + name + "' of '" + path +
                     "' is compressed; strata reads stored entries (np.savez, not np.savez_compressed)");
    if (csize != usize || csize == zip32_limit) bad_npz(path, "entry '" + name + "' has inconsistent sizes");
    const std::string header = read_at(in, size, local, 30, path, "a local header");
    if (get32(header, 0) != local_signature) bad_npz(path, "entry '" + name + "' has no local header");
    const std::uint64_t data = std::uint64_t{local} + 30 + get16(header, 26) + get16(header, 28);
    if (data > size || csize > size - data) bad_npz(path, "entry '" + name + "' lies outside the file");
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    impl_->names.push_back(std::move(name));
    impl_->entries.push_back({data, csize, crc});
  }
  impl_->file_size = size;
}
npz_reader::~npz_reader() = default;
std::size_t npz_reader::size() const noexcept { return impl_->names.size(); }
const std::string& npz_reader::name(std::size_t i) const { return impl_->names.at(i); }
std::istream& npz_reader::open(std::size_t i) {
  const impl::entry& e = impl_->entries.at(i);
  std::string content = read_at(impl_->in, impl_->file_size, e.data, e.size, impl_->path, "an entry's data");
  if (crc32(content) != e.crc) bad_npz(impl_->path, "entry '" + impl_->names[i] + "' fails its CRC-32 check");
  impl_->stream.clear();
  impl_->stream.str(std::move(content));
  return impl_->stream;
}

struct npz_writer::impl {
  std::string path;
  std::vector<std::string> names;
  std::vector<std::ostringstream> streams;
};

npz_writer::npz_writer(const std::string& path) : impl_(std::make_shared<impl>()) { impl_->path = path; }
npz_writer::~npz_writer() = default;
std::ostream& npz_writer::add(const std::string& name) {
  for (const std::string& n : impl_->names)
    if (n == name + ".npy") throw error("save_npz: the name '" + name + "' is given twice");
  impl_->names.push_back(name + ".npy");
  impl_->streams.emplace_back(std::ios::binary);
  return impl_->streams.back();
}
void npz_writer::finish() {
  std::string file, dir;
  for (std::size_t i = 0; i < impl_->names.size(); ++i) {
    const std::string& name = impl_->names[i];
    const std::string content = impl_->streams[i].str();
    if (content.size() >= zip32_limit || file.size() >= zip32_limit || name.size() > 0xffff)
      throw error("save_npz: '" + impl_->path + "' would need ZIP64 (an entry or the archive over 4 GiB)");
    const std::uint32_t crc = crc32(content), n = static_cast<std::uint32_t>(content.size());
    const auto offset = static_cast<std::uint32_t>(file.size());
    put32(file, local_signature);
    put16(file, zip_version);
    put16(file, 0);  // flags
    put16(file, 0);  // stored
    put16(file, 0);  // time
    put16(file, dos_date);
    put32(file, crc);
    put32(file, n);
    put32(file, n);
    put16(file, static_cast<std::uint32_t>(name.size()));
    put16(file, 0);  // extra
    file += name;
    file += content;
    put32(dir, central_signature);
    put16(dir, zip_version);  // made by
    put16(dir, zip_version);  // needed
    put16(dir, 0);
    put16(dir, 0);
    put16(dir, 0);
    put16(dir, dos_date);
    put32(dir, crc);
    put32(dir, n);
    put32(dir, n);
    put16(dir, static_cast<std::uint32_t>(name.size()));
    put16(dir, 0);  // extra
    put16(dir, 0);  // comment
    put16(dir, 0);  // disk
    put16(dir, 0);  // internal attributes
    put32(dir, 0);  // external attributes
    put32(dir, offset);
    dir += name;
  }
  if (impl_->names.size() >= 0xffff || file.size() + dir.size() >= zip32_limit)
    throw error("save_npz: '" + impl_->path + "' would need ZIP64 (65535 entries or 4 GiB)");
  const auto dir_offset = static_cast<std::uint32_t>(file.size());
  const auto count = static_cast<std::uint32_t>(impl_->names.size());
  file += dir;
  put32(file, end_signature);
  put16(file, 0);
  put16(file, 0);
  put16(file, count);
  put16(file, count);
  put32(file, static_cast<std::uint32_t>(dir.size()));
  put32(file, dir_offset);
  put16(file, 0);  // comment
  std::ofstream out(impl_->path, std::ios::binary | std::ios::trunc);
  if (!out) throw io_error("save_npz: cannot open '" + impl_->path + "' for writing");
  out.write(file.data(), static_cast<std::streamsize>(file.size()));
  if (!out) throw io_error("save_npz: failed writing '" + impl_->path + "'");
}
}  // namespace strata::detail

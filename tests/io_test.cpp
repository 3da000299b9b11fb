// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>
#include "golden.hpp"
#include "tensor_values.hpp"
import strata;
using namespace strata;

namespace {
template <class T>
Tensor<T> parse_values(const std::string& line, const std::vector<std::int64_t>& shape) {
  std::istringstream in(line);
  std::vector<T> vals;
  for (std::string tok; in >> tok;) {
    if constexpr (test::is_complex_v<T>) {
      const auto parts = golden::split(tok, ',');
      vals.emplace_back(std::stod(parts[0]), std::stod(parts[1]));
    } else if constexpr (std::is_integral_v<T>) {
      vals.push_back(static_cast<T>(std::stoll(tok)));
    } else {
      vals.push_back(T(static_cast<float>(std::stod(tok))));
    }
  }
  if constexpr (std::is_same_v<T, double>) {  // exact doubles: re-parse without the float step
    vals.clear();
    std::istringstream again(line);
    for (std::string tok; again >> tok;) vals.push_back(std::stod(tok));
  }
  return from_vector<T>(vals, shape);
}

std::string repr(const std::string& type, const std::string& values, const std::vector<std::int64_t>& shape) {
  if (type == "bool") return to_string(parse_values<bool>(values, shape));
  if (type == "uint8") return to_string(parse_values<std::uint8_t>(values, shape));
  if (type == "int8") return to_string(parse_values<std::int8_t>(values, shape));
  if (type == "int16") return to_string(parse_values<std::int16_t>(values, shape));
  if (type == "int32") return to_string(parse_values<std::int32_t>(values, shape));
  if (type == "int64") return to_string(parse_values<std::int64_t>(values, shape));
  if (type == "float16") return to_string(parse_values<half>(values, shape));
  if (type == "bfloat16") return to_string(parse_values<bfloat16>(values, shape));
  if (type == "float32") return to_string(parse_values<float>(values, shape));
  if (type == "float64") return to_string(parse_values<double>(values, shape));
  if (type == "complex64") return to_string(parse_values<std::complex<float>>(values, shape));
  if (type == "complex128") return to_string(parse_values<std::complex<double>>(values, shape));
  throw std::runtime_error("unknown dtype " + type);
}

std::string npy(const std::string& name) { return golden::path("npy/" + name); }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct temp_file {
  std::string path;
  explicit temp_file(const std::string& name)
      : path((std::filesystem::temp_directory_path() / ("strata_io_test_" + name)).string()) {}
  ~temp_file() { std::remove(path.c_str()); }
};
}  // namespace

TEST_CASE("printing matches torch's repr (golden)", "[io][print]") {
  std::ifstream in(golden::path("print.txt"));
  int cases = 0;
  for (std::string header; std::getline(in, header);) {
    if (header.rfind("@ ", 0) != 0) continue;
    std::istringstream h(header.substr(2));
    std::string type, shape_text;
    h >> type;
    std::getline(h, shape_text);
    std::string values, expected, line;
    std::getline(in, values);
    while (std::getline(in, line) && line != "@end") expected += (expected.empty() ? "" : "\n") + line;
    INFO(header);
    CHECK(repr(type, values, golden::parse_shape(shape_text)) == expected);
    ++cases;
  }
  CHECK(cases > 30);
}

TEST_CASE("printing: seeds and views and the stream operator", "[io][print]") {
  auto t = from_vector<std::int64_t>({2, 4, 6, 5, 7, 9}, {2, 3});
  CHECK(to_string(t) == "tensor([[2, 4, 6],\n        [5, 7, 9]])");
  std::ostringstream os;
  os << t.t();
  CHECK(os.str() == "tensor([[2, 5],\n        [4, 7],\n        [6, 9]])");
  CHECK(to_string(from_vector<float128>({float128(1) / 4})) == "tensor([0.2500], dtype=strata.float128)");
}

TEST_CASE("load_npy reads NumPy's files", "[io][npy]") {
  auto a = load_npy<float>(npy("f32_c.npy"));
  CHECK(a.to_vector() == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1, 1.25f});
  auto f = load_npy<float>(npy("f32_fortran.npy"));
  CHECK(f.to_vector() == a.to_vector());
  CHECK(f.stride(0) == 1);
  CHECK(load_npy<double>(npy("f64_big.npy")).to_vector() == std::vector<double>{-2.5, -1.5, -0.5, 0.5, 1.5});
  CHECK(load_npy<std::int32_t>(npy("i32_big.npy")).to_vector() == std::vector<std::int32_t>{1, -2, 300000, -4});
  auto s = load_npy<std::int64_t>(npy("i64_scalar.npy"));
  CHECK(s.dim() == 0);
  CHECK(s.item() == 42);
  CHECK(load_npy<bool>(npy("bool.npy")).to_vector() == std::vector<bool>{true, false, true});
  auto u = load_npy<std::uint8_t>(npy("u8_3d.npy"));
  CHECK(u.size(2) == 4);
  CHECK(u.at({1, 2, 3}) == 23);
  auto h = load_npy<half>(npy("f16.npy")).to_vector();
  CHECK(static_cast<float>(h[2]) == 65504.0f);
  CHECK(load_npy<std::complex<float>>(npy("c64.npy")).to_vector()[1] == std::complex<float>(-3, -4));
  CHECK(load_npy<std::complex<double>>(npy("c128_big.npy")).to_vector()[0] == std::complex<double>(1, 2));
  CHECK(load_npy<float>(npy("empty_0x3.npy")).size(1) == 3);
}

TEST_CASE("load_npy refuses wrong types and malformed files", "[io][npy][errors]") {
  CHECK_THROWS_AS(load_npy<double>(npy("f32_c.npy")), dtype_error);
  CHECK_THROWS_WITH(load_npy<std::int64_t>(npy("i32_big.npy")),
                    Catch::Contains("holds dtype '>i4', expected '<i8'"));
  CHECK_THROWS_AS(load_npy<float>(npy("truncated.npy")), io_error);
  CHECK_THROWS_AS(load_npy<float>(npy("does_not_exist.npy")), io_error);
  const std::string good = read_bytes(npy("f32_c.npy"));
  temp_file tmp("bad.npy");
  auto check_bad = [&](std::string bytes) {
    std::ofstream(tmp.path, std::ios::binary) << bytes;
    CHECK_THROWS_AS(load_npy<float>(tmp.path), error);
  };
  check_bad("");
  check_bad("not a npy file at all");
  check_bad(good.substr(0, 9));
  std::string b = good;
  b[6] = 9;  // version 9
  check_bad(b);
  b = good;
  b.replace(b.find("shape"), 5, "shope");
  check_bad(b);
  b = good;
  b.replace(b.find("(2, 3)"), 6, "(2, -)");
  check_bad(b);
  b = good;
  b.replace(b.find("False"), 5, "Maybe");
  check_bad(b);
  b = good;
  b[8] = '\xff';
  b[9] = '\x7f';  // header length past the end
  check_bad(b);
  b = good;
  b.replace(b.find("(2, 3)"), 6, "(9, 9)");
  check_bad(b);
}

TEST_CASE("save_npy writes what NumPy writes in logical order", "[io][npy]") {
  temp_file tmp("out.npy");
  auto a = load_npy<float>(npy("f32_c.npy"));
  save_npy(tmp.path, a);
  CHECK(read_bytes(tmp.path) == read_bytes(npy("f32_c.npy")));
  auto u = arange<std::uint8_t>(24).view({2, 3, 4});
  save_npy(tmp.path, u);
  CHECK(read_bytes(tmp.path) == read_bytes(npy("u8_3d.npy")));
  save_npy(tmp.path, from_vector<std::int16_t>({7, -8, 9}));
  CHECK(read_bytes(tmp.path) == read_bytes(npy("i16_1d.npy")));
  save_npy(tmp.path, load_npy<std::int64_t>(npy("i64_scalar.npy")));
  CHECK(read_bytes(tmp.path) == read_bytes(npy("i64_scalar.npy")));
  auto t = arange<double>(12).view({3, 4}).t().slice(0, 0, 4, 2);  // strided
  save_npy(tmp.path, t);
  auto back = load_npy<double>(tmp.path);
  CHECK(back.to_vector() == t.to_vector());
  CHECK(back.is_contiguous());
  CHECK_THROWS_AS(save_npy(tmp.path, zeros<bfloat16>({2})), dtype_error);
  CHECK_THROWS_AS(save_npy("/nonexistent-dir/x.npy", a), io_error);
}

namespace {
// The arrays tools/make_golden.py writes into stored.npz, deflated.npz and zip64.npz.
void check_golden_npz(const std::string& file) {
  INFO(file);
  NpzFile in(npy(file));
  REQUIRE(in.size() == 8);
  const std::vector<std::string> names = {"f32", "i64", "zeros", "f64_fortran", "i16_big", "scalar", "empty", "u8"};
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(in.name(i) == names[i]);
  CHECK(in.dtype(0) == dtype::float32);
  CHECK(in.dtype(4) == dtype::int16);
  CHECK(in.read<float>(0).to_vector() == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1, 1.25f});
  CHECK(in.read<std::int64_t>(1).to_vector() == std::vector<std::int64_t>{1, -2, 3});
  const auto z = in.read<double>(2);
  CHECK(z.size(0) == 40);
  CHECK(z.to_vector() == std::vector<double>(2000, 0.0));
  const auto f = in.read<double>(3);
  CHECK(f.stride(0) == 1);
  CHECK(f.at({2, 3}) == 11 - 5.5);
  CHECK(in.read<std::int16_t>(4).to_vector() == std::vector<std::int16_t>{7, -8, 300});
  CHECK(in.read<double>(5).dim() == 0);
  CHECK(in.read<double>(5).item() == 2.5);
  CHECK(in.read<float>(6).numel() == 0);
  CHECK(in.read<std::uint8_t>(7).at({199}) == 199);
  CHECK_THROWS_AS(in.read<float>(1), dtype_error);
}
}  // namespace

TEST_CASE("NpzFile reads np.savez and np.savez_compressed archives, ZIP64 too", "[io][npz]") {
  check_golden_npz("stored.npz");
  check_golden_npz("deflated.npz");
  check_golden_npz("zip64.npz");
  CHECK_THROWS_AS(load_npz<double>(npy("deflated.npz")), dtype_error);  // its first entry is float32
}

TEST_CASE("save_npz_compressed and NpzWriter write deflated archives strata and NumPy read", "[io][npz]") {
  temp_file stored("stored.npz"), deflated("deflated.npz"), mixed("mixed.npz");
  const auto a = arange<double>(12).view({3, 4}).t();  // strided
  const auto z = zeros<double>({100, 100});
  save_npz<double>(stored.path, {{"a", a}, {"z", z}});
  save_npz_compressed<double>(deflated.path, {{"a", a}, {"z", z}});
  CHECK(std::filesystem::file_size(deflated.path) * 20 < std::filesystem::file_size(stored.path));
  const auto back = load_npz<double>(deflated.path);
  REQUIRE(back.size() == 2);
  CHECK(back[0].first == "a");
  CHECK(back[0].second.to_vector() == a.to_vector());
  CHECK(back[1].second.to_vector() == z.to_vector());
  // Entries of several dtypes, deflated.
  NpzWriter out(mixed.path, true);
  out.add("f32", NpzFile(npy("deflated.npz")).read<float>(0));
  out.add("ids", from_vector<std::int64_t>({1, -2, 3}, {1, 3}));
  out.add("empty", zeros<float>({0, 3}));
  out.finish();
  NpzFile in(mixed.path);
  REQUIRE(in.size() == 3);
  CHECK(in.read<float>(0).to_vector() == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1, 1.25f});
  CHECK(in.read<std::int64_t>(1).to_vector() == std::vector<std::int64_t>{1, -2, 3});
  CHECK(in.read<float>(2).size(1) == 3);
}

TEST_CASE("save_npz writes a ZIP64 archive when it has 65535 entries or more", "[io][npz]") {
  temp_file many("many.npz");
  std::vector<std::pair<std::string, Tensor<std::int16_t>>> arrays;
  for (int i = 0; i < 70000; ++i) arrays.emplace_back("a" + std::to_string(i), full<std::int16_t>({1}, static_cast<std::int16_t>(i % 1000)));
  save_npz(many.path, arrays);
  const std::string bytes = read_bytes(many.path);
  CHECK(bytes.find(std::string("PK\x06\x06", 4)) != std::string::npos);  // the ZIP64 end record
  NpzFile in(many.path);
  REQUIRE(in.size() == 70000);
  CHECK(in.name(69999) == "a69999");
  CHECK(in.read<std::int16_t>(69999).item() == 999);
}

TEST_CASE("load_npz refuses malformed archives with io_error", "[io][npz][errors]") {
  temp_file tmp("bad.npz");
  const std::string good = read_bytes(npy("deflated.npz"));
  const auto check_bad = [&](const std::string& bytes, const std::string& why) {
    INFO(why);
    std::ofstream(tmp.path, std::ios::binary) << bytes;
    CHECK_THROWS_AS([&] {
      NpzFile in(tmp.path);
      for (std::size_t i = 0; i < in.size(); ++i) (void)in.dtype(i);
    }(), io_error);
  };
  check_bad(good.substr(0, good.size() - 30), "truncated end record");
  std::string b = good;
  b[good.find("f32.npy") + 40] ^= 0x55;  // inside the first entry's deflate stream
  check_bad(b, "corrupted deflate data");
  b = good;
  const std::size_t central = good.find(std::string("PK\x01\x02", 4));
  b[central + 24] = '\xff';  // the first entry's uncompressed size, larger than it inflates to
  b[central + 25] = '\xff';
  check_bad(b, "a wrong uncompressed size");
  b = good;
  b[central + 10] = 12;  // bzip2
  CHECK_THROWS_WITH([&] {
    std::ofstream(tmp.path, std::ios::binary) << b;
    NpzFile in(tmp.path);
  }(), Catch::Contains("uses compression method 12"));
  const std::string z64 = read_bytes(npy("zip64.npz"));
  b = z64;
  b[z64.find(std::string("PK\x06\x07", 4)) + 8] ^= 0x40;  // the locator's offset of the ZIP64 record
  check_bad(b, "a ZIP64 locator pointing elsewhere");
}

namespace {
std::string safetensors(const std::string& name) { return golden::path("safetensors/" + name); }
}  // namespace

TEST_CASE("SafetensorsFile reads every dtype of a file written to the format by Python", "[io][safetensors]") {
  const SafetensorsFile f(safetensors("mixed.safetensors"));
  CHECK(f.size() == 13);
  // In the order of their data: widest types first, then by name (an empty tensor shares f32's offset).
  CHECK(f.keys() == std::vector<std::string>{"c64", "f64_scalar", "i64", "empty", "f32", "i32", "bf16", "f16", "i16",
                                             "u16", "flags", "i8", "u8"});
  REQUIRE(f.metadata().size() == 2);
  CHECK(f.metadata()[0] == std::pair<std::string, std::string>{"format", "pt"});
  CHECK(f.metadata()[1].second == "strata \u2014 \u00fcn\u00efcode \u2713");  // JSON's \u escapes, as UTF-8
  CHECK(f.dtype("bf16") == dtype::bfloat16);
  CHECK(f.sizes("i64") == std::vector<std::int64_t>{2, 2});
  CHECK(f.get<float>("f32").to_vector() == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1, 1.25f});
  CHECK(f.get<double>("f64_scalar").dim() == 0);
  CHECK(f.get<double>("f64_scalar").item() == -2.5);
  std::vector<double> bf16;
  for (const bfloat16 v : f.get<bfloat16>("bf16").to_vector()) bf16.push_back(static_cast<float>(v));
  CHECK(bf16 == std::vector<double>{1.0, -2.5, static_cast<float>(bfloat16(3.14159f)), static_cast<float>(bfloat16(1e-3f)),
                                    static_cast<float>(bfloat16(65504.0f))});
  CHECK(static_cast<float>(f.get<half>("f16").to_vector()[2]) == 65504.0f);
  CHECK(f.get<std::int64_t>("i64").to_vector() == std::vector<std::int64_t>{1, -2, 3, std::int64_t{1} << 40});
  CHECK(f.get<std::int32_t>("i32").to_vector() == std::vector<std::int32_t>{7, -8, 300000});
  CHECK(f.get<std::int16_t>("i16").to_vector() == std::vector<std::int16_t>{-300, 301});
  CHECK(f.get<std::int8_t>("i8").to_vector() == std::vector<std::int8_t>{-128, 127, 0});
  CHECK(f.get<std::uint8_t>("u8").to_vector() == std::vector<std::uint8_t>{0, 50, 100, 150, 200});
  CHECK(f.get<bool>("flags").to_vector() == std::vector<bool>{true, false, true});
  CHECK(f.get<std::complex<float>>("c64").to_vector()[1] == std::complex<float>(-3, -4));
  CHECK(f.get<float>("empty").numel() == 0);
  CHECK(f.get<float>("empty").size(1) == 3);
  // Errors: a dtype strata lacks, another dtype, no such tensor.
  CHECK_THROWS_WITH(f.dtype("u16"), Catch::Contains("holds U16, which strata has no dtype for"));
  CHECK_THROWS_AS(f.get<std::int16_t>("u16"), dtype_error);
  CHECK_THROWS_WITH(f.get<double>("f32"), Catch::Contains("holds F32, not float64"));
  CHECK_THROWS_AS(f.get<float>("nope"), index_error);
}

TEST_CASE("SafetensorsFile's tensors view the mapped file, privately", "[io][safetensors]") {
  temp_file tmp("copy.safetensors");
  std::ofstream(tmp.path, std::ios::binary) << read_bytes(safetensors("mixed.safetensors"));
  Tensor<float> kept;
  {
    const SafetensorsFile f(tmp.path);
    const auto a = f.get<float>("f32"), b = f.get<float>("f32");
    CHECK(a.data_ptr() == b.data_ptr());  // the same bytes of the mapping, not two copies
    kept = f.get<float>("f32");
  }  // the file object goes; its tensors keep the mapping
  CHECK(kept.to_vector() == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1, 1.25f});
  kept.fill_(7.0f);  // copy-on-write: the file keeps its data
  CHECK(SafetensorsFile(tmp.path).get<float>("f32").to_vector() == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1, 1.25f});
  // Data that is not aligned for its type is copied, with the same values.
  const SafetensorsFile m(safetensors("misaligned.safetensors"));
  CHECK(m.get<float>("f32").to_vector() == std::vector<float>{1.5f, -2.0f});
  CHECK(m.get<std::uint8_t>("byte").item() == 9);
}

TEST_CASE("save_safetensors and SafetensorsWriter write what SafetensorsFile reads back", "[io][safetensors]") {
  temp_file tmp("out.safetensors");
  const auto w = arange<float>(12).view({3, 4}).t();  // strided: written in logical order
  const auto ids = from_vector<std::int64_t>({5, -6});
  const auto h = from_vector<float>({0.5f, -1.25f}).to<bfloat16>();
  SafetensorsWriter out(tmp.path);
  out.add("weight", w);
  out.add("ids", ids);
  out.add("h", h);
  out.add("scalar", full<double>({}, 4.5));
  out.finish({{"quote \"and\" newline\n", "\\ back"}});
  const SafetensorsFile f(tmp.path);
  CHECK(f.keys() == std::vector<std::string>{"ids", "scalar", "weight", "h"});
  CHECK(f.get<float>("weight").to_vector() == w.to_vector());
  CHECK(f.get<std::int64_t>("ids").to_vector() == ids.to_vector());
  CHECK(f.get<bfloat16>("h").to<float>().to_vector() == std::vector<float>{0.5f, -1.25f});
  CHECK(f.get<double>("scalar").item() == 4.5);
  REQUIRE(f.metadata().size() == 1);
  CHECK(f.metadata()[0].first == "quote \"and\" newline\n");
  CHECK(f.metadata()[0].second == "\\ back");
  CHECK((read_bytes(tmp.path).size() - (48 + 16 + 8 + 4)) % 8 == 0);  // the header is padded to 8 bytes
  save_safetensors<float>(tmp.path, {{"a", w}, {"b", zeros<float>({0})}});
  const auto back = load_safetensors<float>(tmp.path);
  REQUIRE(back.size() == 2);
  CHECK(back[0].second.to_vector() == w.to_vector());
  CHECK(back[1].second.numel() == 0);
  SafetensorsWriter bad(tmp.path);
  CHECK_THROWS_AS(bad.add("q", zeros<float128>({1})), dtype_error);
  bad.add("x", w);
  bad.add("x", w);
  CHECK_THROWS_WITH(bad.finish(), Catch::Contains("the name 'x' is given twice"));
}

TEST_CASE("SafetensorsFile refuses malformed headers with io_error", "[io][safetensors][errors]") {
  temp_file tmp("bad.safetensors");
  const auto header_file = [](const std::string& header, const std::string& data) {
    std::string out(8, '\0');
    std::uint64_t n = header.size();
    for (int k = 0; k < 8; ++k) out[static_cast<std::size_t>(k)] = static_cast<char>((n >> (8 * k)) & 0xff);
    return out + header + data;
  };
  const auto check_bad = [&](const std::string& file, const std::string& why) {
    INFO(why);
    std::ofstream(tmp.path, std::ios::binary | std::ios::trunc) << file;
    CHECK_THROWS_AS(SafetensorsFile(tmp.path), io_error);
  };
  const std::string ok = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::ofstream(tmp.path, std::ios::binary | std::ios::trunc) << header_file(ok, std::string(8, '\0'));
  CHECK(SafetensorsFile(tmp.path).get<float>("a").to_vector() == std::vector<float>{0, 0});
  check_bad(header_file(ok, std::string(7, '\0')), "data shorter than the tensors");
  check_bad(header_file(ok, std::string(9, '\0')), "data longer than the tensors");
  check_bad(header_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')), "shape and offsets disagree");
  check_bad(header_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", std::string(8, '\0')), "a gap");
  check_bad(header_file(R"({"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0')), "unknown dtype");
  check_bad(header_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[0],"data_offsets":[8,8]}})", std::string(8, '\0')), "a name twice");
  check_bad(header_file(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", std::string(8, '\0')), "a negative size");
  check_bad(header_file(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}})", std::string(8, '\0')), "an overflowing shape");
  check_bad(header_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", std::string(8, '\0')), "an unknown key");
  check_bad(header_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} x)", std::string(8, '\0')), "text after the object");
  check_bad(header_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8])", std::string(8, '\0')), "an unclosed object");
  check_bad(header_file(R"({"a\ud800":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0')), "a lone surrogate");
  check_bad(header_file(R"([1,2])", ""), "not an object");
  check_bad(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10), "a header length past the end");
  check_bad(std::string("\x02\0\0", 3), "shorter than 8 bytes");
  CHECK_THROWS_AS(SafetensorsFile("/nonexistent-dir/x.safetensors"), io_error);
}

namespace {
// A tensor made by another framework: a buffer of doubles it owns, shared through DLPack with a
// deleter that counts its calls.
struct foreign {
  std::vector<double> buffer = std::vector<double>(24);
  std::vector<std::int64_t> shape, strides;
  int deleted = 0;
  strata::dlpack::DLManagedTensorVersioned m{};
  foreign(std::vector<std::int64_t> sizes, std::vector<std::int64_t> steps, std::uint64_t byte_offset, std::uint64_t flags = 0)
      : shape(std::move(sizes)), strides(std::move(steps)) {
    for (std::size_t k = 0; k < buffer.size(); ++k) buffer[k] = static_cast<double>(k);
    m.version = {1, 3};
    m.manager_ctx = this;
    m.deleter = [](strata::dlpack::DLManagedTensorVersioned* self) { ++static_cast<foreign*>(self->manager_ctx)->deleted; };
    m.flags = flags;
    m.dl_tensor = {buffer.data(), {strata::dlpack::kDLCPU, 0}, static_cast<std::int32_t>(shape.size()),
                   {strata::dlpack::kDLFloat, 64, 1}, shape.data(), strides.empty() ? nullptr : strides.data(), byte_offset};
  }
};
}  // namespace

TEST_CASE("DLPack: from_dlpack views a foreign tensor with its strides and calls its deleter once", "[io][dlpack]") {
  foreign f({3, 2}, {5, 3}, 2 * sizeof(double));  // rows 5 apart, columns 3 apart, from element 2
  {
    auto t = from_dlpack<double>(&f.m);
    CHECK(t.data_ptr() == f.buffer.data() + 2);
    CHECK(t.to_vector() == std::vector<double>{2, 5, 7, 10, 12, 15});
    auto row = t[1];
    t = zeros<double>({1});
    CHECK(f.deleted == 0);  // a view still holds the memory
    row.fill_(-1);          // and writes reach it
    CHECK(f.buffer[7] == -1);
    CHECK(f.buffer[10] == -1);
  }
  CHECK(f.deleted == 1);
  foreign compact({2, 3}, {}, 0);  // no strides: row-major
  CHECK(from_dlpack<double>(&compact.m).to_vector() == std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK(compact.deleted == 1);
}

TEST_CASE("DLPack: a read-only tensor refuses strata's writes", "[io][dlpack]") {
  foreign f({2, 3}, {}, 0, strata::dlpack::flag_read_only);
  const auto t = from_dlpack<double>(&f.m);
  CHECK(t.storage().is_read_only());
  CHECK(strata::sum(t).item() == 15);  // reading is fine
  CHECK_THROWS_WITH(t.fill_(1), Catch::Contains("read-only"));
  CHECK_THROWS_WITH(t.copy_(zeros<double>({2, 3})), Catch::Contains("read-only"));
  CHECK_THROWS_WITH(t.assign(t * 2), Catch::Contains("read-only"));
  CHECK_THROWS_WITH(t[0].assign(1.0), Catch::Contains("read-only"));
  CHECK_THROWS_WITH(uniform_(t), Catch::Contains("read-only"));
  CHECK(f.buffer[1] == 1);
  auto mine = t.clone();
  mine.fill_(3);  // a copy is the caller's own
  CHECK(mine.to_vector() == std::vector<double>(6, 3.0));
}

TEST_CASE("DLPack: from_dlpack refuses other devices, dtypes and versions without taking the tensor", "[io][dlpack]") {
  foreign f({2, 3}, {}, 0);
  f.m.dl_tensor.device.device_type = strata::dlpack::kDLCUDA;
  CHECK_THROWS_WITH(from_dlpack<double>(&f.m), Catch::Contains("strata holds CPU tensors only"));
  f.m.dl_tensor.device.device_type = strata::dlpack::kDLCPU;
  CHECK_THROWS_AS(from_dlpack<float>(&f.m), dtype_error);
  f.m.version.major = 2;
  CHECK_THROWS_WITH(from_dlpack<double>(&f.m), Catch::Contains("DLPack 2.3 is not supported"));
  f.m.version.major = 1;
  f.strides = {3, -1};
  f.m.dl_tensor.strides = f.strides.data();
  CHECK_THROWS_AS(from_dlpack<double>(&f.m), shape_error);
  f.m.dl_tensor.strides = nullptr;
  f.m.dl_tensor.byte_offset = 4;  // half a double
  CHECK_THROWS_WITH(from_dlpack<double>(&f.m), Catch::Contains("not aligned"));
  CHECK(f.deleted == 0);  // the caller still owns it
}

TEST_CASE("DLPack: to_dlpack shares a strata tensor, and round trips", "[io][dlpack]") {
  const auto t = arange<float>(12).view({3, 4}).t();  // [4, 3], strides [1, 4]
  strata::dlpack::DLManagedTensorVersioned* m = to_dlpack(t);
  CHECK(m->version.major == 1);
  CHECK(m->flags == 0);
  CHECK(m->dl_tensor.device.device_type == strata::dlpack::kDLCPU);
  CHECK(m->dl_tensor.ndim == 2);
  CHECK(m->dl_tensor.shape[0] == 4);
  CHECK(m->dl_tensor.shape[1] == 3);
  CHECK(m->dl_tensor.strides[0] == 1);
  CHECK(m->dl_tensor.strides[1] == 4);
  CHECK(m->dl_tensor.dtype.code == strata::dlpack::kDLFloat);
  CHECK(m->dl_tensor.dtype.bits == 32);
  CHECK(m->dl_tensor.data == t.data_ptr());
  const auto back = from_dlpack<float>(m);  // strata's own tensor through the ABI: the same memory
  CHECK(back.data_ptr() == t.data_ptr());
  CHECK(back.to_vector() == t.to_vector());
  strata::dlpack::DLManagedTensorVersioned* r = to_dlpack(from_vector<bfloat16>({bfloat16(1.5f)}), true);
  CHECK(r->flags == strata::dlpack::flag_read_only);
  CHECK(r->dl_tensor.dtype.code == strata::dlpack::kDLBfloat);
  CHECK(r->dl_tensor.ndim == 1);
  r->deleter(r);  // a consumer done with it
  CHECK_THROWS_WITH(to_dlpack(zeros<float>({2}).requires_grad_()), Catch::Contains("use tensor.detach()"));
  const auto s = to_dlpack(full<std::int64_t>({}, 7));
  CHECK(s->dl_tensor.ndim == 0);
  CHECK(from_dlpack<std::int64_t>(s).item() == 7);
}

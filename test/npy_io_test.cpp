#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "vnnx/support/npy.hpp"

namespace {

std::vector<std::byte> bytes_of(const std::string& s) {
    std::vector<std::byte> v(s.size());
    std::memcpy(v.data(), s.data(), s.size());
    return v;
}

// A version-1 file with the given header text (padded to end with '\n') and data bytes.
std::vector<std::byte> npy_v1(std::string header, const std::string& data) {
    header.push_back('\n');
    std::string s = std::string("\x93NUMPY\x01\x00", 8);
    s.push_back(static_cast<char>(header.size() & 0xFF));
    s.push_back(static_cast<char>(header.size() >> 8));
    return bytes_of(s + header + data);
}

std::string error_of(const std::vector<std::byte>& b) {
    try {
        (void)vnnx::parse_npy(b, "x.npy");
    } catch (const vnnx::error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("npy: round trip of every dtype keeps type, shape and bytes") {
    const std::vector<std::int32_t> v32 = {1, -2, 70000, -2147483647 - 1, 5, 6};
    auto a = vnnx::ndarray::from<std::int32_t>({2, 3}, v32);
    auto bytes = vnnx::to_npy_bytes(a);
    CHECK((bytes.size() - v32.size() * 4) % 64 == 0);  // data starts 64-aligned
    auto b = vnnx::parse_npy(bytes, "mem");
    CHECK(b == a);
    CHECK(b.get<std::int64_t>(3) == -2147483648LL);
    CHECK(b.shape == std::vector<std::int64_t>{2, 3});

    for (auto t : {vnnx::dtype::int8, vnnx::dtype::uint8, vnnx::dtype::int16, vnnx::dtype::int64,
                   vnnx::dtype::float32, vnnx::dtype::bool_}) {
        vnnx::ndarray x(t, {5});
        for (std::size_t i = 0; i < 5; ++i) x.set<int>(i, static_cast<int>(i));
        auto y = vnnx::parse_npy(vnnx::to_npy_bytes(x), "mem");
        CHECK(y == x);
        CHECK(y.get<int>(4) == (t == vnnx::dtype::bool_ ? 1 : 4));
    }
    vnnx::ndarray scalar(vnnx::dtype::float32, {});
    scalar.set(0, 2.5f);
    auto s = vnnx::parse_npy(vnnx::to_npy_bytes(scalar), "mem");
    CHECK(s.shape.empty());
    CHECK(s.get<float>(0) == 2.5f);
}

TEST_CASE("npy: reads NumPy-written headers of versions 1, 2 and 3") {
    auto a = vnnx::parse_npy(npy_v1("{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", "\x01\xff\x7f"), "a");
    CHECK(a.type == vnnx::dtype::int8);
    CHECK(a.get<int>(1) == -1);
    CHECK(a.get<int>(2) == 127);

    std::string h = "{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": \"<i2\"}\n";
    std::string s = std::string("\x93NUMPY\x03\x00", 8);
    s.push_back(static_cast<char>(h.size()));
    s.append(3, '\0');
    s += h + std::string("\x34\x12\x00\x80", 4);
    auto b = vnnx::parse_npy(bytes_of(s), "b");
    CHECK(b.type == vnnx::dtype::int16);
    CHECK(b.get<int>(0) == 0x1234);
    CHECK(b.get<int>(1) == -32768);
}

TEST_CASE("npy: malformed input gives clear errors naming the file") {
    CHECK_THAT(error_of(bytes_of("hello")), Catch::Contains("x.npy") && Catch::Contains("preamble"));
    CHECK_THAT(error_of(bytes_of(std::string("\x93NUMPX\x01\x00\x00\x00", 10))), Catch::Contains("bad magic"));
    CHECK_THAT(error_of(bytes_of(std::string("\x93NUMPY\x07\x00\x00\x00", 10))), Catch::Contains("version 7"));
    CHECK_THAT(error_of(bytes_of(std::string("\x93NUMPY\x01\x00\xff\x00{}", 12))),
               Catch::Contains("header length 255 exceeds"));
    CHECK_THAT(error_of(npy_v1("{'descr': '<i4', 'fortran_order': False}", "")), Catch::Contains("must hold"));
    CHECK_THAT(error_of(npy_v1("{'descr': '<i4' 'fortran_order': False, 'shape': ()}", "")),
               Catch::Contains("expected ','"));
    CHECK_THAT(error_of(npy_v1("{'descr': '>i4', 'fortran_order': False, 'shape': (1,)}", "abcd")),
               Catch::Contains("dtype '>i4'"));
    CHECK_THAT(error_of(npy_v1("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", "abcdefgh")),
               Catch::Contains("not supported"));
    CHECK_THAT(error_of(npy_v1("{'descr': '<i4', 'fortran_order': True, 'shape': (1,)}", "abcd")),
               Catch::Contains("Fortran"));
    CHECK_THAT(error_of(npy_v1("{'descr': '<i4', 'fortran_order': False, 'shape': (2,)}", "abcd")),
               Catch::Contains("data holds 4 bytes") && Catch::Contains("need 8"));
    CHECK_THAT(error_of(npy_v1("{'descr': '<i4', 'fortran_order': False, 'shape': (1,)}", "abcdef")),
               Catch::Contains("data holds 6 bytes"));
    CHECK_THAT(error_of(npy_v1("{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}", "")),
               Catch::Contains("overflows"));
    CHECK_THAT(error_of(npy_v1("{'descr': '|u1', 'fortran_order': False, 'shape': (99999999999999999999,)}", "")),
               Catch::Contains("too large"));
    CHECK_THAT(error_of(npy_v1("{'descr': '|u1', 'fortran_order': False, 'shape': (-1,)}", "")),
               Catch::Contains("non-negative integer"));
    CHECK_THAT(error_of(npy_v1("{'descr': '|u1', 'fortran_order': False, 'shape': (1,), 'x': 1}", "a")),
               Catch::Contains("unknown key 'x'"));
    CHECK_THAT(error_of(npy_v1("{'descr: '|u1'", "")), Catch::Contains(".npy header"));
    CHECK_THAT(error_of(npy_v1("{'descr': '|u1', 'fortran_order': False, 'shape': (1,)} junk", "a")),
               Catch::Contains("after the dictionary"));
}

TEST_CASE("npy: write_npy and read_npy go through a file") {
    auto dir = std::filesystem::temp_directory_path() / "vnnx_npy_io_test";
    std::filesystem::create_directories(dir);
    const std::vector<float> v = {0.5f, -1.25f, 3.0f, 1e-3f};
    auto a = vnnx::ndarray::from<float>({1, 2, 2}, v);
    vnnx::write_npy(dir / "a.npy", a);
    CHECK(vnnx::read_npy(dir / "a.npy") == a);
    std::filesystem::remove_all(dir);
    CHECK_THROWS_AS(vnnx::read_npy(dir / "a.npy"), vnnx::error);
}

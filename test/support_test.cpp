#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <vnnx/support/atomic_file.hpp>
#include <vnnx/support/bytes.hpp>

TEST_CASE("little-endian stores are byte-exact") {
    std::byte buf[8]{};
    vnnx::store_le<std::uint64_t>(buf, 0x0102030405060708ull);
    CHECK(std::to_integer<int>(buf[0]) == 0x08);
    CHECK(std::to_integer<int>(buf[7]) == 0x01);
    CHECK(vnnx::load_le<std::uint64_t>(buf) == 0x0102030405060708ull);
    vnnx::store_le<float>(buf, 0.5f);
    CHECK(vnnx::load_le<std::uint32_t>(buf) == 0x3F000000u);
    CHECK(vnnx::round_up(1180, 16) == 1184);
}

TEST_CASE("atomic writes replace the whole file or leave it untouched") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "vnnx_atomic_test";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path target = dir / "out.bin";
    vnnx::write_file_atomic(target, std::string_view("first"));
    auto back = vnnx::read_file(target);
    CHECK(back.size() == 5);
    vnnx::write_file_atomic(target, std::string_view("second!"));
    CHECK(vnnx::read_file(target).size() == 7);
    // A missing folder fails cleanly and leaves nothing behind.
    CHECK_THROWS_AS(vnnx::write_file_atomic(dir / "missing" / "x.bin", std::string_view("x")), vnnx::error);
    std::size_t files = 0;
    for ([[maybe_unused]] auto& e : fs::directory_iterator(dir)) ++files;
    CHECK(files == 1);
    CHECK_THROWS_AS(vnnx::read_file(dir / "nope.bin"), vnnx::error);
    CHECK_THROWS_AS(vnnx::read_file(target, 3), vnnx::error);
    fs::remove_all(dir);
}

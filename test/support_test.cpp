#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/support/atomic_file.hpp>
#include <vnnx/support/bytes.hpp>
#include <vnnx/support/huge_pages.hpp>

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

namespace {
// The VmFlags of the mapping holding `p` in /proc/self/smaps ("" when not found).
std::string vm_flags_of(const void* p) {
    std::ifstream smaps("/proc/self/smaps");
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        std::uintptr_t lo = 0, hi = 0;
        char dash = 0;
        std::istringstream head(line);
        if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find('-')) {
            inside = lo <= a && a < hi;
            continue;
        }
        if (inside && line.rfind("VmFlags:", 0) == 0) return line;
    }
    return "";
}
}  // namespace

TEST_CASE("the huge-page allocator aligns big blocks to 2 MiB and asks for huge pages") {
    std::vector<std::byte, vnnx::huge_page_allocator<std::byte>> big(5 * vnnx::huge_page_bytes + 123, std::byte{7});
    CHECK(reinterpret_cast<std::uintptr_t>(big.data()) % vnnx::huge_page_bytes == 0);
    CHECK(std::to_integer<int>(big.back()) == 7);
    std::vector<std::int32_t, vnnx::huge_page_allocator<std::int32_t>> small(100, 3);
    CHECK(reinterpret_cast<std::uintptr_t>(small.data()) % alignof(std::int32_t) == 0);
    CHECK(small[99] == 3);
#if defined(__linux__)
    // The advice shows as the "hg" flag of the mapping where the kernel has transparent huge pages.
    if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
        const std::string flags = vm_flags_of(big.data());
        INFO(flags);
        CHECK(flags.find(" hg") != std::string::npos);
    }
#endif
}

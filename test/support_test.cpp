#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <vnnx/support/atomic_file.hpp>
#include <vnnx/support/byte_sum.hpp>
#include <vnnx/support/byte_transpose.hpp>
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

TEST_CASE("byte transposes move every byte of whole 16x16 tiles and of the edges, and nothing else") {
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> byte(0, 255);
    // Sizes around the tile: none, edges only, whole tiles, whole tiles plus edges on either side.
    for (std::size_t rows : {0u, 1u, 15u, 16u, 17u, 32u, 47u})
        for (std::size_t cols : {0u, 1u, 15u, 16u, 31u, 33u}) {
            const std::size_t src_stride = cols + 3, dst_stride = rows + 5;
            std::vector<std::uint8_t> src(rows * src_stride + 1), dst(std::max<std::size_t>(cols, 1) * dst_stride);
            for (auto& b : src) b = static_cast<std::uint8_t>(byte(rng));
            std::fill(dst.begin(), dst.end(), std::uint8_t{0xA5});
            vnnx::transpose_bytes(src.data(), src_stride, dst.data(), dst_stride, rows, cols);
            INFO("rows " << rows << " cols " << cols);
            for (std::size_t c = 0; c < std::max<std::size_t>(cols, 1); ++c)
                for (std::size_t r = 0; r < dst_stride; ++r) {
                    const bool inside = c < cols && r < rows;
                    REQUIRE(dst[c * dst_stride + r] == (inside ? src[r * src_stride + c] : 0xA5));
                }
        }
}

TEST_CASE("transpose_bytes equals the byte-by-byte transpose on ragged sizes and strides") {
    std::mt19937 rng(99);
    std::uniform_int_distribution<int> size(1, 70), extra(0, 20);
    for (int n = 0; n < 300; ++n) {
        const auto rows = static_cast<std::size_t>(size(rng)), cols = static_cast<std::size_t>(size(rng));
        const auto ss = static_cast<std::ptrdiff_t>(cols) + extra(rng), ds = static_cast<std::ptrdiff_t>(rows) + extra(rng);
        std::vector<std::uint8_t> s(rows * static_cast<std::size_t>(ss)), d(cols * static_cast<std::size_t>(ds), 0xA5);
        for (auto& v : s) v = static_cast<std::uint8_t>(rng());
        std::vector<std::uint8_t> want = d;
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c)
                want[c * static_cast<std::size_t>(ds) + r] = s[r * static_cast<std::size_t>(ss) + c];
        vnnx::transpose_bytes(s.data(), ss, d.data(), ds, rows, cols);
        INFO("rows " << rows << " cols " << cols << " strides " << ss << " / " << ds);
        REQUIRE(d == want);  // the padding between rows is untouched as well
    }
}

TEST_CASE("byte sums equal the plain sums of unsigned and signed codes, every length and alignment") {
    std::mt19937 rng(77);
    std::vector<std::uint8_t> b(300);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    b[7] = 0xFF, b[8] = 0x80, b[9] = 0x7F, b[10] = 0x00;  // the extremes of both readings
    for (std::size_t start = 0; start < 17; ++start)
        for (std::size_t n = 0; start + n <= b.size(); n += n < 40 ? 1 : 13) {
            std::int64_t u = 0, s = 0;
            for (std::size_t i = start; i < start + n; ++i) {
                u += b[i];
                s += static_cast<std::int8_t>(b[i]);
            }
            INFO("start " << start << " length " << n);
            REQUIRE(vnnx::byte_sum(b.data() + start, n, false) == u);
            REQUIRE(vnnx::byte_sum(b.data() + start, n, true) == s);
        }
    const std::vector<std::uint8_t> all_max(100000, 0xFF), all_min(100000, 0x80);
    CHECK(vnnx::byte_sum(all_max.data(), all_max.size(), false) == 25500000);
    CHECK(vnnx::byte_sum(all_min.data(), all_min.size(), true) == -12800000);
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

TEST_CASE("advise_huge_pages and prefault_pages keep a buffer's bytes and mark only its whole 2 MiB pages") {
    // An unaligned 5 MiB + 3 buffer from std::allocator, as the compiler's blob and read_file use.
    std::vector<std::byte> buf;
    buf.reserve(5 * vnnx::huge_page_bytes / 2 + 3);
    vnnx::advise_huge_pages(buf.data(), buf.capacity());
    vnnx::prefault_pages(buf.data(), buf.capacity());
    buf.resize(buf.capacity());
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::byte>(i * 7 + 1);
    // Advice on memory already written (and on odd or tiny ranges) must not touch the bytes.
    vnnx::prefault_pages(buf.data() + 1, buf.size() - 2);
    vnnx::advise_huge_pages(buf.data() + 3, buf.size() - 3);
    vnnx::prefault_pages(buf.data(), 1);
    vnnx::advise_huge_pages(buf.data(), 0);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < buf.size(); ++i) wrong += buf[i] != static_cast<std::byte>(i * 7 + 1);
    CHECK(wrong == 0);
#if defined(__linux__)
    if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
        // The flags are checked on a mapping of this test's own (heap memory may carry advice
        // from earlier tests): a range starting 3 bytes into its first page and ending inside
        // its last gets only its whole 2 MiB pages advised.
        const std::size_t len = 4 * vnnx::huge_page_bytes;
        void* map = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(map != MAP_FAILED);
        auto* base = static_cast<std::byte*>(map);
        vnnx::advise_huge_pages(base + 3, len - 4096);
        const auto first = (reinterpret_cast<std::uintptr_t>(base + 3) + vnnx::huge_page_bytes - 1) /
                           vnnx::huge_page_bytes * vnnx::huge_page_bytes;
        CHECK(vm_flags_of(reinterpret_cast<const void*>(first)).find(" hg") != std::string::npos);
        CHECK(vm_flags_of(base).find(" hg") == std::string::npos);
        CHECK(vm_flags_of(base + len - 1).find(" hg") == std::string::npos);
        ::munmap(map, len);
    }
#endif
}

TEST_CASE("reserve_huge keeps a vector's elements and gives a big block advised whole huge pages") {
    std::vector<std::int16_t> v(1000);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int16_t>(i * 13 - 4000);
    vnnx::reserve_huge(v, 3 * vnnx::huge_page_bytes / 2 + 5);  // elements of 2 bytes: over 3 MiB
    REQUIRE(v.capacity() >= 3 * vnnx::huge_page_bytes / 2 + 5);
    REQUIRE(v.size() == 1000);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < v.size(); ++i) wrong += v[i] != static_cast<std::int16_t>(i * 13 - 4000);
    CHECK(wrong == 0);
    // Enough room already: nothing moves.
    const auto* before = v.data();
    vnnx::reserve_huge(v, 10);
    CHECK(v.data() == before);
    // Small requests are plain reserves.
    std::vector<std::byte> small{std::byte{9}};
    vnnx::reserve_huge(small, 100);
    CHECK(small.capacity() >= 100);
    CHECK(small.capacity() < vnnx::huge_page_bytes / 8);
    CHECK(small[0] == std::byte{9});
    // A size no vector can hold is refused as std::vector::reserve refuses it.
    CHECK_THROWS_AS(vnnx::reserve_huge(small, small.max_size() + 1), std::length_error);
    CHECK(small[0] == std::byte{9});
#if defined(__linux__)
    if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
        // The middle of a block of several huge pages is always a whole advised page.
        const std::string flags = vm_flags_of(v.data() + v.capacity() / 2);
        INFO(flags);
        CHECK(flags.find(" hg") != std::string::npos);
    }
#endif
}

TEST_CASE("advise_huge_block takes in a first and last 2 MiB page that only a header's bytes lie outside") {
#if defined(__linux__)
    if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) return;
    const std::size_t H = vnnx::huge_page_bytes;
    // Two mappings of three whole huge pages each, found 2 MiB-aligned inside a larger one.
    void* map = ::mmap(nullptr, 8 * H, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(map != MAP_FAILED);
    auto* base = reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(map) + H - 1) / H * H);
    base[5] = std::byte{42};  // a header's write: the first page is faulted in as a small page
    // A block 16 bytes into its first page and 16 bytes short of its last: all three pages.
    vnnx::advise_huge_block(base + 16, 3 * H - 32);
    CHECK(base[5] == std::byte{42});
    for (std::size_t k = 0; k < 3; ++k) {
        INFO("page " << k);
        CHECK(vm_flags_of(base + k * H).find(" hg") != std::string::npos);
    }
    // A block 8 KiB into its first page and 8 KiB short of its last: only its whole middle page.
    std::byte* other = base + 4 * H;
    vnnx::advise_huge_block(other + 8192, 3 * H - 16384);
    CHECK(vm_flags_of(other).find(" hg") == std::string::npos);
    CHECK(vm_flags_of(other + H).find(" hg") != std::string::npos);
    CHECK(vm_flags_of(other + 2 * H).find(" hg") == std::string::npos);
    ::munmap(map, 8 * H);
#endif
}

TEST_CASE("atomic writes over an existing file, a symbolic link and a read-only old file") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("vnnx_atomic_swap_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    auto listing = [&] {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    };
    const fs::path target = dir / "model.vnnx";
    // Replaced many times, bigger and smaller: the last bytes win, no temporary file stays.
    std::vector<std::byte> last;
    for (std::size_t n : {std::size_t{3} << 20, std::size_t{10}, std::size_t{1} << 16}) {
        last.assign(n, static_cast<std::byte>(n & 0xFF));
        vnnx::write_file_atomic(target, last);
        CHECK(vnnx::read_file(target) == last);
        CHECK(listing() == std::vector<std::string>{"model.vnnx"});
        CHECK((fs::status(target).permissions() & fs::perms::all) ==
              (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read));
    }
    // A reader holding the old file keeps reading the old bytes: the new file is a new inode.
    {
        std::ifstream held(target, std::ios::binary);
        vnnx::write_file_atomic(target, std::string_view("new"));
        std::vector<char> got(last.size());
        held.read(got.data(), static_cast<std::streamsize>(got.size()));
        CHECK(held.gcount() == static_cast<std::streamsize>(last.size()));
        CHECK(std::equal(got.begin(), got.end(), last.begin(), [](char a, std::byte b) { return static_cast<std::byte>(a) == b; }));
    }
    // An old file without write permission is replaced too (as rename replaces it).
    fs::permissions(target, fs::perms::owner_read);
    vnnx::write_file_atomic(target, std::string_view("over read-only"));
    auto text = vnnx::read_file(target);
    CHECK(std::string(reinterpret_cast<const char*>(text.data()), text.size()) == "over read-only");
    // A symbolic link as the target: the link itself is replaced, what it pointed to stays.
    const fs::path pointed = dir / "pointed.bin";
    vnnx::write_file_atomic(pointed, std::string_view("pointed"));
    fs::create_symlink(pointed, dir / "link.vnnx");
    vnnx::write_file_atomic(dir / "link.vnnx", std::string_view("through"));
    CHECK(!fs::is_symlink(dir / "link.vnnx"));
    text = vnnx::read_file(dir / "link.vnnx");
    CHECK(std::string(reinterpret_cast<const char*>(text.data()), text.size()) == "through");
    text = vnnx::read_file(pointed);
    CHECK(std::string(reinterpret_cast<const char*>(text.data()), text.size()) == "pointed");
    CHECK(listing() == std::vector<std::string>{"link.vnnx", "model.vnnx", "pointed.bin"});
    fs::remove_all(dir);
}

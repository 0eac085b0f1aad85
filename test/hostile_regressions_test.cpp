// Replays every fuzz seed and every kept crash reproducer (fuzz/corpus/<target>/,
// fuzz/regressions/<target>/) through the same code the libFuzzer targets run: each input must
// be accepted or refused with a vnnx::error that says something, never crash (issue 8).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "../fuzz/targets.hpp"
#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/support/atomic_file.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path fuzz_dir = fs::path(VNNX_TEST_DATA_DIR) / ".." / ".." / "fuzz";

using target_fn = void (*)(std::span<const std::byte>);

// Returns how many files were replayed.
int replay(const std::string& target, target_fn fn) {
    int n = 0;
    for (const char* kind : {"corpus", "regressions"}) {
        const fs::path dir = fuzz_dir / kind / target;
        if (!fs::is_directory(dir)) continue;
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            INFO(f.string());
            const auto bytes = vnnx::read_file(f);
            try {
                fn(bytes);
            } catch (const vnnx::error& e) {
                CHECK(std::string(e.what()).size() > 0);
            }
            ++n;
        }
    }
    return n;
}

}  // namespace

TEST_CASE("hostile regressions: the .npy corpus and reproducers") { CHECK(replay("npy", &vnnx::fuzz::npy) > 0); }

TEST_CASE("hostile regressions: the TFLite reader and info corpus and reproducers") {
    CHECK(replay("tflite_info", &vnnx::fuzz::tflite_info) > 0);
}

TEST_CASE("hostile regressions: the compiler corpus and reproducers") {
    CHECK(replay("compile", &vnnx::fuzz::compile) > 0);
}

TEST_CASE("hostile regressions: the VNNX reader and simulator corpus and reproducers") {
    CHECK(replay("vnnx_sim", &vnnx::fuzz::vnnx_sim) > 0);
}

// fuzz/regressions/compile/crash-7cfc9450…: a QUANTIZE whose scale ratio is about 2^140 asked
// the reference requantization for a 140-bit left shift (undefined behaviour). Shifts that wide
// now give what the exact arithmetic gives; ordinary ones are unchanged.
TEST_CASE("hostile regressions: fixed-point shifts past the word width are defined") {
    using vnnx::quant::multiply_by_quantized_multiplier;
    using vnnx::quant::rounding_divide_by_pot;
    CHECK(multiply_by_quantized_multiplier(100, 1 << 30, 140) == 0);  // 100 * 2^140 wraps to 0 in 32 bits
    CHECK(multiply_by_quantized_multiplier(100, 1 << 30, -140) == 0);
    CHECK(multiply_by_quantized_multiplier(100, 1 << 30, 2) == 200);  // 100 * 4 * 0.5
    CHECK(multiply_by_quantized_multiplier(100, 1 << 30, -2) == 13);  // 100 * 0.5 / 4 = 12.5 -> 13
    CHECK(vnnx::quant::multiply_by_quantized_multiplier_greater_than_one(3, 1 << 30, 40) == 0);
    CHECK(rounding_divide_by_pot<std::int32_t>(-2147483647 - 1, 31) == -1);
    CHECK(rounding_divide_by_pot<std::int32_t>(-2147483647 - 1, 32) == -1);  // -0.5: ties away from zero
    CHECK(rounding_divide_by_pot<std::int32_t>(2147483647, 32) == 0);
    CHECK(rounding_divide_by_pot<std::int32_t>(1 << 30, 31) == 1);
    CHECK(rounding_divide_by_pot<std::int32_t>(-12345, 200) == 0);
    CHECK(rounding_divide_by_pot<std::int32_t>(7, 0) == 7);
    CHECK(rounding_divide_by_pot<std::int32_t>(7, -3) == 7);
    CHECK(rounding_divide_by_pot<std::int16_t>(std::int16_t{-300}, 40) == 0);
}

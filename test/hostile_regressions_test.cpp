// Replays every fuzz seed and every kept crash reproducer (fuzz/corpus/<target>/,
// fuzz/regressions/<target>/) through the same code the libFuzzer targets run: each input must
// be accepted or refused with a vnnx::error that says something, never crash (issue 8).
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "../fuzz/targets.hpp"
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

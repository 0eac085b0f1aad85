#pragma once
// Where the optional real-model tests find their files. The folder is set at configure time
// (VNNX_MODELS_DIR) and may be overridden with the environment variable of the same name.
// Tests that need it call `models_dir()` and skip, with a visible warning, when it is absent.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

namespace vnnx::test {

inline std::optional<std::filesystem::path> models_dir() {
    const char* env = std::getenv("VNNX_MODELS_DIR");
    std::filesystem::path p = env != nullptr ? std::filesystem::path(env) : std::filesystem::path(VNNX_MODELS_DIR);
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) return p;
    return std::nullopt;
}

/// The path of a shared model, or nullopt after a Catch2 warning that the test is skipped.
inline std::optional<std::filesystem::path> shared_model(const std::string& stem) {
    auto dir = models_dir();
    if (!dir) {
        WARN("skipped: shared models folder not found (set VNNX_MODELS_DIR)");
        return std::nullopt;
    }
    auto p = *dir / (stem + ".tflite");
    if (!std::filesystem::exists(p)) {
        WARN("skipped: " << p.string() << " not found");
        return std::nullopt;
    }
    return p;
}

}  // namespace vnnx::test

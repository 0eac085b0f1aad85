// Cross-check of the reference interpreter against a second, independent executor: Arm NN's
// CpuRef backend ran every golden model of test/data/ref on the same inputs and its outputs
// are stored as armnn_output_<k>.npy (armnn.txt says why a folder has none). Arm NN computes
// quantized layers in float and requantizes, so it is not bit-exact: the reference must agree
// within 1 LSB, except where an operator is listed below with its reason.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>
#include <string>
#include <vector>

#include "vnnx/ref/interpreter.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace {

enum class rule { lsb, pad_fill_zero, not_comparable };

struct tolerance {
    rule kind;
    std::int64_t lsb;
    const char* why;
};

// Folders (by name part) where the agreement is not plain 1 LSB, each with its reason.
const std::vector<std::pair<std::string, tolerance>>& exceptions() {
    static const std::vector<std::pair<std::string, tolerance>> m{
        // Arm NN 20.08 fills PAD with 0 instead of the output zero point: padded elements must be
        // 0 there and the zero point here; every other element within 1 LSB.
        {"pad_", {rule::pad_fill_zero, 1, "Arm NN's PAD fills with 0, not the zero point"}},
        // Its TfLite parser drops half_pixel_centers (both resizes) and align_corners of
        // RESIZE_NEAREST_NEIGHBOR, so it computes another resize: nothing to compare.
        {"half_pixel", {rule::not_comparable, 0, "Arm NN 20.08 ignores half_pixel_centers"}},
        {"resize_nearest_align_corners", {rule::not_comparable, 0, "Arm NN 20.08 ignores align_corners of nearest resize"}},
        // Its nearest resize takes column floor(j * in / out); TFLite's interpreter takes
        // (j * ((in << 16) / out + 1)) >> 16. On 40 -> 311 columns they differ at output column 241
        // (30 against TFLite's 31): that folder is there to tell the two rules apart.
        {"resize_nearest_wide", {rule::not_comparable, 0, "Arm NN 20.08 picks nearest columns by floor(j*in/out)"}},
    };
    return m;
}

tolerance tolerance_of(const std::string& folder) {
    for (const auto& [part, t] : exceptions())
        if (folder.find(part) != std::string::npos) return t;
    return {rule::lsb, 1, "Arm NN requantizes in float: +-1 LSB"};
}

}  // namespace

TEST_CASE("ref: agrees with Arm NN within 1 LSB on the golden models Arm NN runs") {
    const std::filesystem::path root = std::filesystem::path(VNNX_TEST_DATA_DIR) / "ref";
    REQUIRE(std::filesystem::is_directory(root));
    std::vector<std::filesystem::path> dirs;
    std::size_t unsupported = 0;
    for (const auto& e : std::filesystem::directory_iterator(root)) {
        if (!e.is_directory()) continue;
        if (std::filesystem::exists(e.path() / "armnn_output_0.npy")) dirs.push_back(e.path());
        else if (std::filesystem::exists(e.path() / "armnn.txt")) ++unsupported;
    }
    std::sort(dirs.begin(), dirs.end());
    // Most folders have Arm NN outputs; the rest say why not (operator missing in Arm NN, ...).
    CHECK(dirs.size() >= 80);
    CHECK(dirs.size() + unsupported >= 140);
    for (const auto& d : dirs) {
        const std::string name = d.filename().string();
        DYNAMIC_SECTION(name) {
            const auto bytes = vnnx::read_file(d / "model.tflite");
            const auto model = vnnx::tflite::model_view::parse(bytes, name + "/model.tflite");
            std::vector<vnnx::ndarray> inputs;
            for (std::size_t i = 0; std::filesystem::exists(d / ("input_" + std::to_string(i) + ".npy")); ++i)
                inputs.push_back(vnnx::read_npy(d / ("input_" + std::to_string(i) + ".npy")));
            const auto outputs = vnnx::ref::run(model, inputs);
            const auto tol = tolerance_of(name);
            INFO("tolerance " << tol.lsb << " LSB: " << tol.why);
            for (std::size_t i = 0; i < outputs.size(); ++i) {
                const auto path = d / ("armnn_output_" + std::to_string(i) + ".npy");
                REQUIRE(std::filesystem::exists(path));
                const auto theirs = vnnx::read_npy(path);
                REQUIRE(theirs.element_count() == outputs[i].element_count());
                if (tol.kind == rule::not_comparable) continue;
                const auto zp = model.subgraph(0).tensor(static_cast<std::size_t>(model.subgraph(0).outputs()[i])).quant();
                const std::int64_t z = zp.empty() ? 0 : zp.zero_point[0];
                std::int64_t worst = 0;
                std::size_t at = 0;
                for (std::size_t k = 0; k < theirs.element_count(); ++k) {
                    const auto mine = outputs[i].get<std::int64_t>(k), other = theirs.get<std::int64_t>(k);
                    if (tol.kind == rule::pad_fill_zero && mine == z && other == 0) continue;
                    const auto diff = std::abs(mine - other);
                    if (diff > worst) {
                        worst = diff;
                        at = k;
                    }
                }
                INFO("output " << i << ": largest difference " << worst << " at element " << at);
                CHECK(worst <= tol.lsb);
            }
        }
    }
}

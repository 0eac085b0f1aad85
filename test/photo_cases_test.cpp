// Stored cases of scripts/photo_agreement.py (test/data/photos): real photographs through four
// shared classifiers. The simulator of the compiled file must give TFLite's top-1 and stay within
// the largest output difference measured when the case was stored (docs/numerics.md), so that a
// change that loses accuracy on real inputs fails here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "support/models.hpp"
#include "vnnx/compiler/compile.hpp"
#include "vnnx/sim/io.hpp"
#include "vnnx/sim/machine.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/npy.hpp"

namespace {

namespace fs = std::filesystem;

std::size_t argmax(const vnnx::ndarray& a) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < a.element_count(); ++i)
        if (a.get<std::int64_t>(i) > a.get<std::int64_t>(best)) best = i;
    return best;
}

}  // namespace

TEST_CASE("photos: the simulator keeps TFLite's top-1 on stored real photographs") {
    // model -> largest |simulator - TFLite| in LSB over its two cases, as measured when stored
    const std::map<std::string, std::int64_t> bound = {
        {"mlcommons-tiny__vww_96_int8", 3},
        {"tflite-micro__person_detect", 4},
        {"coral-test-data__mobilenet_v1_0.25_128_quant", 6},
        {"mlcommons-tiny__pretrainedResnet_quant", 15},
    };
    const fs::path root = fs::path(VNNX_TEST_DATA_DIR) / "photos";
    std::size_t run = 0;
    for (const auto& [name, max_lsb] : bound) {
        INFO(name);
        REQUIRE(fs::is_directory(root / name / "case_0"));  // the stored data is always there
        const auto path = vnnx::test::shared_model(name);
        if (!path) continue;
        const auto c = vnnx::compile(vnnx::read_file(*path), {}, path->string());
        for (const char* k : {"case_0", "case_1"}) {
            INFO(k);
            const auto x = vnnx::read_npy(root / name / k / "input_0.npy");
            const auto want = vnnx::read_npy(root / name / k / "tflite_output_0.npy");
            vnnx::sim::machine m(c.bytes, name + ".vnnx", {vnnx::sim::best_isa(), 1});
            m.set_input(0, vnnx::sim::io_bytes(m.view().input(0), x, vnnx::sim::io_layout::tflite, "photo"));
            m.run();
            const auto got = vnnx::sim::io_array(m.view().output(0), m.output(0), vnnx::sim::io_layout::tflite, "out");
            REQUIRE(got.element_count() == want.element_count());
            CHECK(argmax(got) == argmax(want));
            std::int64_t d = 0;
            for (std::size_t i = 0; i < got.element_count(); ++i)
                d = std::max(d, std::abs(got.get<std::int64_t>(i) - want.get<std::int64_t>(i)));
            CHECK(d <= max_lsb);
            ++run;
        }
    }
    if (run == 0) WARN("no shared model found: only the stored data was checked");
}

// Runs the simulator inside a program: compiles the built-in demo model, simulates the VNNX
// bytes on a deterministic image and checks the answer against the TFLite-semantics reference
// interpreter, which runs the original .tflite model.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <vnnx/compiler/compile.hpp>
#include <vnnx/ref/interpreter.hpp>
#include <vnnx/sim/machine.hpp>
#include <vnnx/tflite/builder.hpp>
#include <vnnx/tflite/model_view.hpp>

int main() {
    try {
        const std::vector<std::byte> model = vnnx::tflite::demo_model();
        const vnnx::compile_result compiled = vnnx::compile(model, vnnx::compile_options{}, "demo.tflite");

        // The image in TFLite's layout (NHWC) for the reference ...
        constexpr int H = 32, W = 32, C = 3;
        vnnx::ndarray image(vnnx::dtype::int8, {1, H, W, C});
        for (std::size_t i = 0; i < image.data.size(); ++i)
            image.data[i] = static_cast<std::byte>(static_cast<std::int8_t>((static_cast<int>(i) * 29) % 251 - 125));
        // ... and channels-first (NCHW) for the simulator, as the VNNX input tensor is laid out.
        std::vector<std::byte> planar(image.data.size());
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x)
                for (int c = 0; c < C; ++c)
                    planar[static_cast<std::size_t>((c * H + y) * W + x)] =
                        image.data[static_cast<std::size_t>((y * W + x) * C + c)];

        vnnx::sim::machine m(compiled.bytes, "demo.vnnx", vnnx::sim::run_options{});  // best ISA, one thread
        m.set_input(0, planar);
        m.run([&](std::size_t node) {
            std::printf("node %zu (%s) done\n", node, compiled.nodes[node].type.c_str());
        });
        const auto sim_out = m.output(0);

        const auto tfl = vnnx::tflite::model_view::parse(model, "demo.tflite");
        const auto ref_out = vnnx::ref::run(tfl, {image});

        // The output is [1, 10]: the same in both layouts. FIA convolutions may round one LSB
        // differently from TFLite (lowering.md), so one LSB is allowed.
        constexpr int tolerance = 1;
        int worst = 0;
        std::printf("class  simulator  reference\n");
        for (std::size_t k = 0; k < sim_out.size() && k < ref_out[0].data.size(); ++k) {
            const int s = static_cast<std::int8_t>(sim_out[k]);
            const int r = static_cast<std::int8_t>(ref_out[0].data[k]);
            worst = std::max(worst, std::abs(s - r));
            std::printf("%5zu  %9d  %9d\n", k, s, r);
        }
        std::printf("largest difference: %d LSB\n", worst);
        if (sim_out.size() != ref_out[0].data.size() || worst > tolerance) {
            std::fputs("simulate_in_process: simulator and reference disagree\n", stderr);
            return 1;
        }
        return 0;
    } catch (const vnnx::error& e) {
        std::fprintf(stderr, "simulate_in_process: error: %s\n", e.what());
        return e.exit_code();
    }
}

// The program every consumer project builds: <vnnx.hpp> alone is enough to make the demo model,
// compile it to VNNX and simulate it in process. Exits 0 only when the output is a softmax.
#include <vnnx.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

// The format records are usable at compile time through the installed headers too.
static_assert(vnnx::meta::serialized_size_v<vnnx::format::vnnx_tensor_t> == 76);

int main() {
    try {
        const std::vector<std::byte> model = vnnx::tflite::demo_model();
        const vnnx::compile_result compiled = vnnx::compile(model, vnnx::compile_options{}, "demo.tflite");

        vnnx::sim::machine m(compiled.bytes, "demo.vnnx", {vnnx::sim::isa_kind::scalar, 1});
        std::vector<std::byte> input(32 * 32 * 3);  // channels-first int8 image
        for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<std::byte>((i * 37 + 11) % 256);
        m.set_input(0, input);
        m.run();
        const auto out = m.output(0);

        // Ten probabilities, int8 with scale 1/256 and zero point -128: they sum to about 1.
        int sum = 0, best = 0;
        for (std::size_t k = 0; k < out.size(); ++k) {
            const int q = static_cast<std::int8_t>(out[k]);
            sum += q + 128;
            if (q > static_cast<std::int8_t>(out[static_cast<std::size_t>(best)])) best = static_cast<int>(k);
        }
        std::printf("demo: %zu nodes, %zu bytes of VNNX, class %d, probabilities sum to %d/256\n",
                    compiled.nodes.size(), compiled.bytes.size(), best, sum);
        if (out.size() != 10 || sum < 256 - 12 || sum > 256 + 12) {
            std::fputs("consumer: the demo output is not a softmax over 10 classes\n", stderr);
            return 1;
        }
        return 0;
    } catch (const vnnx::error& e) {
        std::fprintf(stderr, "consumer: error: %s\n", e.what());
        return 1;
    }
}

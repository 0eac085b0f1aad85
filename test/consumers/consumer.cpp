// The program every consumer project builds: <vnnx.hpp> alone is enough to build TFLite models,
// compile them to VNNX and simulate them in process. Two models: a one-operator requantization
// (checked exactly) and the built-in demo CNN (its output must be a softmax over 10 classes).
#include <vnnx.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

// The format records are usable at compile time through the installed headers too.
static_assert(vnnx::meta::serialized_size_v<vnnx::format::vnnx_tensor_t> == 76);

namespace {

// QUANTIZE from scale 0.5 to scale 0.25, zero point 3: exactly q -> clamp(2q + 3).
bool requantize_ok() {
    using vnnx::tflite::tensor_type;
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 4, 4, 3}, vnnx::tflite::quant{0.5f, 0});
    const auto out = b.add_tensor("out", tensor_type::INT8, {1, 4, 4, 3}, vnnx::tflite::quant{0.25f, 3});
    b.add_operator(vnnx::builtin_operator::QUANTIZE, {in}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    const std::vector<std::byte> model = b.finish();

    const vnnx::compile_result compiled = vnnx::compile(model, vnnx::compile_options{}, "requantize.tflite");
    vnnx::sim::machine m(compiled.bytes, "requantize.vnnx", {vnnx::sim::isa_kind::scalar, 1});
    std::vector<std::byte> input(48);
    for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<std::byte>(static_cast<std::int8_t>(i * 7 - 100));
    m.set_input(0, input);
    m.run();
    const auto output = m.output(0);
    if (output.size() != input.size()) return false;
    for (std::size_t i = 0; i < input.size(); ++i) {
        const int q = static_cast<std::int8_t>(input[i]);
        const int expected = q * 2 + 3 < -128 ? -128 : q * 2 + 3 > 127 ? 127 : q * 2 + 3;
        if (static_cast<std::int8_t>(output[i]) != expected) return false;
    }
    std::printf("requantize: %zu bytes of VNNX, 48 values exact\n", compiled.bytes.size());
    return true;
}

}  // namespace

int main() {
    try {
        if (!requantize_ok()) {
            std::fputs("consumer: the requantization model simulated wrongly\n", stderr);
            return 1;
        }
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

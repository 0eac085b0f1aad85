#pragma once
// Shared by the ops_movement_*_test.cpp files: builds nothing itself; compiles a builder-made
// model, runs the simulator on channels-first inputs and the reference interpreter on the same
// TFLite-order inputs, and returns both outputs in TFLite order for bit-exact comparison.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/compiler/compile.hpp>
#include <vnnx/ref/interpreter.hpp>
#include <vnnx/sim/machine.hpp>
#include <vnnx/tflite/builder.hpp>

#include "support/channels_first.hpp"

namespace movement_test {

using vnnx::builtin_operator;
using vnnx::dtype;
using vnnx::ndarray;
using vnnx::tflite::tensor_type;
namespace opt = vnnx::tflite;

using test_layout::cf_perm;
using test_layout::from_cf;
using test_layout::permuted;
using test_layout::to_cf;

/// Deterministic values covering the type's range.
inline ndarray random_array(dtype t, std::vector<std::int64_t> shape, std::uint64_t seed) {
    ndarray a(t, std::move(shape));
    vnnx::tflite::prng r(seed);
    for (std::size_t i = 0; i < a.element_count(); ++i) {
        switch (t) {
            case dtype::uint8: a.set<std::int64_t>(i, r.uniform(0, 255)); break;
            case dtype::int32: a.set<std::int64_t>(i, r.uniform(-100000, 100000)); break;
            default: a.set<std::int64_t>(i, r.uniform(-128, 127)); break;
        }
    }
    return a;
}

struct outcome {
    vnnx::compile_result compiled;
    std::vector<ndarray> sim, ref;
};

/// Compile, simulate, interpret; outputs in TFLite order.
inline outcome run_both(const std::vector<std::byte>& model, const std::vector<ndarray>& inputs,
                        const std::string& name = "movement.tflite") {
    outcome r;
    r.compiled = vnnx::compile(model, vnnx::compile_options{}, name);
    const auto tfl = vnnx::tflite::model_view::parse(model, name);
    r.ref = vnnx::ref::run(tfl, inputs);
    vnnx::sim::machine m(r.compiled.bytes, "movement.vnnx", {vnnx::sim::isa_kind::scalar, 1});
    REQUIRE(m.view().num_inputs() == inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) m.set_input(i, to_cf(inputs[i]).data);
    m.run();
    REQUIRE(m.view().num_outputs() == r.ref.size());
    for (std::size_t o = 0; o < r.ref.size(); ++o) r.sim.push_back(from_cf(m.output(o), r.ref[o].type, r.ref[o].shape));
    return r;
}

/// Bit-exact comparison of every output.
inline void require_equal(const outcome& r) {
    REQUIRE(r.sim.size() == r.ref.size());
    for (std::size_t o = 0; o < r.ref.size(); ++o) {
        INFO("output " << o);
        REQUIRE(r.sim[o].shape == r.ref[o].shape);
        REQUIRE(r.sim[o].type == r.ref[o].type);
        std::size_t diff = 0;
        for (std::size_t i = 0; i < r.ref[o].data.size(); ++i) diff += r.sim[o].data[i] != r.ref[o].data[i];
        CHECK(diff == 0);
    }
}

/// The emitted model's records, read back.
struct emitted {
    std::vector<std::byte> bytes;
    vnnx::format::model_view view;
    explicit emitted(const vnnx::compile_result& c) : bytes(c.bytes), view(std::span<const std::byte>(bytes), "movement.vnnx") {}
};

inline vnnx::tflite::quant q8(float s = 0.05f, std::int64_t z = 3) { return vnnx::tflite::quant{s, z}; }

}  // namespace movement_test

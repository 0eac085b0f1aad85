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

namespace movement_test {

using vnnx::builtin_operator;
using vnnx::dtype;
using vnnx::ndarray;
using vnnx::tflite::tensor_type;
namespace opt = vnnx::tflite;

/// Output axis i of the channels-first array is TFLite axis perm[i] (lowering.md §2.1).
inline std::vector<std::int32_t> cf_perm(std::size_t r) {
    std::vector<std::int32_t> p;
    for (std::size_t i = 0; i < r; ++i) p.push_back(static_cast<std::int32_t>(i));
    if (r >= 3) {
        p.resize(r - 3);
        p.push_back(static_cast<std::int32_t>(r - 1));
        p.push_back(static_cast<std::int32_t>(r - 3));
        p.push_back(static_cast<std::int32_t>(r - 2));
    }
    return p;
}

inline ndarray permuted(const ndarray& a, const std::vector<std::int32_t>& perm) {
    std::vector<std::int64_t> s;
    for (auto p : perm) s.push_back(a.shape[static_cast<std::size_t>(p)]);
    ndarray out(a.type, s);
    vnnx::ref::transpose(a, perm, out);
    return out;
}

inline ndarray to_cf(const ndarray& a) { return permuted(a, cf_perm(a.shape.size())); }

/// Channels-first bytes of a tensor whose TFLite shape is `tfl` → the TFLite-order array.
inline ndarray from_cf(std::span<const std::byte> bytes, dtype t, const std::vector<std::int64_t>& tfl) {
    const auto p = cf_perm(tfl.size());
    std::vector<std::int64_t> cf;
    for (auto i : p) cf.push_back(tfl[static_cast<std::size_t>(i)]);
    ndarray c(t, cf);
    REQUIRE(bytes.size() == c.data.size());
    std::memcpy(c.data.data(), bytes.data(), bytes.size());
    std::vector<std::int32_t> inv(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) inv[static_cast<std::size_t>(p[i])] = static_cast<std::int32_t>(i);
    return permuted(c, inv);
}

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

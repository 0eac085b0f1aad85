#pragma once
// Shared by the ops_pool_*_test.cpp files (pools, reductions, resize, softmax, arg-max):
// compiles a builder-made single-operator model, runs the simulator on channels-first inputs
// and the reference interpreter on the TFLite-order inputs, and compares the outputs.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/compiler/compile.hpp>
#include <vnnx/ref/interpreter.hpp>
#include <vnnx/sim/machine.hpp>
#include <vnnx/tflite/builder.hpp>

#include "support/channels_first.hpp"

namespace pool_test {

using vnnx::builtin_operator;
using vnnx::dtype;
using vnnx::ndarray;
using vnnx::tflite::tensor_type;

using test_layout::cf_perm;
using test_layout::from_cf;
using test_layout::permuted;
using test_layout::to_cf;

inline ndarray random_array(dtype t, std::vector<std::int64_t> shape, std::uint64_t seed, std::int64_t lo = -128,
                            std::int64_t hi = 127) {
    ndarray a(t, std::move(shape));
    vnnx::tflite::prng r(seed);
    if (t == dtype::uint8) {
        lo = std::max<std::int64_t>(lo + 128, 0);
        hi = std::min<std::int64_t>(hi + 128, 255);
    }
    for (std::size_t i = 0; i < a.element_count(); ++i) a.set<std::int64_t>(i, r.uniform(lo, hi));
    return a;
}

struct outcome {
    vnnx::compile_result compiled;
    std::vector<ndarray> sim, ref;
};

inline outcome run_both(const std::vector<std::byte>& model, const std::vector<ndarray>& inputs) {
    outcome r;
    r.compiled = vnnx::compile(model, vnnx::compile_options{}, "pool.tflite");
    const auto tfl = vnnx::tflite::model_view::parse(model, "pool.tflite");
    r.ref = vnnx::ref::run(tfl, inputs);
    vnnx::sim::machine m(r.compiled.bytes, "pool.vnnx", {vnnx::sim::isa_kind::scalar, 1});
    REQUIRE(m.view().num_inputs() == inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) m.set_input(i, to_cf(inputs[i]).data);
    m.run();
    REQUIRE(m.view().num_outputs() == r.ref.size());
    for (std::size_t o = 0; o < r.ref.size(); ++o) r.sim.push_back(from_cf(m.output(o), r.ref[o].type, r.ref[o].shape));
    // Every SIMD path of this CPU, on one and two threads, gives the scalar path's bytes.
    for (auto isa : vnnx::sim::simd_isa_kinds) {
        if (!vnnx::sim::isa_supported(isa)) continue;
        for (unsigned threads : {1u, 2u}) {
            vnnx::sim::machine s(r.compiled.bytes, "pool.vnnx", {isa, threads});
            for (std::size_t i = 0; i < inputs.size(); ++i) s.set_input(i, to_cf(inputs[i]).data);
            s.run();
            for (std::size_t o = 0; o < r.ref.size(); ++o) {
                INFO("isa " << vnnx::sim::isa_name(isa) << ", " << threads << " thread(s), output " << o);
                const auto a = m.output(o), b = s.output(o);
                REQUIRE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
            }
        }
    }
    return r;
}

/// Largest |sim − ref| over every output element, and the count of differing elements.
struct difference {
    std::int64_t max_abs = 0, count = 0, total = 0;
};
inline difference compare(const outcome& r) {
    difference d;
    REQUIRE(r.sim.size() == r.ref.size());
    for (std::size_t o = 0; o < r.ref.size(); ++o) {
        REQUIRE(r.sim[o].shape == r.ref[o].shape);
        REQUIRE(r.sim[o].type == r.ref[o].type);
        for (std::size_t i = 0; i < r.ref[o].element_count(); ++i) {
            const auto a = r.sim[o].get<std::int64_t>(i), b = r.ref[o].get<std::int64_t>(i);
            d.max_abs = std::max<std::int64_t>(d.max_abs, std::llabs(a - b));
            d.count += a != b;
            ++d.total;
        }
    }
    return d;
}

inline void require_equal(const outcome& r) {
    const auto d = compare(r);
    INFO("differing elements " << d.count << " of " << d.total << ", max |diff| " << d.max_abs);
    CHECK(d.count == 0);
}

/// The emitted model read back.
struct emitted {
    std::vector<std::byte> bytes;
    vnnx::format::model_view view;
    explicit emitted(const vnnx::compile_result& c) : bytes(c.bytes), view(std::span<const std::byte>(bytes), "pool.vnnx") {}
};

inline vnnx::tflite::quant q8(float s = 0.05f, std::int64_t z = 3) { return vnnx::tflite::quant{s, z}; }
inline dtype dtype_of(tensor_type t) { return t == tensor_type::UINT8 ? dtype::uint8 : dtype::int8; }

}  // namespace pool_test

#pragma once
// Shared by the ops_eltwise_* and ops_lut_* tests: compile a builder-made model, simulate it,
// run the reference interpreter, and read back layer fields and data arrays.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/compiler/compile.hpp>
#include <vnnx/format/model_view.hpp>
#include <vnnx/ref/interpreter.hpp>
#include <vnnx/sim/machine.hpp>
#include <vnnx/support/npy.hpp>
#include <vnnx/tflite/builder.hpp>
#include <vnnx/tflite/model_view.hpp>

namespace eltwise_test {

using vnnx::builtin_operator;
using vnnx::dtype;
using vnnx::ndarray;
using vnnx::tflite::quant;
using vnnx::tflite::tensor_type;

/// TFLite-order array → channels-first bytes (rank >= 3 moves the last axis to -3).
inline std::vector<std::byte> to_cf(const ndarray& a) {
    const std::size_t es = vnnx::dtype_size(a.type);
    const auto& s = a.shape;
    if (s.size() < 3) return a.data;
    const std::size_t r = s.size();
    std::size_t outer = 1;
    for (std::size_t i = 0; i + 3 < r; ++i) outer *= static_cast<std::size_t>(s[i]);
    const auto H = static_cast<std::size_t>(s[r - 3]), W = static_cast<std::size_t>(s[r - 2]),
               C = static_cast<std::size_t>(s[r - 1]);
    std::vector<std::byte> out(a.data.size());
    for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t w = 0; w < W; ++w)
                for (std::size_t c = 0; c < C; ++c)
                    std::memcpy(out.data() + (((o * C + c) * H + h) * W + w) * es,
                                a.data.data() + (((o * H + h) * W + w) * C + c) * es, es);
    return out;
}

/// Channels-first bytes → a TFLite-order array of the given shape and type.
inline ndarray from_cf(std::span<const std::byte> bytes, dtype t, const std::vector<std::int64_t>& s) {
    ndarray a(t, s);
    const std::size_t es = vnnx::dtype_size(t);
    REQUIRE(bytes.size() == a.data.size());
    if (s.size() < 3) {
        std::memcpy(a.data.data(), bytes.data(), bytes.size());
        return a;
    }
    const std::size_t r = s.size();
    std::size_t outer = 1;
    for (std::size_t i = 0; i + 3 < r; ++i) outer *= static_cast<std::size_t>(s[i]);
    const auto H = static_cast<std::size_t>(s[r - 3]), W = static_cast<std::size_t>(s[r - 2]),
               C = static_cast<std::size_t>(s[r - 1]);
    for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t w = 0; w < W; ++w)
                for (std::size_t c = 0; c < C; ++c)
                    std::memcpy(a.data.data() + (((o * H + h) * W + w) * C + c) * es,
                                bytes.data() + (((o * C + c) * H + h) * W + w) * es, es);
    return a;
}

/// Deterministic input covering the whole code range.
inline ndarray ramp_input(dtype t, std::vector<std::int64_t> shape, std::uint64_t seed) {
    ndarray a(t, std::move(shape));
    vnnx::tflite::prng r(seed);
    for (std::size_t i = 0; i < a.element_count(); ++i) {
        const std::int64_t v = t == dtype::int8 ? r.uniform(-128, 127) : r.uniform(0, 255);
        a.set<std::int64_t>(i, v);
    }
    return a;
}

/// The compiler pipeline without the LUT pass, to reach the fallback layers (§7.6).
std::vector<std::byte> compile_without_luts(std::span<const std::byte> bytes, const std::string& source);

struct outcome {
    std::vector<std::byte> vnnx;
    std::vector<ndarray> sim, ref;
};

/// Simulates VNNX bytes on TFLite-order inputs; outputs come back in TFLite order with the
/// model's output shapes and types. Every SIMD path of this CPU, on one and two threads, must
/// give the scalar path's bytes.
std::vector<ndarray> simulate(const std::vector<std::byte>& vnnx_bytes, const std::vector<ndarray>& inputs,
                              const std::vector<ndarray>& like);

/// Compile (default flow, or without LUTs), simulate and run the reference.
outcome run_both(const std::vector<std::byte>& tfl, const std::vector<ndarray>& inputs, bool luts = true);

/// Every element equal; on failure names the first difference.
inline void require_equal(const ndarray& got, const ndarray& want) {
    REQUIRE(got.element_count() == want.element_count());
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < got.element_count(); ++i)
        if (got.get<std::int64_t>(i) != want.get<std::int64_t>(i) && bad++ == 0) first = i;
    INFO("first difference at " << first << ": got " << got.get<std::int64_t>(first) << ", want "
                                << want.get<std::int64_t>(first));
    CHECK(bad == 0);
}

/// The layers of node k and one int32 read at an offset field.
struct layers_of {
    vnnx::format::model_view view;
    explicit layers_of(const std::vector<std::byte>& b) : view(b, "test.vnnx") {}
    std::int32_t i32(vnnx::format::obj_off_t at) const {
        REQUIRE(!at.absent());
        return view.int32s(at.value, 1, "test")[0];
    }
    std::span<const std::byte> bytes(vnnx::format::obj_off_t at, std::uint64_t n) const {
        REQUIRE(!at.absent());
        return view.range(at.value, n, "test");
    }
    /// The only layer of the model that has type `type`.
    const vnnx::format::vnnx_layer_t& find(std::int32_t type) const {
        const vnnx::format::vnnx_layer_t* hit = nullptr;
        for (std::size_t k = 0; k < view.num_nodes(); ++k)
            for (const auto& l : view.node_layers(k))
                if (l.type == type) {
                    REQUIRE(hit == nullptr);
                    hit = &l;
                }
        REQUIRE(hit != nullptr);
        return *hit;
    }
};

}  // namespace eltwise_test

// MEAN / SUM / REDUCE_MAX / REDUCE_MIN (lowering.md §7.7.1, §8.8): reduce8 flags and multipliers
// by hand, MEAN bit-exact with ref::run (node and layer, spatial, channel, all axes, keep_dims),
// SUM/REDUCE_MAX/REDUCE_MIN against hand-computed TFLite semantics.
#include "ops_pool_harness.hpp"

#include <cmath>

#include <vnnx/ops/reduce.hpp>
#include <vnnx/quant/multiplier.hpp>

using namespace pool_test;

namespace {

std::vector<std::byte> reduce_model(builtin_operator code, tensor_type t, std::vector<std::int32_t> is,
                                    std::vector<std::int32_t> axes, bool keep, vnnx::tflite::quant qi,
                                    vnnx::tflite::quant qo, bool after_pad = false) {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", t, is, qi);
    std::int32_t x = in;
    if (after_pad) {  // a PAD first makes the reduction a layer of an IDENTITY node
        const auto r = static_cast<std::int32_t>(is.size());
        std::vector<std::int32_t> p(static_cast<std::size_t>(2 * r), 0);
        auto ps = is;
        x = b.add_tensor("padded", t, ps, qi);
        const auto pc = b.add_constant("pads", tensor_type::INT32, {r, 2}, p);
        b.add_operator(builtin_operator::PAD, {in, pc}, {x});
    }
    std::vector<bool> red(is.size(), false);
    for (auto a : axes) red[static_cast<std::size_t>(a < 0 ? a + static_cast<std::int32_t>(is.size()) : a)] = true;
    std::vector<std::int32_t> os;
    for (std::size_t i = 0; i < is.size(); ++i) {
        if (!red[i]) os.push_back(is[i]);
        else if (keep) os.push_back(1);
    }
    const auto out = b.add_tensor("out", t, os, qo);
    const auto ax = b.add_constant("axes", tensor_type::INT32, {static_cast<std::int32_t>(axes.size())}, axes);
    b.add_operator(code, {x, ax}, {out}, vnnx::tflite::reducer_options{keep});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

struct mean_case {
    tensor_type t;
    std::vector<std::int32_t> shape, axes;
    bool keep;
    float si, so;
    std::int64_t zi, zo;
};

}  // namespace

TEST_CASE("reduce: MEAN node and layer equal ref::run") {
    using T = tensor_type;
    const std::vector<mean_case> cases = {
        {T::INT8, {1, 7, 5, 6}, {1, 2}, true, 0.05f, 0.02f, 3, -5},     // TFLite's H/W kernel
        {T::INT8, {2, 4, 4, 3}, {1, 2}, true, 0.05f, 0.05f, -7, -7},
        {T::INT8, {1, 7, 5, 6}, {1, 2}, false, 0.05f, 0.02f, 3, -5},    // generic path
        {T::INT8, {1, 7, 5, 6}, {1, 2, 3}, true, 0.05f, 0.03f, 3, 1},
        {T::INT8, {1, 6, 40}, {-1}, true, 0.1f, 0.01f, 5, -2},          // LayerNorm mean over channels
        {T::INT8, {1, 6, 40}, {2}, false, 0.1f, 0.07f, -9, 0},
        {T::INT8, {1, 4, 6, 8}, {3}, true, 0.03f, 0.05f, 0, 2},
        {T::INT8, {1, 4, 6, 8}, {2}, true, 0.03f, 0.05f, 0, 2},
        {T::INT8, {3, 10}, {1}, false, 0.2f, 0.1f, 1, 0},               // rank 2
        {T::UINT8, {1, 5, 5, 4}, {1, 2}, true, 0.05f, 0.04f, 128, 120},
        {T::UINT8, {1, 5, 5, 4}, {3}, false, 0.05f, 0.04f, 128, 120},
        // One quantization, not the H/W kernel: TFLite truncates the integer sum / n.
        {T::UINT8, {1, 4, 5, 6}, {1, 2}, false, 0.05f, 0.05f, 128, 128},
        {T::INT8, {1, 6, 40}, {-1}, true, 0.1f, 0.1f, -3, -3},  // negative sums truncate toward zero
        {T::INT8, {1, 4, 6, 8}, {1, 2, 3}, true, 0.02f, 0.02f, 5, 5},
        // Classifier heads: enough planes to go over the pool (and the psadbw sums' 16-byte steps).
        {T::INT8, {1, 7, 7, 1280}, {1, 2}, true, 0.05f, 0.02f, -4, 3},
        {T::UINT8, {1, 9, 8, 600}, {1, 2}, true, 0.04f, 0.03f, 120, 131},
        {T::INT8, {1, 7, 7, 1280}, {1, 2}, false, 0.05f, 0.05f, 6, 6},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& k = cases[i];
        for (bool layer : {false, true}) {
            INFO("case " << i << (layer ? " as a layer" : " as a node"));
            const auto model = reduce_model(builtin_operator::MEAN, k.t, k.shape, k.axes, k.keep, {k.si, k.zi},
                                            {k.so, k.zo}, layer);
            std::vector<std::int64_t> s(k.shape.begin(), k.shape.end());
            const auto r = run_both(model, {random_array(dtype_of(k.t), s, 7 + i)});
            require_equal(r);
            const emitted e(r.compiled);
            if (!layer) {
                REQUIRE(e.view.num_nodes() == 1);
                CHECK(e.view.node(0).type == 40);
            } else {
                CHECK(e.view.node(e.view.num_nodes() - 1).type == 300);
            }
        }
    }
}

TEST_CASE("reduce: reduce8 flags and multipliers by hand") {
    SECTION("MEAN node over H, W of [1,7,5,6]: flags (0,1,1), QM(S_in·(1/35)/S_out) in double (the SDK's)") {
        const auto model = reduce_model(builtin_operator::MEAN, tensor_type::INT8, {1, 7, 5, 6}, {1, 2}, true,
                                        {0.05f, 3}, {0.02f, -5});
        const emitted e(vnnx::compile(model, {}, "pool.tflite"));
        const auto& n = e.view.node(0);
        CHECK(n.type == 40);
        const auto r8 = n.options.get<vnnx::format::node_options::reduce8>();
        CHECK(r8.channels == 0);
        CHECK(r8.rows == 1);
        CHECK(r8.columns == 1);
        const auto m = vnnx::quant::quantize_multiplier(static_cast<double>(0.05f) * (1.0 / 35.0) / static_cast<double>(0.02f));
        CHECK(e.view.int32s(n.output_multiplier.value, 1, "m")[0] == m.multiplier);
        CHECK(e.view.int32s(n.output_shift.value, 1, "s")[0] == m.shift);
        CHECK(n.input_offset == 3);
        CHECK(n.output_offset == -5);
        CHECK(n.channels == 6);
        CHECK(n.m == 7);
        CHECK(n.n == 5);
    }
    SECTION("SUM over the channel axis of [1,6,40] (rank 3): flags (1,0,0), QM(S_in/S_out)") {
        const auto model = reduce_model(builtin_operator::SUM, tensor_type::INT8, {1, 6, 40}, {2}, true, {0.1f, 5},
                                        {0.5f, -2});
        const emitted e(vnnx::compile(model, {}, "pool.tflite"));
        const auto& l = e.view.node_layers(0).back();
        CHECK(l.type == 74);
        const auto r8 = l.options.get<vnnx::format::layer_options::reduce8>();
        CHECK(r8.channels == 1);
        CHECK(r8.rows == 0);
        CHECK(r8.columns == 0);
        const auto m = vnnx::quant::quantize_multiplier(static_cast<double>(0.1f) / static_cast<double>(0.5f));
        CHECK(e.view.int32s(l.output_multiplier.value, 1, "m")[0] == m.multiplier);
        CHECK(e.view.int32s(l.output_shift.value, 1, "s")[0] == m.shift);
        CHECK(l.input_multiplier.absent());
        CHECK(l.input_offset == 5);
        CHECK(l.output_offset == -2);
    }
    SECTION("a reduction over a batch of 2 is rejected naming the rule") {
        const auto model = reduce_model(builtin_operator::MEAN, tensor_type::INT8, {2, 4, 4, 3}, {0}, true, {0.1f, 0},
                                        {0.1f, 0});
        CHECK_THROWS_WITH(vnnx::compile(model, {}, "pool.tflite"),
                          Catch::Contains("MEAN") && Catch::Contains("leading axis 0"));
    }
}

namespace {

/// TFLite semantics of SUM/REDUCE_MAX/REDUCE_MIN on one TFLite-order array, by hand.
ndarray expected_reduce(builtin_operator code, const ndarray& x, const std::vector<std::int32_t>& axes,
                        const std::vector<std::int64_t>& out_shape, float si, std::int64_t zi, float so, std::int64_t zo) {
    const auto r = x.shape.size();
    std::vector<bool> red(r, false);
    for (auto a : axes) red[static_cast<std::size_t>(a < 0 ? a + static_cast<std::int32_t>(r) : a)] = true;
    ndarray y(x.type, out_shape);
    std::vector<double> acc(y.element_count(), 0);
    std::vector<std::int64_t> ext(y.element_count(), code == builtin_operator::REDUCE_MAX ? -1000 : 1000);
    std::vector<std::int64_t> idx(r, 0);
    for (std::size_t i = 0; i < x.element_count(); ++i) {
        std::size_t o = 0;
        for (std::size_t d = 0; d < r; ++d)
            if (!red[d]) o = o * static_cast<std::size_t>(x.shape[d]) + static_cast<std::size_t>(idx[d]);
        const auto v = x.get<std::int64_t>(i);
        acc[o] += static_cast<double>(v - zi);
        ext[o] = code == builtin_operator::REDUCE_MAX ? std::max(ext[o], v) : std::min(ext[o], v);
        for (std::size_t d = r; d-- > 0;) {
            if (++idx[d] < x.shape[d]) break;
            idx[d] = 0;
        }
    }
    const std::int64_t lo = x.type == dtype::uint8 ? 0 : -128, hi = x.type == dtype::uint8 ? 255 : 127;
    for (std::size_t o = 0; o < y.element_count(); ++o) {
        const double v = code == builtin_operator::SUM ? acc[o] : static_cast<double>(ext[o] - zi);
        y.set<std::int64_t>(o, std::clamp<std::int64_t>(static_cast<std::int64_t>(std::round(v * si / so)) + zo, lo, hi));
    }
    return y;
}

}  // namespace

TEST_CASE("reduce: SUM, REDUCE_MAX, REDUCE_MIN against TFLite semantics") {
    using B = builtin_operator;
    struct c_t {
        B code;
        tensor_type t;
        std::vector<std::int32_t> shape, axes;
        bool keep;
        float si, so;
        std::int64_t zi, zo;
        std::int64_t tolerance;
    };
    const std::vector<c_t> cases = {
        {B::SUM, tensor_type::INT8, {1, 4, 5, 3}, {1, 2}, true, 0.01f, 0.1f, 2, -1, 1},
        {B::SUM, tensor_type::INT8, {1, 6, 16}, {-1}, false, 0.01f, 0.08f, 0, 0, 1},
        {B::SUM, tensor_type::UINT8, {1, 3, 3, 8}, {1, 2, 3}, true, 0.001f, 0.1f, 128, 10, 1},
        {B::REDUCE_MAX, tensor_type::INT8, {1, 5, 7, 4}, {1, 2}, true, 0.05f, 0.05f, 1, 1, 0},
        {B::REDUCE_MAX, tensor_type::INT8, {1, 5, 7, 4}, {3}, false, 0.05f, 0.05f, 1, 1, 0},
        {B::REDUCE_MIN, tensor_type::UINT8, {1, 5, 7, 4}, {2, 3}, true, 0.05f, 0.05f, 128, 128, 0},
        {B::REDUCE_MIN, tensor_type::INT8, {2, 9}, {1}, false, 0.05f, 0.1f, 0, 4, 1},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& k = cases[i];
        INFO("case " << i);
        const auto model = reduce_model(k.code, k.t, k.shape, k.axes, k.keep, {k.si, k.zi}, {k.so, k.zo});
        const auto compiled = vnnx::compile(model, {}, "pool.tflite");
        std::vector<std::int64_t> s(k.shape.begin(), k.shape.end());
        const auto x = random_array(dtype_of(k.t), s, 40 + i);
        vnnx::sim::machine m(compiled.bytes, "pool.vnnx", {vnnx::sim::isa_kind::scalar, 1});
        m.set_input(0, to_cf(x).data);
        m.run();
        std::vector<bool> red(k.shape.size(), false);
        for (auto a : k.axes) red[static_cast<std::size_t>(a < 0 ? a + static_cast<std::int32_t>(k.shape.size()) : a)] = true;
        std::vector<std::int64_t> os;
        for (std::size_t d = 0; d < k.shape.size(); ++d) {
            if (!red[d]) os.push_back(k.shape[d]);
            else if (k.keep) os.push_back(1);
        }
        const auto got = from_cf(m.output(0), x.type, os);
        const auto want = expected_reduce(k.code, x, k.axes, os, k.si, k.zi, k.so, k.zo);
        std::int64_t worst = 0;
        for (std::size_t j = 0; j < want.element_count(); ++j)
            worst = std::max<std::int64_t>(worst, std::llabs(got.get<std::int64_t>(j) - want.get<std::int64_t>(j)));
        CHECK(worst <= k.tolerance);
    }
}

TEST_CASE("reduce: SUM equals ref::run (TFLite's float requantization of the sum)") {
    using T = tensor_type;
    const std::vector<mean_case> cases = {
        {T::UINT8, {1, 4, 5, 6}, {3}, false, 0.05f, 0.4f, 128, 120},
        {T::INT8, {1, 4, 5}, {-1}, false, 0.02f, 0.1f, 3, -4},
        {T::INT8, {1, 4, 5, 6}, {1, 2}, true, 0.01f, 0.13f, -2, 7},
        {T::INT8, {1, 6, 40}, {2}, true, 0.003f, 0.05f, 0, 1},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& k = cases[i];
        for (bool layer : {false, true}) {
            INFO("case " << i << (layer ? " after a PAD" : ""));
            const auto model = reduce_model(builtin_operator::SUM, k.t, k.shape, k.axes, k.keep, {k.si, k.zi}, {k.so, k.zo}, layer);
            std::vector<std::int64_t> s(k.shape.begin(), k.shape.end());
            const auto r = run_both(model, {random_array(dtype_of(k.t), s, 60 + i)});
            require_equal(r);
        }
    }
}

TEST_CASE("reduce: REDUCE_PROD follows TFLite's per-step rescaling") {
    struct c_t {
        std::vector<std::int32_t> shape, axes;
        bool keep;
        float si, so;
        std::int64_t zi, zo;
    };
    const std::vector<c_t> cases = {
        {{1, 2, 2, 3}, {3}, false, 0.1f, 0.05f, 0, 1},
        {{1, 3, 2, 4}, {1, 2}, true, 0.15f, 0.2f, 2, -3},
        {{1, 2, 3, 2}, {1, 2, 3}, true, 0.2f, 0.1f, -1, 0},  // channels-last order of the steps matters
        {{2, 5}, {1}, false, 0.12f, 0.02f, 0, 0},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& k = cases[i];
        INFO("case " << i);
        const auto model = reduce_model(builtin_operator::REDUCE_PROD, tensor_type::INT8, k.shape, k.axes, k.keep,
                                        {k.si, k.zi}, {k.so, k.zo});
        const auto compiled = vnnx::compile(model, {}, "pool.tflite");
        const emitted e(compiled);
        const auto& l = e.view.node_layers(e.view.num_nodes() - 1).back();
        CHECK(l.type == 81);
        // n reduced elements: the stored scaling is QM(S_in / S_out^(1/n)).
        std::int64_t n = 1;
        for (auto a : k.axes) n *= k.shape[static_cast<std::size_t>(a < 0 ? a + static_cast<std::int32_t>(k.shape.size()) : a)];
        const auto q = vnnx::quant::quantize_multiplier(static_cast<double>(k.si) /
                                                        std::pow(static_cast<double>(k.so), 1.0 / static_cast<double>(n)));
        const auto mult = e.view.int32s(l.output_multiplier.value, 1, "m")[0];
        const auto shift = e.view.int32s(l.output_shift.value, 1, "s")[0];
        CHECK(mult == q.multiplier);
        CHECK(shift == q.shift);

        std::vector<std::int64_t> s(k.shape.begin(), k.shape.end());
        const auto x = random_array(dtype::int8, s, 900 + i, -12, 12);
        vnnx::sim::machine m(compiled.bytes, "pool.vnnx", {vnnx::sim::isa_kind::scalar, 1});
        m.set_input(0, to_cf(x).data);
        m.run();
        // Expected, on the TFLite-order array: the product of the real values, the rounding of
        // TFLite's steps by hand (64-bit multiply, multiplier rounded to 16 bits).
        auto step = [&](std::int64_t v) {
            const std::int64_t red = (mult + (1 << 15)) >> 16;
            const std::int32_t total = 15 - shift;
            return static_cast<std::int32_t>((v * red + (std::int64_t{1} << (total - 1))) >> total);
        };
        const auto r = k.shape.size();
        std::vector<bool> red(r, false);
        for (auto a : k.axes) red[static_cast<std::size_t>(a < 0 ? a + static_cast<std::int32_t>(r) : a)] = true;
        std::vector<std::int64_t> os;
        for (std::size_t d = 0; d < r; ++d) {
            if (!red[d]) os.push_back(k.shape[d]);
            else if (k.keep) os.push_back(1);
        }
        ndarray want(dtype::int8, os);
        std::vector<std::int32_t> p(want.element_count(), 0);
        std::vector<double> real(want.element_count(), 1.0);
        std::vector<bool> started(want.element_count(), false);
        std::vector<std::int64_t> idx(r, 0);
        for (std::size_t e2 = 0; e2 < x.element_count(); ++e2) {
            std::size_t o = 0;
            for (std::size_t d = 0; d < r; ++d)
                if (!red[d]) o = o * static_cast<std::size_t>(k.shape[d]) + static_cast<std::size_t>(idx[d]);
            const auto v = x.get<std::int64_t>(e2) - k.zi;
            p[o] = started[o] ? step(std::int64_t{p[o]} * v) : static_cast<std::int32_t>(v);
            started[o] = true;
            real[o] *= static_cast<double>(v) * k.si;
            for (std::size_t d = r; d-- > 0;) {
                if (++idx[d] < k.shape[d]) break;
                idx[d] = 0;
            }
        }
        const auto got = from_cf(m.output(0), dtype::int8, os);
        for (std::size_t o = 0; o < want.element_count(); ++o) {
            const auto expect = std::clamp<std::int64_t>(step(p[o]) + k.zo, -128, 127);
            CHECK(got.get<std::int64_t>(o) == expect);
            // and the rescaling really computes the product of the real values
            const double ideal = std::clamp(std::round(real[o] / k.so) + static_cast<double>(k.zo), -128.0, 127.0);
            CHECK(std::abs(static_cast<double>(expect) - ideal) <= 2.0);
        }
    }
}

namespace {

// Overwrites one little-endian 4-byte field of the emitted file, as a damaged record would carry it.
template <class T>
void poke(std::vector<std::byte>& bytes, std::uint64_t at, T v) {
    static_assert(sizeof(T) == 4);
    REQUIRE(at + 4 <= bytes.size());
    std::memcpy(bytes.data() + at, &v, 4);
}

std::string run_error(const std::vector<std::byte>& bytes, const ndarray& x) {
    try {
        vnnx::sim::machine m(bytes, "damaged.vnnx", {vnnx::sim::isa_kind::scalar, 1});
        m.set_input(0, to_cf(x).data);
        m.run();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("reduce: a damaged record's zero points and scales are rejected naming the node and the field") {
    using vnnx::format::model_view;
    using vnnx::format::vnnx_layer_t;
    using vnnx::format::vnnx_subgraph_node_t;
    using vnnx::format::vnnx_tensor_t;
    using vnnx::meta::offset_of_v;
    const auto x = random_array(dtype::int8, {1, 7, 5, 6}, 11);
    const auto node_model = reduce_model(builtin_operator::MEAN, tensor_type::INT8, {1, 7, 5, 6}, {1, 2}, true,
                                         {0.05f, 3}, {0.02f, -5});
    const auto compiled = vnnx::compile(node_model, {}, "pool.tflite");
    const auto& good = compiled.bytes;
    REQUIRE(run_error(good, x) == "(no error)");
    const emitted e(compiled);
    REQUIRE(e.view.node(0).type == 40);
    const std::uint64_t node0 = model_view::header_size;

    SECTION("zero points far outside 8 bits would overflow the 32-bit sums") {
        auto bad = good;
        poke(bad, node0 + offset_of_v<vnnx_subgraph_node_t, "input_offset">, std::int32_t{100000});
        const auto what = run_error(bad, x);
        CHECK_THAT(what, Catch::Contains("damaged.vnnx") && Catch::Contains("node 0") &&
                             Catch::Contains("input_offset 100000 is outside -65536..65536"));
        bad = good;
        poke(bad, node0 + offset_of_v<vnnx_subgraph_node_t, "output_offset">, std::int32_t{-70000});
        CHECK_THAT(run_error(bad, x), Catch::Contains("node 0") &&
                                          Catch::Contains("output_offset -70000 is outside -65536..65536"));
        // The edges of the accepted range still run.
        bad = good;
        poke(bad, node0 + offset_of_v<vnnx_subgraph_node_t, "input_offset">, std::int32_t{-65536});
        CHECK(run_error(bad, x) == "(no error)");
    }
    SECTION("a scale ratio that puts the H x W mean's bias beyond 32 bits") {
        auto bad = good;
        const auto& n = e.view.node(0);
        int patched = 0;
        for (std::int32_t j = 0; j < n.num_tensors; ++j) {
            const std::uint64_t t = n.tensors.value + model_view::tensor_size * static_cast<std::uint64_t>(j);
            if (e.view.node_tensors(0)[static_cast<std::size_t>(j)].scale != 0.02f) continue;
            poke(bad, t + offset_of_v<vnnx_tensor_t, "scale">, 1e-12f);
            ++patched;
        }
        REQUIRE(patched == 1);
        CHECK_THAT(run_error(bad, x), Catch::Contains("node 0") && Catch::Contains("MEAN: input_offset times the scale ratio") &&
                                          Catch::Contains("is outside 32 bits"));
    }
    SECTION("the same checks hold for a MEAN layer behind a PAD") {
        const auto lc = vnnx::compile(reduce_model(builtin_operator::MEAN, tensor_type::INT8, {1, 7, 5, 6}, {1, 2}, true,
                                                   {0.05f, 3}, {0.02f, -5}, true),
                                      {}, "pool.tflite");
        const auto& layered = lc.bytes;
        REQUIRE(run_error(layered, x) == "(no error)");
        const emitted le(lc);
        const std::size_t last = le.view.num_nodes() - 1;
        const auto& n = le.view.node(last);
        REQUIRE(n.num_sublayers >= 1);
        REQUIRE(n.type == 300);  // an IDENTITY node whose last layer is the MEAN
        REQUIRE(le.view.node_layers(last).back().type == 40);
        const std::uint64_t layer =
            n.sublayers.value + model_view::layer_size * static_cast<std::uint64_t>(n.num_sublayers - 1);
        auto bad = layered;
        poke(bad, layer + offset_of_v<vnnx_layer_t, "input_offset">, std::int32_t{1 << 20});
        CHECK_THAT(run_error(bad, x), Catch::Contains("node " + std::to_string(last) + " layer") &&
                                          Catch::Contains("input_offset 1048576 is outside -65536..65536"));
    }
}

// Simulator vs reference interpreter on single depthwise-convolution models (within 1 LSB).
#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"

#include <vnnx/compiler/import.hpp>
#include <vnnx/compiler/passes/depthwise_multiplier.hpp>

using namespace conv_test;

namespace {
void check_case(const spec& s, const std::string& name) {
    const auto c = compare_with_reference(s);
    WARN(name << ": exact-match rate " << 100.0 * c.exact_rate() << "% of " << c.total << ", max diff " << c.max_diff);
    CHECK(c.total > 0);
    CHECK(c.max_diff <= 1);
    CHECK(c.exact_rate() >= 0.95);
}
spec dw() {
    spec s;
    s.op = kind::depthwise;
    s.C = 8;
    return s;
}
}  // namespace

TEST_CASE("depthwise sim: strides, dilations, channels") {
    auto s = dw();
    check_case(s, "dw 3x3");
    s.sh = 2;
    s.H = 11;
    s.seed = 2;
    check_case(s, "dw 3x3 stride_h 2 (shaper)");
    s = dw();
    s.dh = 2;
    s.H = 12;
    s.seed = 3;
    check_case(s, "dw dilation_h 2 (kh' = 5)");
    s.dh = 1;
    s.dw = 3;
    s.W = 12;
    s.seed = 4;
    check_case(s, "dw dilation_w 3");
    s = dw();
    s.C = 37;
    s.kh = 5;
    s.kw = 5;
    s.H = s.W = 9;
    s.seed = 5;
    check_case(s, "dw 5x5, C=37");
    s = dw();
    s.C = 1;
    s.seed = 6;
    check_case(s, "dw C=1 (ordinary 1-kernel conv)");
    s.mult = 8;
    s.sh = 2;
    s.H = s.W = 11;
    s.seed = 10;
    check_case(s, "dw C=1, depth multiplier 8, stride_h 2 (ordinary 8-kernel conv)");
}

TEST_CASE("depthwise sim: quantization and activations") {
    auto s = dw();
    s.per_channel = false;
    s.act = activation_function::RELU6;
    s.out_scale = 0.03f;
    s.seed = 7;
    check_case(s, "dw per-tensor RELU6");
    s = dw();
    s.in_type = s.out_type = s.w_type = tensor_type::UINT8;
    s.w_zero = 128;
    s.per_channel = false;
    s.act = activation_function::RELU;
    s.seed = 8;
    check_case(s, "dw uint8 RELU");
    s = dw();
    s.N = 3;
    s.seed = 9;
    check_case(s, "dw batch 3");
}

TEST_CASE("depthwise sim: depth multiplier > 1 over several channels (a dense CONV_2D)") {
    struct m_case {
        std::int32_t C, mult, kh, kw, sh, sw;
        bool uint8;
    };
    const m_case cases[] = {
        {2, 2, 3, 3, 1, 1, false}, {3, 3, 3, 3, 1, 1, false}, {8, 2, 3, 3, 2, 2, false},
        {5, 4, 1, 1, 1, 1, false}, {7, 2, 5, 3, 1, 2, false}, {4, 2, 3, 3, 1, 1, true},
    };
    std::uint32_t seed = 20;
    for (const auto& m : cases) {
        auto s = dw();
        s.C = m.C;
        s.mult = m.mult;
        s.kh = m.kh;
        s.kw = m.kw;
        s.sh = m.sh;
        s.sw = m.sw;
        s.H = s.W = 11;
        s.seed = seed++;
        if (m.uint8) {
            s.in_type = s.out_type = s.w_type = tensor_type::UINT8;
            s.w_zero = 128;
            s.per_channel = false;
        }
        check_case(s, "dw C=" + std::to_string(m.C) + " multiplier " + std::to_string(m.mult) + " " +
                          std::to_string(m.kh) + "x" + std::to_string(m.kw) + " stride " + std::to_string(m.sh) + "," +
                          std::to_string(m.sw) + (m.uint8 ? " uint8" : ""));
    }
}

TEST_CASE("depthwise with a depth multiplier becomes a CONV_2D whose filter is zero outside each group") {
    auto s = dw();
    s.C = 3;
    s.mult = 2;
    s.H = s.W = 6;
    s.seed = 30;
    const auto tfl = build(s);
    const auto model = vnnx::tflite::model_view::parse(tfl, "dw.tflite");
    auto g = vnnx::compiler::import_graph(model);
    REQUIRE(g.ops.size() == 1);
    const auto orig = g.t(g.ops[0].inputs[1]).values<std::int8_t>();  // [1, 3, 3, 6]
    REQUIRE(orig.size() == 54);
    vnnx::compiler::passes::depthwise_multiplier_to_conv(g);
    REQUIRE(g.ops.size() == 1);
    const auto& o = g.ops[0];
    CHECK(o.code == vnnx::builtin_operator::CONV_2D);
    const auto& w = g.t(o.inputs[1]);
    REQUIRE(w.shape == std::vector<std::int32_t>{6, 3, 3, 3});
    const auto v = w.values<std::int8_t>();
    for (std::int32_t k = 0; k < 6; ++k)
        for (std::int32_t t = 0; t < 9; ++t)
            for (std::int32_t c = 0; c < 3; ++c) {
                const auto at = static_cast<std::size_t>((k * 9 + t) * 3 + c);
                const auto want = c == k / 2 ? orig[static_cast<std::size_t>(t * 6 + k)] : std::int8_t{0};
                CHECK(v[at] == want);
            }
}

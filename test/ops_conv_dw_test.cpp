// Simulator vs reference interpreter on single depthwise-convolution models (within 1 LSB).
#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"

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

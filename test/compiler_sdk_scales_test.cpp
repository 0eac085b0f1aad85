// --sdk-scales (compiler/passes/sdk_scales.hpp): scales become the six-decimal values the SDK's
// flow reads, ratios are formed in double as the SDK forms them, a filter scale under 5e-7
// becomes 0 (multiplier 0: the channel gives its zero point) and no filter gain is applied.
// The default keeps the file's float32 scales and TFLite's float ratios; each case checks that
// the two modes really differ on it, so that neither check can pass by accident.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"
#include "vnnx/compiler/passes/sdk_scales.hpp"
#include "vnnx/quant/fia.hpp"
#include "vnnx/quant/multiplier.hpp"

namespace {
using namespace conv_test;
using vnnx::format::model_view;
using B = builtin_operator;
namespace fo = vnnx::format;
using vnnx::tflite::quant;
using vnnx::compiler::passes::sdk_decimal;

vnnx::compile_result compile_sdk(const std::vector<std::byte>& tfl) {
    vnnx::compile_options opt;
    opt.sdk_scales = true;
    return vnnx::compile(tfl, opt, "sdk_scales.tflite");
}

double decimal(const char* text) { return std::strtod(text, nullptr); }

std::int32_t i32_at(const model_view& v, fo::obj_off_t at, std::size_t i) {
    return v.int32s(at.value, i + 1, "test")[i];
}
}  // namespace

TEST_CASE("sdk scales: a float32 scale becomes its six-decimal text read as a double", "[compiler][sdk]") {
    CHECK(sdk_decimal(0.5847029f) == decimal("0.584703"));
    CHECK(sdk_decimal(1.0f / 255) == decimal("0.003922"));
    CHECK(sdk_decimal(1.0f / 256) == decimal("0.003906"));  // an exact tie: printf rounds it to even
    CHECK(sdk_decimal(0.0625f) == 0.0625);
    CHECK(sdk_decimal(6e-7f) == decimal("0.000001"));
    CHECK(sdk_decimal(4e-7f) == 0.0);
    CHECK(sdk_decimal(12.5f) == 12.5);
}

TEST_CASE("sdk scales: conv records follow the rounded scales in double, a tiny filter scale is 0", "[compiler][sdk]") {
    // S_in·S_w/S_out near 0.003: its 16-bit FIA multiplier (shift 24) resolves the sixth decimal.
    const float si = 0.01234567f, so = 0.05123457f;
    const std::vector<float> sw{0.01234567f, 3e-7f};
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 4, 4, 3}, quant{si, -3});
    const std::vector<std::int8_t> w{-90, -53, -16, 21, 58, 95};  // no channel leaves room for a gain
    const auto wt = b.add_constant("w", tensor_type::INT8, {2, 1, 1, 3}, w, quant{sw, {0, 0}, 0});
    const auto bias = b.add_constant("b", tensor_type::INT32, {2}, std::vector<std::int32_t>{700, -900},
                                     quant{{si * sw[0], si * sw[1]}, {0, 0}, 0});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 4, 4, 2}, quant{so, 4});
    b.add_operator(B::CONV_2D, {in, wt, bias}, {out},
                   vnnx::tflite::conv2d_options{padding_mode::VALID, 1, 1, activation_function::NONE, 1, 1,
                                                tensor_type::FLOAT32});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto tfl = b.finish();

    const auto sdk = compile_sdk(tfl);
    const auto dflt = compile(tfl);
    const model_view v(sdk.bytes, "sdk.vnnx"), d(dflt.bytes, "default.vnnx");
    REQUIRE(v.num_nodes() == 1);
    REQUIRE(d.num_nodes() == 1);
    const auto& n = v.node(0);
    REQUIRE(n.type == static_cast<std::int32_t>(B::CONV_2D));

    // Tensor records carry float32 of the decimal, as the SDK's file does.
    const auto ts = v.node_tensors(0);
    REQUIRE(!ts.empty());
    CHECK(ts[0].scale == static_cast<float>(decimal("0.012346")));
    CHECK(d.node_tensors(0)[0].scale == si);

    // Channel 0: the FIA record of S_in·S_w/S_out formed from the decimals in double.
    const std::int64_t b0 = 700 + 3 * (-90 - 53 - 16);  // bias - z_in·Σw
    const auto want0 = vnnx::quant::fia_quantize(decimal("0.012346") * decimal("0.012346") / decimal("0.051235"), b0, 4, -128, 127);
    const auto dflt0 = vnnx::quant::fia_quantize(static_cast<double>(si) * sw[0] / static_cast<double>(so), b0, 4, -128, 127);
    REQUIRE(want0.multiplier != dflt0.multiplier);
    CHECK(i32_at(v, n.output_multiplier, 0) == want0.multiplier);
    CHECK(i32_at(d, d.node(0).output_multiplier, 0) == dflt0.multiplier);
    // Channel 1's scale prints as 0.000000: multiplier 0, and its record gives the zero point.
    CHECK(i32_at(v, n.output_multiplier, 1) == 0);
    CHECK(i32_at(d, d.node(0).output_multiplier, 1) != 0);
    const auto u = n.options.get<fo::node_options::Conv2DOptions>();
    const auto rec1 =
        vnnx::quant::fia_decode(vnnx::load_le<std::uint64_t>(v.range(u.quantization_records.value + 8, 8, "rec").data()));
    CHECK(rec1.multiplier == 0);
    CHECK(vnnx::quant::fia_apply(12345, rec1) == 4);
    CHECK(vnnx::quant::fia_apply(-54321, rec1) == 4);

    // The file means what TFLite computes: the rounded scales move results by at most 1 LSB here,
    // and channel 1 (bias·S_in·3e-7/S_out far below one step) is the zero point on both sides.
    vnnx::ndarray x(vnnx::dtype::int8, {1, 4, 4, 3});
    for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<std::byte>((i * 53 + 7) % 256);
    const auto ref = vnnx::ref::run(vnnx::tflite::model_view::parse(tfl, "sdk_scales.tflite"), {x});
    const auto want = to_channels_first(ref.at(0));
    const auto got = simulate(sdk.bytes, to_channels_first(x));
    REQUIRE(got.size() == want.size());
    int worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::abs(int(static_cast<std::int8_t>(got[i])) - int(static_cast<std::int8_t>(want[i]))));
    CHECK(worst <= 1);
    for (std::size_t i = got.size() / 2; i < got.size(); ++i) CHECK(static_cast<std::int8_t>(got[i]) == 4);
}

TEST_CASE("sdk scales: MUL of two activations forms S1*S2/S3 in double, the default in float", "[compiler][sdk]") {
    const float s1 = 0.04567891f, s2 = 0.02345671f, s3 = 0.07123457f;
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 4, 4, 2}, quant{s1, 4});
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 4, 4, 2}, quant{s2, -1});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 4, 4, 2}, quant{s3, -7});
    b.add_operator(B::MUL, {x, y}, {out}, vnnx::tflite::mul_options{activation_function::NONE});
    b.set_inputs({x, y});
    b.set_outputs({out});
    const auto tfl = b.finish();
    auto multiplier_of = [](const std::vector<std::byte>& bytes) {
        const model_view v(bytes, "mul.vnnx");
        for (std::size_t k = 0; k < v.num_nodes(); ++k)
            for (const auto& l : v.node_layers(k))
                if (l.type == static_cast<std::int32_t>(fo::vnnx_operator::ELTWISE)) return i32_at(v, l.output_multiplier, 0);
        FAIL("no ELTWISE layer");
        return 0;
    };
    const auto sdk = vnnx::quant::quantize_multiplier(decimal("0.045679") * decimal("0.023457") / decimal("0.071235"));
    const auto tfl_float = vnnx::quant::quantize_multiplier(static_cast<double>(s1 * s2 / s3));
    REQUIRE(sdk.multiplier != tfl_float.multiplier);
    CHECK(multiplier_of(compile_sdk(tfl).bytes) == sdk.multiplier);
    CHECK(multiplier_of(compile(tfl).bytes) == tfl_float.multiplier);
}

TEST_CASE("sdk scales: no filter gain, and an activation scale that rounds to 0 is refused", "[compiler][sdk]") {
    spec s;
    s.per_channel = false;
    s.C = 16;
    s.K = 8;
    s.H = s.W = 3;
    s.w_fill = 3;  // a per-tensor filter using 3 of 127: the default gains up to 42x
    s.out_scale = 2.0f;
    s.seed = 5;
    const auto tfl = build(s);
    auto largest_weight = [&](const std::vector<std::byte>& bytes) {
        const model_view v(bytes, "gain.vnnx");
        const auto u = v.node(0).options.get<fo::node_options::Conv2DOptions>();
        int largest = 0;
        for (const auto byte : v.range(u.filter_data.value, static_cast<std::uint64_t>(s.K) * 9 * 16, "filter"))
            largest = std::max(largest, std::abs(int(static_cast<std::int8_t>(byte))));
        return largest;
    };
    CHECK(largest_weight(compile(tfl).bytes) > 3);
    CHECK(largest_weight(compile_sdk(tfl).bytes) == 3);

    vnnx::tflite::builder b;
    const auto in = b.add_tensor("tiny_input", tensor_type::INT8, {1, 8}, quant{3e-7f, 0});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 8}, quant{0.01f, 0});
    b.add_operator(B::RELU, {in}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto tiny = b.finish();
    CHECK_NOTHROW(compile(tiny));
    try {
        (void)compile_sdk(tiny);
        FAIL("a zero activation scale was accepted");
    } catch (const vnnx::error& e) {
        const std::string what = e.what();
        CHECK(what.find("tiny_input") != std::string::npos);
        CHECK(what.find("scale 3e-07") != std::string::npos);
        CHECK(what.find("--sdk-scales") != std::string::npos);
        CHECK(e.exit_code() == 1);
    }
}

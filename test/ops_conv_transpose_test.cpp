// TRANSPOSE_CONV: builder-made single-op models (int8 per-channel and uint8 weights, strides 1
// and 2 and unequal, SAME and VALID, with and without bias, odd channel counts) compile into
// DILATE + PAD + CONV_2D, and the simulator agrees with the reference interpreter within the
// conv tolerance (1 LSB). The reference itself follows TFLite's scatter definition, checked on
// hand-computed cases (the kernel turn and the odd SAME pad are where the SDK goes wrong).
#include <cstdint>
#include <filesystem>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"
#include "vnnx/compiler/verify.hpp"
#include "vnnx/ops/registry.hpp"
#include "vnnx/support/atomic_file.hpp"

using namespace conv_test;

namespace {

struct tspec {
    int N = 1, H = 5, W = 5, C = 3, K = 5, kh = 3, kw = 3, sh = 2, sw = 2;
    padding_mode pad = padding_mode::SAME;
    tensor_type type = tensor_type::INT8;
    bool per_channel = true, bias = true;
    activation_function act = activation_function::NONE;
    std::int64_t in_zero = -5, out_zero = 3;
    float in_scale = 0.05f, out_scale = 0.08f;
    std::uint64_t seed = 1;

    [[nodiscard]] int oh() const { return pad == padding_mode::SAME ? H * sh : (H - 1) * sh + std::max(kh, sh); }
    [[nodiscard]] int ow() const { return pad == padding_mode::SAME ? W * sw : (W - 1) * sw + std::max(kw, sw); }
};

std::vector<std::byte> build_transpose(const tspec& s) {
    vnnx::tflite::builder b;
    const bool u8 = s.type == tensor_type::UINT8;
    const auto in = b.add_tensor("input", s.type, {s.N, s.H, s.W, s.C}, quant{s.in_scale, u8 ? s.in_zero + 128 : s.in_zero});
    const auto shape = b.add_constant("output_shape", tensor_type::INT32, {4}, std::vector<std::int32_t>{s.N, s.oh(), s.ow(), s.K});
    const std::size_t n = static_cast<std::size_t>(s.K) * s.kh * s.kw * s.C;
    const std::size_t nq = s.per_channel ? static_cast<std::size_t>(s.K) : 1;
    const auto scales = vnnx::tflite::random_float(s.seed + 1, nq, 0.004f, 0.02f);
    const auto r = vnnx::tflite::random_int8(s.seed, n, -127, 127);
    std::int32_t w;
    if (u8) {
        std::vector<std::uint8_t> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(r[i] + 128);
        w = b.add_constant("filter", s.type, {s.K, s.kh, s.kw, s.C}, v, quant{scales, std::vector<std::int64_t>(nq, 128), 0});
    } else {
        w = b.add_constant("filter", s.type, {s.K, s.kh, s.kw, s.C}, r, quant{scales, std::vector<std::int64_t>(nq, 0), 0});
    }
    std::vector<std::int32_t> inputs{shape, w, in};
    if (s.bias) {
        std::vector<float> bs;
        for (float x : scales) bs.push_back(x * s.in_scale);
        const auto bias = vnnx::tflite::random_int32(s.seed + 2, static_cast<std::size_t>(s.K), -3000, 3000);
        inputs.push_back(b.add_constant("bias", tensor_type::INT32, {s.K}, bias, quant{bs, std::vector<std::int64_t>(bs.size(), 0), 0}));
    }
    const auto out = b.add_tensor("output", s.type, {s.N, s.oh(), s.ow(), s.K}, quant{s.out_scale, u8 ? s.out_zero + 128 : s.out_zero});
    b.add_operator(builtin_operator::TRANSPOSE_CONV, inputs, {out},
                   vnnx::tflite::transpose_conv_options{s.pad, s.sw, s.sh, s.act, tensor_type::FLOAT32});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

vnnx::ndarray input_of(const tspec& s, std::uint64_t seed) {
    vnnx::ndarray a(dtype_of(s.type), {s.N, s.H, s.W, s.C});
    const auto r = vnnx::tflite::random_int8(seed, a.element_count(), -128, 127);
    for (std::size_t i = 0; i < r.size(); ++i) a.data[i] = static_cast<std::byte>(r[i]);
    return a;
}

comparison compare(const tspec& s, const vnnx::compile_result& compiled, const std::vector<std::byte>& model) {
    const auto view = vnnx::tflite::model_view::parse(model, "transpose_conv.tflite");
    comparison c;
    for (std::uint64_t i = 0; i < 2; ++i) {
        const auto x = input_of(s, s.seed * 100 + i);
        const auto want = to_channels_first(vnnx::ref::run(view, {x}).at(0));
        const auto got = simulate(compiled.bytes, to_channels_first(x));
        REQUIRE(got.size() == want.size());
        const bool u8 = s.type == tensor_type::UINT8;
        for (std::size_t j = 0; j < got.size(); ++j) {
            const int a = u8 ? int(static_cast<std::uint8_t>(got[j])) : int(static_cast<std::int8_t>(got[j]));
            const int b = u8 ? int(static_cast<std::uint8_t>(want[j])) : int(static_cast<std::int8_t>(want[j]));
            c.max_diff = std::max(c.max_diff, std::abs(a - b));
            c.exact += a == b;
            ++c.total;
        }
    }
    return c;
}

}  // namespace

TEST_CASE("transpose conv: simulator within 1 LSB of the reference over strides, paddings, types and channels") {
    std::vector<tspec> variants;
    {
        tspec s;  // 3x3 stride 2 SAME: the odd pad (2 before, 1 after) the SDK swaps
        variants.push_back(s);
    }
    {
        tspec s;
        s.pad = padding_mode::VALID;
        s.H = 4, s.W = 5, s.C = 4, s.K = 7, s.bias = false, s.seed = 2;
        variants.push_back(s);
    }
    {
        tspec s;
        s.sh = s.sw = 1, s.C = 5, s.K = 3, s.H = 6, s.W = 7, s.seed = 3;
        variants.push_back(s);
    }
    {
        tspec s;
        s.sh = s.sw = 1, s.pad = padding_mode::VALID, s.kh = 2, s.kw = 2, s.C = 1, s.K = 1, s.seed = 4;
        variants.push_back(s);
    }
    {
        tspec s;  // uint8 weights, per-tensor, 4x4 stride 2 SAME (even pad)
        s.type = tensor_type::UINT8, s.per_channel = false, s.kh = s.kw = 4, s.C = 3, s.K = 6, s.seed = 5;
        variants.push_back(s);
    }
    {
        tspec s;  // uint8 VALID stride 2, odd channels, no bias
        s.type = tensor_type::UINT8, s.per_channel = false, s.pad = padding_mode::VALID, s.C = 7, s.K = 9, s.H = 3, s.W = 4, s.bias = false, s.seed = 6;
        variants.push_back(s);
    }
    {
        tspec s;  // unequal strides and a non-square kernel (the SDK's native path is broken there)
        s.sh = 1, s.sw = 2, s.kh = 3, s.kw = 2, s.C = 2, s.K = 4, s.seed = 7;
        variants.push_back(s);
    }
    {
        tspec s;  // kernel = stride: no padding at all; fused RELU
        s.kh = s.kw = 2, s.act = activation_function::RELU, s.C = 6, s.K = 5, s.seed = 8;
        variants.push_back(s);
    }
    {
        tspec s;  // stride 3, 5x5 SAME
        s.sh = s.sw = 3, s.kh = s.kw = 5, s.C = 3, s.K = 3, s.H = 4, s.W = 3, s.seed = 9;
        variants.push_back(s);
    }
    std::size_t total = 0, exact = 0;
    for (const auto& s : variants) {
        INFO("seed " << s.seed << " " << s.H << "x" << s.W << "x" << s.C << " -> K " << s.K << " k " << s.kh << "x" << s.kw
                     << " s " << s.sh << "x" << s.sw << (s.pad == padding_mode::SAME ? " SAME" : " VALID"));
        const auto model = build_transpose(s);
        const auto compiled = compile(model);
        // DILATE (stride > 1) and PAD layers run before one CONV_2D node.
        bool has_conv = false, has_dilate = false;
        for (const auto& n : compiled.nodes) {
            has_conv |= n.type == "CONV_2D";
            for (const auto& l : n.layers) has_dilate |= l == "DILATE";
        }
        CHECK(has_conv);
        CHECK(has_dilate == (s.sh > 1 || s.sw > 1));
        const auto c = compare(s, compiled, model);
        CHECK(c.max_diff <= 1);
        total += c.total;
        exact += c.exact;
    }
    const double rate = static_cast<double>(exact) / static_cast<double>(total);
    WARN("transpose conv: " << exact << " of " << total << " outputs bit-exact (" << rate * 100 << "%)");
    CHECK(rate > 0.9);
}

TEST_CASE("transpose conv: the reference turns the kernel and puts the odd SAME pad at the end") {
    // One channel, input [1, 2], kernel 1x3 [1 2 3], stride 2, SAME: output width 4. TFLite's
    // total pad is (2 - 1)·2 + 3 - 4 = 1, so 0 before (the odd unit is at the end). Scatter: x0 goes to columns 0..2 with weights 1,2,3; x1 to columns 2..4 (4 dropped).
    // With x = [10, 20] (zero points 0, all scales 1): out = [10, 20, 30 + 20, 40] = [10, 20, 50, 40].
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 1, 2, 1}, quant{1.0f, 0});
    const auto shape = b.add_constant("output_shape", tensor_type::INT32, {4}, std::vector<std::int32_t>{1, 1, 4, 1});
    const auto w = b.add_constant("filter", tensor_type::INT8, {1, 1, 3, 1}, std::vector<std::int8_t>{1, 2, 3}, quant{1.0f, 0});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 1, 4, 1}, quant{1.0f, 0});
    b.add_operator(builtin_operator::TRANSPOSE_CONV, {shape, w, in}, {out},
                   vnnx::tflite::transpose_conv_options{padding_mode::SAME, 2, 1, activation_function::NONE, tensor_type::FLOAT32});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto model = b.finish();
    vnnx::ndarray x(vnnx::dtype::int8, {1, 1, 2, 1});
    x.set<std::int64_t>(0, 10);
    x.set<std::int64_t>(1, 20);
    const auto view = vnnx::tflite::model_view::parse(model, "tc.tflite");
    const auto y = vnnx::ref::run(view, {x}).at(0);
    const std::vector<std::int64_t> want{10, 20, 50, 40};
    for (std::size_t i = 0; i < 4; ++i) CHECK(y.get<std::int64_t>(i) == want[i]);
    // The compiled model (kernel [3 2 1] over [0 0 10 0 20 0]: pads 2 before, 1 after) gives the same values exactly.
    const auto compiled = compile(model);
    const auto got = simulate(compiled.bytes, to_channels_first(x));
    for (std::size_t i = 0; i < 4; ++i) CHECK(static_cast<std::int8_t>(got[i]) == want[i]);
}

TEST_CASE("transpose conv: the checks name the rule broken") {
    auto problems = [](const std::vector<std::byte>& bytes) {
        const auto m = vnnx::tflite::model_view::parse(bytes, "tc.tflite");
        return vnnx::compiler::find_problems(m);
    };
    // An output that would need cropping: VALID 3x3 stride 1 makes 6 columns of 4, not 3.
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 4, 4, 2}, quant{0.1f, 0});
    const auto shape = b.add_constant("output_shape", tensor_type::INT32, {4}, std::vector<std::int32_t>{1, 3, 3, 2});
    const auto w = b.add_constant("filter", tensor_type::INT8, {2, 3, 3, 2}, vnnx::tflite::random_int8(1, 36), quant{0.01f, 0});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 3, 3, 2}, quant{0.1f, 0});
    b.add_operator(builtin_operator::TRANSPOSE_CONV, {shape, w, in}, {out},
                   vnnx::tflite::transpose_conv_options{padding_mode::VALID, 1, 1, activation_function::NONE, tensor_type::FLOAT32});
    b.set_inputs({in});
    b.set_outputs({out});
    auto p = problems(b.finish());
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0].reason, Catch::Contains("does not follow from input"));
    const auto& e = vnnx::ops::entry_for(builtin_operator::TRANSPOSE_CONV);
    CHECK(e.supported);
    CHECK(e.node_type == 3);
}

TEST_CASE("transpose conv: the compiled golden models stay within 1 LSB of TensorFlow Lite's outputs") {
    const std::filesystem::path root = std::filesystem::path(VNNX_TEST_DATA_DIR) / "ref";
    std::size_t total = 0, exact = 0;
    for (const char* name : {"transpose_conv_int8", "transpose_conv_valid_int8", "transpose_conv_uint8"}) {
        INFO(name);
        const auto d = root / name;
        const auto model = vnnx::read_file(d / "model.tflite");
        const auto x = vnnx::read_npy(d / "input_0.npy");
        const auto want = to_channels_first(vnnx::read_npy(d / "output_0.npy"));
        const auto got = simulate(compile(std::vector<std::byte>(model.begin(), model.end())).bytes, to_channels_first(x));
        REQUIRE(got.size() == want.size());
        const bool u8 = x.type == vnnx::dtype::uint8;
        int max_diff = 0;
        for (std::size_t j = 0; j < got.size(); ++j) {
            const int a = u8 ? int(static_cast<std::uint8_t>(got[j])) : int(static_cast<std::int8_t>(got[j]));
            const int b = u8 ? int(static_cast<std::uint8_t>(want[j])) : int(static_cast<std::int8_t>(want[j]));
            max_diff = std::max(max_diff, std::abs(a - b));
            exact += a == b;
            ++total;
        }
        CHECK(max_diff <= 1);
    }
    WARN("transpose conv goldens: " << exact << " of " << total << " simulated outputs equal TFLite's");
}

TEST_CASE("transpose conv: after an ADD its DILATE and PAD join the ADD's node, still within 1 LSB") {
    // x + z (ELTWISE, bit-exact) feeds a 3x3 stride-2 SAME TRANSPOSE_CONV with 5 -> 3 channels.
    vnnx::tflite::builder b;
    const quant qx{0.05f, -5};
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 6, 5, 5}, qx);
    const auto z = b.add_tensor("z", tensor_type::INT8, {1, 6, 5, 5}, qx);
    const auto s = b.add_tensor("sum", tensor_type::INT8, {1, 6, 5, 5}, quant{0.07f, 2});
    b.add_operator(builtin_operator::ADD, {x, z}, {s}, vnnx::tflite::add_options{});
    const auto shape = b.add_constant("output_shape", tensor_type::INT32, {4}, std::vector<std::int32_t>{1, 12, 10, 3});
    const auto scales = vnnx::tflite::random_float(21, 3, 0.004f, 0.02f);
    const auto w = b.add_constant("filter", tensor_type::INT8, {3, 3, 3, 5}, vnnx::tflite::random_int8(22, 135),
                                  quant{scales, std::vector<std::int64_t>(3, 0), 0});
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 12, 10, 3}, quant{0.06f, -1});
    b.add_operator(builtin_operator::TRANSPOSE_CONV, {shape, w, s}, {y},
                   vnnx::tflite::transpose_conv_options{padding_mode::SAME, 2, 2, activation_function::NONE, tensor_type::FLOAT32});
    b.set_inputs({x, z});
    b.set_outputs({y});
    const auto model = b.finish();
    const auto compiled = compile(model);
    REQUIRE(compiled.nodes.size() == 2);
    CHECK(compiled.nodes[0].layers == std::vector<std::string>{"ELTWISE", "DILATE", "PAD"});
    CHECK(compiled.nodes[1].type == "CONV_2D");
    const auto view = vnnx::tflite::model_view::parse(model, "add_tc.tflite");
    vnnx::ndarray a(vnnx::dtype::int8, {1, 6, 5, 5}), c(vnnx::dtype::int8, {1, 6, 5, 5});
    const auto ra = vnnx::tflite::random_int8(31, a.element_count(), -128, 127), rc = vnnx::tflite::random_int8(32, c.element_count(), -128, 127);
    for (std::size_t i = 0; i < ra.size(); ++i) {
        a.data[i] = static_cast<std::byte>(ra[i]);
        c.data[i] = static_cast<std::byte>(rc[i]);
    }
    const auto want = to_channels_first(vnnx::ref::run(view, {a, c}).at(0));
    vnnx::sim::machine m(compiled.bytes, "add_tc.vnnx", {vnnx::sim::isa_kind::scalar, 1});
    m.set_input(0, to_channels_first(a));
    m.set_input(1, to_channels_first(c));
    m.run();
    const auto got = m.output(0);
    REQUIRE(got.size() == want.size());
    int max_diff = 0;
    for (std::size_t j = 0; j < got.size(); ++j)
        max_diff = std::max(max_diff, std::abs(int(static_cast<std::int8_t>(got[j])) - int(static_cast<std::int8_t>(want[j]))));
    CHECK(max_diff <= 1);
}

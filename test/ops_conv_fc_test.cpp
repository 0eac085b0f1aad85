// FULLY_CONNECTED through the FC_CONV_2D rewrite (RESHAPE -> 1x1 CONV_2D -> RESHAPE) and a conv
// with a folded activation table (nlf_data), simulated and compared with the reference
// interpreter (within 1 LSB).
#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"

using namespace conv_test;

namespace {
void check_case(const spec& s, const std::string& name) {
    const auto c = compare_with_reference(s);
    WARN(name << ": exact-match rate " << 100.0 * c.exact_rate() << "% of " << c.total << ", max diff " << c.max_diff);
    CHECK(c.total > 0);
    CHECK(c.max_diff <= 1);
    CHECK(c.exact_rate() >= 0.9);
}
spec fc() {
    spec s;
    s.op = kind::fc;
    s.C = 40;
    s.K = 12;
    return s;
}
}  // namespace

TEST_CASE("fc sim: FULLY_CONNECTED as a 1x1 conv") {
    auto s = fc();
    check_case(s, "fc 40->12");
    const auto r = compile(build(s));
    bool conv = false;
    for (const auto& n : r.nodes) conv = conv || n.type == "CONV_2D";
    CHECK(conv);
    s.act = activation_function::RELU;
    s.per_channel = false;
    s.seed = 2;
    check_case(s, "fc per-tensor RELU");
    s = fc();
    s.N = 3;  // three rows: the conv runs over 3 spatial rows
    s.seed = 3;
    check_case(s, "fc 3 rows");
    s = fc();
    s.in_type = s.out_type = s.w_type = tensor_type::UINT8;
    s.w_zero = 128;
    s.per_channel = false;
    s.seed = 4;
    check_case(s, "fc uint8");
    s = fc();
    s.C = 300;
    s.K = 70;
    s.seed = 5;
    check_case(s, "fc 300->70");
}

TEST_CASE("conv + LOGISTIC: the table is folded into nlf_data") {
    using B = builtin_operator;
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 6, 6, 4}, quant{0.05f, -3});
    const auto w = b.add_constant("filter", tensor_type::INT8, {6, 3, 3, 4}, vnnx::tflite::random_int8(9, 6 * 9 * 4),
                                  quant{vnnx::tflite::random_float(10, 6, 0.004f, 0.01f), std::vector<std::int64_t>(6, 0), 0});
    const auto mid = b.add_tensor("conv", tensor_type::INT8, {1, 4, 4, 6}, quant{0.01f, 2});
    const auto out = b.add_tensor("sigmoid", tensor_type::INT8, {1, 4, 4, 6}, quant{1.0f / 256, -128});
    b.add_operator(B::CONV_2D, {in, w}, {mid},
                   vnnx::tflite::conv2d_options{padding_mode::VALID, 1, 1, activation_function::NONE, 1, 1,
                                                tensor_type::FLOAT32});
    b.add_operator(B::LOGISTIC, {mid}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto model = b.finish();
    const auto r = compile(model);
    const vnnx::format::model_view v(r.bytes, "nlf.vnnx");
    REQUIRE(v.num_nodes() == 1);
    const auto u = v.node(0).options.get<vnnx::format::node_options::Conv2DOptions>();
    REQUIRE_FALSE(u.nlf_data.absent());
    CHECK(v.node(0).output_offset == 2);  // the conv's own output (§7.1.6)
    for (const auto& l : v.node_layers(0)) CHECK(l.type != 303);  // no LUT layer left
    // Entry r of the table is the output for the conv's raw byte r: sigmoid(0.01 * (r - 2)).
    const auto table = v.range(u.nlf_data.value, 256, "test");
    CHECK(static_cast<int>(static_cast<std::int8_t>(table[2])) == 0);  // sigmoid(0) = 0.5 -> 128 - 128

    const auto view = vnnx::tflite::model_view::parse(model, "nlf.tflite");
    vnnx::ndarray x(vnnx::dtype::int8, {1, 6, 6, 4});
    const auto rnd = vnnx::tflite::random_int8(11, x.element_count(), -128, 127);
    for (std::size_t i = 0; i < rnd.size(); ++i) x.data[i] = static_cast<std::byte>(rnd[i]);
    const auto want = to_channels_first(vnnx::ref::run(view, {x}).at(0));
    const auto got = simulate(r.bytes, to_channels_first(x));
    REQUIRE(got.size() == want.size());
    int max_diff = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        max_diff = std::max(max_diff, std::abs(int(static_cast<std::int8_t>(got[i])) - int(static_cast<std::int8_t>(want[i]))));
    CHECK(max_diff <= 1);
}

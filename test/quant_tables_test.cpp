#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "vnnx/quant/activation.hpp"
#include "vnnx/quant/eltwise.hpp"
#include "vnnx/quant/fia.hpp"
#include "vnnx/quant/lut.hpp"
#include "vnnx/quant/softmax_tables.hpp"

using namespace vnnx::quant;

TEST_CASE("quant: FIA parameters and records for s = 1/256") {
    const auto p = fia_quantize(1.0 / 256, 0, 0, -128, 127);
    // t doubles from 2^-8 to 2^15 (23 steps), so e_min = −23 and o = 16 (index 1).
    CHECK(p.shift_index == 1);
    CHECK(p.multiplier == 256);
    CHECK(p.constant == 32768);  // 2^(o−1)
    const std::uint64_t r = fia_record(p);
    CHECK(r == (512ull | (256ull << 42) | (1ull << 58)));
    CHECK(fia_decode(r) == p);
    CHECK(fia_apply(1000, p) == 4);  // (1000·256 + 32768) >> 16 = round(1000/256)

    const auto q = fia_quantize(1.0 / 256, -1000, -128, -128, 127);
    CHECK(q.constant == -1000 * 256 - 128 * 65536 + 32768);
    const std::uint64_t rq = fia_record(q);
    CHECK((rq & 0x3FF) == 608);  // bits 6..15 of c mod 2^16 = 38912
    CHECK(((rq >> 10) & 0xFFFFFFFFu) == static_cast<std::uint32_t>(-132));
    CHECK(fia_decode(rq).constant == -8611840);

    // The low 6 bits are dropped by the record.
    fia_params odd{7, 2, 12345};
    CHECK(fia_decode(fia_record(odd)).constant == 12345 - 12345 % 64);
    CHECK(fia_decode(fia_record(odd)).multiplier == 7);
    CHECK(fia_decode(fia_record(odd)).shift_index == 2);

    // A dead channel (always below activation_min) gets s replaced by 1: om = 2^8, o = 8.
    const auto d = fia_quantize(1e-3, -(std::int64_t{1} << 30), 0, 0, 127);
    CHECK(d.shift_index == 0);
    CHECK(d.multiplier == 256);
    // A constant that no shift can bring within 48 bits is a clear error, not a hang.
    CHECK_THROWS_AS(fia_quantize(1e-3, -(std::int64_t{1} << 50), 0, 0, 127), vnnx::error);
    // s = 0: e_min = −8 → o = 8, om = 0.
    const auto z = fia_quantize(0.0, 5, 3, -128, 127);
    CHECK(z.multiplier == 0);
    CHECK(z.shift_index == 0);
    CHECK(z.constant == 3 * 256 + 128);
}

TEST_CASE("quant: activation ranges") {
    CHECK(tflite_activation_range(fused_activation::none, 0.05f, -10, -128, 127) == activation_range{-128, 127});
    CHECK(tflite_activation_range(fused_activation::relu, 0.05f, -10, -128, 127) == activation_range{-10, 127});
    CHECK(tflite_activation_range(fused_activation::relu6, 0.05f, -10, -128, 127) == activation_range{-10, 110});
    CHECK(tflite_activation_range(fused_activation::relu_n1_to_1, 0.05f, -10, -128, 127) == activation_range{-30, 10});
    CHECK(tflite_activation_range(fused_activation::relu6, 0.01f, 0, 0, 255) == activation_range{0, 255});
    CHECK(vnnx_activation_bounds(bounds_site::conv, fused_activation::relu6, 0.05, -10) == activation_range{-10, 110});
    CHECK(vnnx_activation_bounds(bounds_site::eltwise, fused_activation::relu6, 0.05, -10) == activation_range{-128, 127});
    CHECK(vnnx_activation_bounds(bounds_site::fully_connected, fused_activation::relu, 0.05, 3) == activation_range{3, 127});
    CHECK(vnnx_activation_bounds(bounds_site::comparison, fused_activation::none, 1, 0) == activation_range{0, 1});
}

TEST_CASE("quant: element-wise parameters") {
    const auto add = eltwise_parameters(eltwise_kind::add, 0.5, 0.25, 1.0);
    CHECK(add.left_shift == 20);
    CHECK(add.input1[0] == quantized_multiplier{1 << 30, 0});
    CHECK(add.input2[0] == quantized_multiplier{1 << 30, -1});
    CHECK(add.output == quantized_multiplier{1 << 30, -19});
    CHECK(eltwise_parameters(eltwise_kind::sub, 0.5, 0.25, 1.0, true).left_shift == 15);
    const auto mul = eltwise_parameters(eltwise_kind::mul, 0.5, 0.25, 1.0);
    CHECK(mul.left_shift == -1);
    CHECK(mul.input1.empty());
    CHECK(mul.output == quantized_multiplier{1 << 30, -2});
    CHECK(eltwise_parameters(eltwise_kind::comparison, 0.5, 0.5, 9).output == quantized_multiplier{1 << 30, 1});
    CHECK(eltwise_parameters(eltwise_kind::maximum, 0.5, 0.25, 1.0).output == quantized_multiplier{1 << 30, 1});
    CHECK(broadcast_mul_bias(3, 10, 8, 0.5) == -30 + 16);
    CHECK(broadcast_mul_bias(3, 10, 8, 0.0) == -30);
}

TEST_CASE("quant: lookup tables are in byte order") {
    const auto t = float_lut<std::int8_t>(0.1f, 0, 1.0f / 256, -128, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
    CHECK(lut_lookup(t, std::int8_t{0}) == 0);        // 0.5·256 − 128
    CHECK(lut_lookup(t, std::int8_t{127}) == 127);    // clamped
    CHECK(lut_lookup(t, std::int8_t{-128}) == -128);
    CHECK(t[255] == lut_lookup(t, std::int8_t{-1}));
    CHECK(t[0] == 0);
    const auto u = build_lut<std::uint8_t, int>([](std::uint8_t v) { return 255 - v; });
    CHECK(u[0] == 255);
    CHECK(u[200] == 55);
    std::array<int, 256> offset{};
    for (int i = 0; i < 256; ++i) offset[static_cast<std::size_t>(i)] = i;
    const auto rot = rotate_from_offset_order(offset);
    CHECK(rot[0] == 128);    // code 0
    CHECK(rot[127] == 255);  // code 127
    CHECK(rot[128] == 0);    // code −128
    CHECK(rot[255] == 127);  // code −1
}

TEST_CASE("quant: softmax tables of lowering.md 8.7") {
    const auto flat = softmax_tables(10, 0.0, 1.0 / 256);
    CHECK(flat.lut_scale == std::ldexp(1.0, 24));
    CHECK(flat.exp_table[0] == (1u << 24));
    CHECK(flat.step_values.size() == 1);
    CHECK(flat.step_codes[0] == -128);
    CHECK(flat.input == quantize_multiplier(256.0 / 65536.0));
    const auto t = softmax_tables(1024, 1.0, 1.0 / 256);
    CHECK(t.lut_scale == std::ldexp(1.0, 21));
    CHECK(t.exp_table[127] == (1u << 21));
    CHECK(t.exp_table[126] == 771499u);  // round(e^-1 · 2^21)
    CHECK(t.step_codes.back() == 127);
    const auto f = tflite_softmax_float_table(0.5f, 1.0f);
    CHECK(f[255] == 1.0f);
    CHECK(f[254] == std::exp(-0.5f));
}

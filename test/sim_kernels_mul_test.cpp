// The MUL kernel (sim/kernels/mul.hpp) and the ADD kernel as the ELTWISE layer uses them: every
// ISA equals the scalar form, and the scalar forms equal the layer's element-by-element recipe
// (64-bit, saturated) on random in-range records, so the layer's vector path changes no byte.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/quant/fixed_point.hpp>
#include <vnnx/sim/kernels/eltwise.hpp>
#include <vnnx/sim/kernels/mul.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

std::vector<isa_kind> all_isas() {
    std::vector<isa_kind> out{isa_kind::scalar};
    for (isa_kind i : {isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi})
        if (vnnx::sim::isa_supported(i)) out.push_back(i);
    return out;
}

std::vector<std::uint8_t> random_codes(std::mt19937& rng, std::size_t n, bool extreme) {
    static constexpr std::uint8_t ends[4] = {0x00, 0xFF, 0x7F, 0x80};
    std::uniform_int_distribution<int> d(0, 255), e(0, 3);
    std::vector<std::uint8_t> v(n);
    for (auto& b : v) b = extreme ? ends[e(rng)] : static_cast<std::uint8_t>(d(rng));
    return v;
}

std::int32_t code(std::uint8_t b, bool sgn) { return sgn ? static_cast<std::int8_t>(b) : b; }
std::int32_t sat(std::int64_t v) { return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, INT32_MIN, INT32_MAX)); }
}  // namespace

TEST_CASE("mul kernel: every ISA equals the scalar form, which equals the layer recipe") {
    std::mt19937 rng(2024);
    std::uniform_int_distribution<int> off(-255, 255), shift(-31, 12), coin(0, 1), len(1, 5000), ten(0, 9);
    std::uniform_int_distribution<std::int32_t> mult(0, INT32_MAX);
    vnnx::sim::thread_pool pool(2);
    for (int n = 0; n < 300; ++n) {
        k::mul_params p;
        const bool out_signed = coin(rng);
        p.input_signed = coin(rng);
        p.input1_offset = off(rng);
        p.input2_offset = off(rng);
        p.output_multiplier = ten(rng) == 0 ? INT32_MAX : mult(rng);
        p.output_shift = ten(rng) < 7 ? std::uniform_int_distribution<int>(-16, 0)(rng) : shift(rng);
        const int lo = out_signed ? -128 : 0, hi = out_signed ? 127 : 255;
        p.output_offset = std::uniform_int_distribution<int>(lo, hi)(rng);
        p.act_min = std::uniform_int_distribution<int>(lo, lo + 60)(rng);
        p.act_max = std::uniform_int_distribution<int>(p.act_min, hi)(rng);
        REQUIRE(k::mul_params_in_range(p, out_signed));
        const std::size_t count = static_cast<std::size_t>(len(rng));
        const bool extreme = ten(rng) == 0;
        const auto a = random_codes(rng, count, extreme), b = random_codes(rng, count, extreme);
        std::vector<std::uint8_t> want(count);
        for (std::size_t i = 0; i < count; ++i) {
            // The ELTWISE layer's MUL: (a - za) * (b - zb), MultiplyByQuantizedMultiplier, + zo, clamp.
            const std::int32_t x = code(a[i], p.input_signed) + p.input1_offset;
            const std::int32_t y = code(b[i], p.input_signed) + p.input2_offset;
            const std::int32_t v =
                vnnx::quant::multiply_by_quantized_multiplier(x * y, p.output_multiplier, p.output_shift) + p.output_offset;
            want[i] = static_cast<std::uint8_t>(std::clamp(v, p.act_min, p.act_max));
            REQUIRE(k::mul_one(p, a[i], b[i]) == want[i]);
        }
        for (isa_kind isa : all_isas()) {
            INFO("isa " << vnnx::sim::isa_name(isa) << " count " << count << " shift " << p.output_shift);
            std::vector<std::uint8_t> got(count, 0x5A);
            k::mul(isa, p, a, b, got, n % 2 ? &pool : nullptr);
            REQUIRE(got == want);
            got = a;  // in place: the output is the first input
            k::mul(isa, p, got, b, got, nullptr);
            REQUIRE(got == want);
        }
    }
}

TEST_CASE("add kernel: the scalar form equals the layer's 64-bit recipe on in-range records") {
    std::mt19937 rng(4048);
    std::uniform_int_distribution<int> off(-255, 255), ls(0, 20), sh(-31, 0), coin(0, 1), ten(0, 9);
    std::uniform_int_distribution<std::int32_t> mult(0, INT32_MAX);
    for (int n = 0; n < 300; ++n) {
        k::add_params p;
        p.output_signed = coin(rng);
        p.input_signed = coin(rng);
        p.input1_offset = off(rng);
        p.input2_offset = off(rng);
        p.left_shift = ten(rng) < 7 ? 20 : ls(rng);
        p.input1_multiplier = mult(rng);
        p.input2_multiplier = mult(rng);
        p.output_multiplier = mult(rng);
        p.input1_shift = sh(rng);
        p.input2_shift = sh(rng);
        p.output_shift = sh(rng);
        const int lo = p.output_signed ? -128 : 0, hi = p.output_signed ? 127 : 255;
        p.output_offset = std::uniform_int_distribution<int>(lo, hi)(rng);
        p.act_min = std::uniform_int_distribution<int>(lo, lo + 60)(rng);
        p.act_max = std::uniform_int_distribution<int>(p.act_min, hi)(rng);
        k::validate_add(p, "add");
        const auto a = random_codes(rng, 200, ten(rng) == 0), b = random_codes(rng, 200, false);
        for (std::size_t i = 0; i < a.size(); ++i) {
            using vnnx::quant::multiply_by_quantized_multiplier;
            const std::int32_t x = multiply_by_quantized_multiplier(
                sat((std::int64_t{code(a[i], p.input_signed)} + p.input1_offset) * (std::int64_t{1} << p.left_shift)),
                p.input1_multiplier, p.input1_shift);
            const std::int32_t y = multiply_by_quantized_multiplier(
                sat((std::int64_t{code(b[i], p.input_signed)} + p.input2_offset) * (std::int64_t{1} << p.left_shift)),
                p.input2_multiplier, p.input2_shift);
            const std::int32_t v =
                sat(std::int64_t{multiply_by_quantized_multiplier(sat(std::int64_t{x} + y), p.output_multiplier, p.output_shift)} +
                    p.output_offset);
            INFO("element " << i << " a " << int(a[i]) << " b " << int(b[i]));
            REQUIRE(k::add_one(p, a[i], b[i]) == static_cast<std::uint8_t>(std::clamp(v, p.act_min, p.act_max)));
        }
    }
}

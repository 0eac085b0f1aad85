// quant::fia_fit: the record fitted to observed accumulators is the best one an exhaustive
// search finds (least max(too high, too low), then fewest wrong), never worse than the start,
// and keeps the 48-bit bounds.
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "vnnx/quant/fia_fit.hpp"
#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/multiplier.hpp"

namespace {
using vnnx::quant::fia_sample;

/// TFLite's output for an accumulator A (bias included), single rounding as ruy's int8 GEMM.
std::int32_t tflite_out(std::int64_t A, const vnnx::quant::quantized_multiplier& m, std::int32_t z, std::int32_t lo,
                        std::int32_t hi) {
    const auto v = vnnx::quant::multiply_by_quantized_multiplier_single_round(static_cast<std::int32_t>(A), m.multiplier, m.shift);
    return std::clamp(v + z, lo, hi);
}

struct channel {
    std::vector<fia_sample> samples;
    vnnx::quant::fia_params start;
};

/// A channel of effective scale s, bias b (the FIA accumulator is A - b), its §8.2 record and
/// n accumulators spread like a convolution's (normal around `centre`).
channel make_channel(double s, std::int64_t b, std::int32_t z, std::size_t n, double centre, double spread,
                     std::uint64_t seed) {
    channel ch;
    ch.start = vnnx::quant::fia_quantize(s, b, z, -128, 127);
    const auto m = vnnx::quant::quantize_multiplier(s);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> d(centre, spread);
    for (std::size_t i = 0; i < n; ++i) {
        const auto A = static_cast<std::int64_t>(d(rng));
        ch.samples.push_back({A - b, tflite_out(A, m, z, -128, 127)});
    }
    return ch;
}
}  // namespace

TEST_CASE("fia_fit: the fitted record is the best of an exhaustive search and beats the start", "[quant]") {
    int improved = 0;
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        std::mt19937_64 rng(seed);
        const double s = std::uniform_real_distribution<double>(0.004, 0.01)(rng);  // shift 16, om 262..655
        const auto b = static_cast<std::int64_t>(std::uniform_int_distribution<int>(-3000, 3000)(rng));
        const auto z = static_cast<std::int32_t>(std::uniform_int_distribution<int>(-20, 20)(rng));
        const auto ch = make_channel(s, b, z, 200, 0.0, 60.0 / s, seed * 7);
        const auto r = vnnx::quant::fia_fit(ch.samples, ch.start, -128, 127);
        INFO("seed " << seed << " s " << s);
        const auto t0 = vnnx::quant::fia_tally_of(ch.samples, ch.start, -128, 127);
        const auto t1 = vnnx::quant::fia_tally_of(ch.samples, r.params, -128, 127);
        CHECK(r.start.high == t0.high);
        CHECK(r.start.low == t0.low);
        CHECK(r.tally.high == t1.high);
        CHECK(r.tally.low == t1.low);
        CHECK_FALSE(t0.better_than(t1));
        CHECK((r.params.constant % 64 == 0 || r.params == ch.start));
        CHECK(r.params.shift_index == ch.start.shift_index);
        CHECK(std::abs(r.params.multiplier - ch.start.multiplier) <= 2);
        improved += t1.better_than(t0);
        // Exhaustive: every multiplier within 2 and every multiple of 64 over a wide span.
        const int o = vnnx::quant::fia_output_shifts[static_cast<std::size_t>(ch.start.shift_index)];
        const std::int64_t W = std::int64_t{1} << o;
        auto best = t0;
        for (std::int32_t om = ch.start.multiplier - 2; om <= ch.start.multiplier + 2; ++om)
            for (std::int64_t c = (ch.start.constant & ~std::int64_t{63}) - 2 * W; c <= ch.start.constant + 2 * W; c += 64) {
                const auto t = vnnx::quant::fia_tally_of(ch.samples, {om, ch.start.shift_index, c}, -128, 127);
                if (t.better_than(best)) best = t;
            }
        CHECK(t1.cost() == best.cost());
        CHECK(t1.wrong() == best.wrong());
    }
    CHECK(improved >= 4);  // the case is one where §8.2's record leaves room
}

TEST_CASE("fia_fit: saturated outputs constrain one side only, a perfect start is kept", "[quant]") {
    // Accumulators mostly far above the top: nearly every output is 127.
    auto ch = make_channel(0.01, 100, 0, 400, 9000.0, 4000.0, 3);
    const auto r = vnnx::quant::fia_fit(ch.samples, ch.start, -128, 127);
    const auto t = vnnx::quant::fia_tally_of(ch.samples, r.params, -128, 127);
    CHECK(t.wrong() == r.tally.wrong());
    CHECK_FALSE(r.start.better_than(t));
    // Samples the start reproduces exactly leave it unchanged.
    std::vector<fia_sample> exact;
    for (const auto& x : ch.samples) exact.push_back({x.acc, vnnx::quant::fia_output(x.acc, ch.start, -128, 127)});
    const auto same = vnnx::quant::fia_fit(exact, ch.start, -128, 127);
    CHECK(same.params == ch.start);
    CHECK(same.tally.wrong() == 0);
}

TEST_CASE("fia_fit: errors leaning one way cost more than as many balanced ones", "[quant]") {
    vnnx::quant::fia_tally one_sided{4, 0}, balanced{2, 2}, fewer_one_sided{3, 0};
    CHECK(balanced.better_than(one_sided));
    CHECK(balanced.better_than(fewer_one_sided));  // max 2 against 3
    CHECK(fewer_one_sided.better_than(one_sided));
    // The validated fit keeps the start when the halves disagree: one half's errors above,
    // the other's below, each fixable only by making the other half worse.
    const vnnx::quant::fia_params start{300, 1, 0};
    std::vector<fia_sample> s;
    for (int i = 0; i < 50; ++i) s.push_back({1000 + i, vnnx::quant::fia_output(1000 + i, start, -128, 127) + 1});
    for (int i = 0; i < 50; ++i) s.push_back({1000 + i, vnnx::quant::fia_output(1000 + i, start, -128, 127) - 1});
    const auto v = vnnx::quant::fia_fit_validated(s, start, -128, 127);
    CHECK(v.params == start);
    CHECK(v.tally.wrong() == 100);
}

TEST_CASE("fia_fit: a constant beyond 48 bits over the accumulator range is never chosen", "[quant]") {
    // om near 65535 at shift 32 with a large bias puts c near the 48-bit edge; the fit must
    // check the bounds for the full accumulator range of §8.2, not only for the samples.
    const double s = 65000.0 / 4294967296.0;
    const std::int64_t b = 2000000000;
    auto ch = make_channel(s, b, 0, 200, static_cast<double>(-b), 1.0e6, 9);
    const auto r = vnnx::quant::fia_fit(ch.samples, ch.start, -128, 127);
    const __int128 c = r.params.constant;
    const __int128 om = r.params.multiplier;
    const __int128 A = vnnx::quant::fia_accumulator_bound;
    const bool top_fits = c + (A - 1) * om <= vnnx::quant::fia_c_max;
    const bool bottom_fits = c - A * om >= vnnx::quant::fia_c_min;
    CHECK(top_fits);
    CHECK(bottom_fits);
}

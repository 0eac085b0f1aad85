#pragma once
// Fitting a FIA record to observed accumulators (docs/numerics.md, "Records fitted to
// calibration data"). §8.2's record (om, o, c) reproduces TFLite's 31-bit requantization only
// near the accumulator 0; a 16-bit multiplier cannot follow it over a channel's whole range.
// Given accumulators the channel really produces and TFLite's outputs for them, this picks the
// multiplier near §8.2's and the constant (a multiple of 64: the record drops the low 6 bits)
// that reproduce the most of them. A record is only ever replaced by a strictly better one, and
// every candidate keeps the 48-bit bounds of §8.2 over the whole accumulator range.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "vnnx/quant/fia.hpp"

namespace vnnx::quant {

/// One observation: the FIA accumulator (Σ x·w of the packed weights) and TFLite's output code.
struct fia_sample {
    std::int64_t acc = 0;
    std::int32_t y = 0;
};

/// The wrong outputs of a record over samples, by side: above TFLite's and below it.
struct fia_tally {
    std::size_t high = 0, low = 0;
    /// The cost the fit minimizes: the larger side. Fewer wrong outputs alone would trade
    /// balanced ±1 errors for one-sided ones, which add up through later layers (a residual
    /// sum, a mean); the larger side falls only when errors fall without leaning one way.
    [[nodiscard]] std::size_t cost() const noexcept { return std::max(high, low); }
    [[nodiscard]] std::size_t wrong() const noexcept { return high + low; }
    [[nodiscard]] bool better_than(const fia_tally& o) const noexcept {
        return cost() != o.cost() ? cost() < o.cost() : wrong() < o.wrong();
    }
};

struct fia_fit_result {
    fia_params params;  // the chosen record (the start when nothing is better)
    fia_tally tally;    // its wrong outputs over the samples
    fia_tally start;    // the start record's
};

namespace fia_fit_detail {
inline std::int64_t floor64(std::int64_t v) { return v & ~std::int64_t{63}; }
inline std::int64_t ceil64(std::int64_t v) { return (v + 63) & ~std::int64_t{63}; }
inline bool fits48(std::int64_t c, std::int64_t om) {
    const __int128 hi = static_cast<__int128>(c) + static_cast<__int128>(fia_accumulator_bound - 1) * om;
    const __int128 lo = static_cast<__int128>(c) - static_cast<__int128>(fia_accumulator_bound) * om;
    return c >= fia_c_min && c <= fia_c_max && hi >= fia_c_min && hi <= fia_c_max && lo >= fia_c_min && lo <= fia_c_max;
}
}  // namespace fia_fit_detail

/// The accelerator's output for one accumulator: (acc·om + c) >> o, c without its low 6 bits,
/// clamped to the activation bounds.
[[nodiscard]] inline std::int32_t fia_output(std::int64_t acc, const fia_params& p, std::int32_t act_min,
                                             std::int32_t act_max) noexcept {
    fia_params q = p;
    q.constant = fia_fit_detail::floor64(p.constant);
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(fia_apply(acc, q), act_min, act_max));
}

[[nodiscard]] inline fia_tally fia_tally_of(std::span<const fia_sample> samples, const fia_params& p,
                                            std::int32_t act_min, std::int32_t act_max) noexcept {
    fia_tally t;
    for (const auto& s : samples) {
        const std::int32_t got = fia_output(s.acc, p, act_min, act_max), want = std::clamp(s.y, act_min, act_max);
        t.high += got > want;
        t.low += got < want;
    }
    return t;
}

/// The record of shift `start.shift_index`, with a multiplier within `radius` of start's, and
/// the constant (a multiple of 64) of the least cost (fia_tally) over the samples; ties keep the
/// start. Per multiplier each sample's output is right on an interval of constants, too high
/// above it and too low below (a half-line at a bound), so one sort and binary searches give
/// every candidate's tally: O(n log n).
[[nodiscard]] inline fia_fit_result fia_fit(std::span<const fia_sample> samples, const fia_params& start,
                                            std::int32_t act_min, std::int32_t act_max, std::int32_t radius = 2) {
    using namespace fia_fit_detail;
    fia_fit_result best;
    best.params = start;
    best.start = best.tally = fia_tally_of(samples, start, act_min, act_max);
    if (samples.empty() || best.tally.wrong() == 0 || act_min >= act_max) return best;
    const int o = fia_output_shifts[static_cast<std::size_t>(start.shift_index & 3)];
    const std::int64_t W = std::int64_t{1} << o;
    std::vector<std::int64_t> lows, ups, downs, cands;
    for (std::int64_t om = std::max<std::int64_t>(1, start.multiplier - radius);
         om <= std::min<std::int64_t>(fia_max_multiplier, start.multiplier + radius); ++om) {
        lows.clear();
        ups.clear();
        downs.clear();
        // Within the bounds y needs y·W <= acc·om + c < (y + 1)·W (p = y·W - acc·om <= c < p + W);
        // at act_max only the first half, at act_min only the second.
        for (const auto& s : samples) {
            const std::int32_t y = std::clamp(s.y, act_min, act_max);
            const std::int64_t p = static_cast<std::int64_t>(y) * W - s.acc * om;
            if (y == act_max) ups.push_back(p);
            else if (y == act_min) downs.push_back(p + W - 1);
            else lows.push_back(p);
        }
        std::sort(lows.begin(), lows.end());
        std::sort(ups.begin(), ups.end());
        std::sort(downs.begin(), downs.end());
        const auto le = [](const std::vector<std::int64_t>& v, std::int64_t x) {  // #(v <= x)
            return static_cast<std::size_t>(std::upper_bound(v.begin(), v.end(), x) - v.begin());
        };
        auto tally = [&](std::int64_t c) {
            fia_tally t;
            t.high = le(lows, c - W) + le(downs, c - 1);
            t.low = (lows.size() - le(lows, c)) + (ups.size() - le(ups, c));
            return t;
        };
        // The tally changes only where c crosses an interval's end: those, rounded up to 64.
        cands.clear();
        for (auto v : lows) {
            cands.push_back(ceil64(v));
            cands.push_back(ceil64(v + W));
        }
        for (auto v : ups) cands.push_back(ceil64(v));
        for (auto v : downs) cands.push_back(ceil64(v + 1));
        cands.push_back(floor64(start.constant));
        for (const auto c : cands) {
            const auto t = tally(c);
            if (!t.better_than(best.tally) || !fits48(c, om)) continue;
            best.tally = t;
            best.params = fia_params{static_cast<std::int32_t>(om), start.shift_index, c};
        }
    }
    return best;
}

/// fia_fit when it generalizes: the samples' two halves (the first and the second calibration
/// inputs, or the two halves of one) are each fitted and judged on the other half. Only when
/// neither held-out half gets worse and one gets better is the record fitted to all samples;
/// otherwise the start is kept, so that a record already near TFLite's keeps its rare,
/// scattered errors instead of trading them for others on new inputs.
[[nodiscard]] inline fia_fit_result fia_fit_validated(std::span<const fia_sample> samples, const fia_params& start,
                                                      std::int32_t act_min, std::int32_t act_max) {
    const std::size_t half = samples.size() / 2;
    const auto a = samples.first(half), b = samples.subspan(half);
    const auto fa = fia_fit(a, start, act_min, act_max), fb = fia_fit(b, start, act_min, act_max);
    const auto on_b = fia_tally_of(b, fa.params, act_min, act_max), on_a = fia_tally_of(a, fb.params, act_min, act_max);
    const bool worse = fb.start.better_than(on_b) || fa.start.better_than(on_a);
    const bool gain = on_b.better_than(fb.start) || on_a.better_than(fa.start);
    if (half == 0 || worse || !gain) {
        fia_fit_result keep;
        keep.params = start;
        keep.start = keep.tally = fia_tally{fa.start.high + fb.start.high, fa.start.low + fb.start.low};
        return keep;
    }
    return fia_fit(samples, start, act_min, act_max);
}

}  // namespace vnnx::quant

#pragma once
// ELTWISE (301), union eltwise8: two activation inputs (lowering.md §7.3.1, §8.4). The
// arithmetic is TFLite's integer recipe driven only by the record: offsets, left_shift, the
// multiplier/shift arrays and the activation bounds. Operands broadcast per channels-first
// dim (right-aligned; a dim of 1 repeats), so x − mean with a [.., 1] mean works.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "vnnx/format/enums.hpp"
#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/kernels/eltwise.hpp"
#include "vnnx/sim/kernels/mul.hpp"

namespace vnnx::sim {

namespace eltwise_detail {

struct qm {
    std::int32_t multiplier = 0;
    int shift = 0;
};

/// One (multiplier, shift) pair from two one-element arrays of the record.
inline qm read_qm(const layer_context& c, format::obj_off_t m, format::obj_off_t s, const std::string& what) {
    const auto mv = c.int32s(m, 1, what + "_multiplier");
    const auto sv = c.int32s(s, 1, what + "_shift");
    if (sv[0] < -31 || sv[0] > 30) c.reject(what + "_shift " + std::to_string(sv[0]) + " is outside -31..30");
    if (mv[0] < 0) c.reject(what + "_multiplier " + std::to_string(mv[0]) + " is negative");
    return {mv[0], sv[0]};
}

/// TFLite MultiplyByQuantizedMultiplier with a record pair.
inline std::int32_t scale(std::int32_t x, const qm& m) {
    return quant::multiply_by_quantized_multiplier(x, m.multiplier, m.shift);
}

/// Per-element source offsets of operand `a` broadcast to `out` (right-aligned dims).
struct broadcast_walk {
    std::vector<std::int64_t> out_dims, a_stride, b_stride;

    static std::vector<std::int64_t> strides_for(const std::vector<std::int32_t>& s, const std::vector<std::int64_t>& out) {
        std::vector<std::int64_t> dims(out.size(), 1);
        for (std::size_t i = 0; i < s.size(); ++i) dims[out.size() - s.size() + i] = s[i];
        std::vector<std::int64_t> st(out.size(), 0);
        std::int64_t acc = 1;
        for (std::size_t d = out.size(); d-- > 0;) {
            st[d] = dims[d] == 1 ? 0 : acc;
            acc *= dims[d];
        }
        return st;
    }

    /// Checks that a and b broadcast onto out; rejects with the dim that does not.
    broadcast_walk(const layer_context& c, const tensor_ref& a, const tensor_ref& b, const tensor_ref& out) {
        const std::size_t r = out.rank();
        if (a.rank() > r || b.rank() > r) c.reject("an input has a higher rank than the output");
        out_dims.assign(out.shape.begin(), out.shape.end());
        auto check = [&](const tensor_ref& t, const char* which) {
            for (std::size_t i = 0; i < t.rank(); ++i) {
                const auto d = t.shape[i];
                const auto o = out.shape[r - t.rank() + i];
                if (d != 1 && d != o)
                    c.reject(std::string(which) + " dim " + std::to_string(i) + " is " + std::to_string(d) +
                             ", it must be 1 or the output's " + std::to_string(o));
            }
        };
        check(a, "input 0");
        check(b, "input 1");
        a_stride = strides_for(a.shape, out_dims);
        b_stride = strides_for(b.shape, out_dims);
    }

    /// Calls f(ia, ib, io) for every output element in order.
    template <class F>
    void for_each(std::uint64_t count, F&& f) const {
        const std::size_t r = out_dims.size();
        std::vector<std::int64_t> idx(r, 0);
        std::int64_t ia = 0, ib = 0;
        for (std::uint64_t io = 0; io < count; ++io) {
            f(static_cast<std::uint64_t>(ia), static_cast<std::uint64_t>(ib), io);
            for (std::size_t d = r; d-- > 0;) {
                ++idx[d];
                ia += a_stride[d];
                ib += b_stride[d];
                if (idx[d] < out_dims[d]) break;
                ia -= a_stride[d] * idx[d];
                ib -= b_stride[d] * idx[d];
                idx[d] = 0;
            }
        }
    }
};

// ---- TFLite's DIV recipe (GetReciprocal over gemmlowp's one_over_one_plus_x) ----------------
inline int count_leading_zeros(std::uint32_t x) { return x == 0 ? 32 : std::countl_zero(x); }

inline int count_leading_sign_bits(std::int32_t x) {
    if (x >= 0) return count_leading_zeros(static_cast<std::uint32_t>(x)) - 1;
    if (x == std::numeric_limits<std::int32_t>::min()) return 0;
    return count_leading_zeros(2 * static_cast<std::uint32_t>(-x) - 1);
}

/// x · 2^e with saturation (gemmlowp SaturatingRoundingMultiplyByPOT for e > 0).
inline std::int32_t saturating_shift_left(std::int32_t x, int e) {
    const std::int32_t threshold = (1 << (31 - e)) - 1;
    if (x > threshold) return std::numeric_limits<std::int32_t>::max();
    if (x < -threshold) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << e);
}

/// gemmlowp one_over_one_plus_x_for_x_in_0_1 on raw Q0.31 / Q2.29 values.
inline std::int32_t one_over_one_plus_x(std::int32_t a_raw) {
    using quant::saturating_rounding_doubling_high_mul;
    const std::int64_t sum = static_cast<std::int64_t>(a_raw) + std::numeric_limits<std::int32_t>::max();
    const auto half_denominator = static_cast<std::int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);  // RoundingHalfSum
    constexpr std::int32_t c48_17 = 1515870810, cneg32_17 = -1010580540, one_q2 = 1 << 29;
    std::int32_t x = c48_17 + saturating_rounding_doubling_high_mul(half_denominator, cneg32_17);
    for (int i = 0; i < 3; ++i) {
        const std::int32_t hx = saturating_rounding_doubling_high_mul(half_denominator, x);
        const std::int32_t one_minus = one_q2 - hx;
        x = x + saturating_shift_left(saturating_rounding_doubling_high_mul(x, one_minus), 2);
    }
    return saturating_shift_left(x >> 1, 2);
}

inline std::int32_t reciprocal(std::int32_t x, int integer_digits, int* bits_over_unit) {
    const int headroom_plus_one = count_leading_zeros(static_cast<std::uint32_t>(x));
    *bits_over_unit = integer_digits - headroom_plus_one;
    const auto shifted_minus_one =
        static_cast<std::int32_t>((static_cast<std::uint32_t>(x) << headroom_plus_one) - (std::uint32_t{1} << 31));
    return one_over_one_plus_x(shifted_minus_one);
}

/// TFLite's quantized DIV of two zero-point-corrected values; the divisor must not be 0.
inline std::int32_t divide(std::int32_t a, std::int32_t b, const qm& out) {
    if (b < 0) {
        a = -a;
        b = -b;
    }
    int recip_shift = 0;
    const std::int32_t inv = reciprocal(b, 31, &recip_shift);
    const int headroom = count_leading_sign_bits(a);
    const std::int32_t unscaled = quant::multiply_by_quantized_multiplier_greater_than_one(a, inv, headroom);
    const int total_shift = out.shift - recip_shift - headroom;
    if (total_shift > 0) return scale(unscaled, {out.multiplier, total_shift});
    // A tiny dividend (large headroom) asks for a right shift of 32 or more, undefined in the
    // 32-bit recipe; the exact rounded value is 0 since |high_mul| < 2^31.
    if (total_shift < -31) return 0;
    return quant::multiply_by_quantized_multiplier_smaller_than_one_exp(unscaled, out.multiplier, total_shift);
}

/// The ADD table an earlier run of this layer left in its cache for the machine's ISA, if any.
inline const kernels::add_table* cached_add_table(const layer_context& c) {
    if (c.ex.isa == isa_kind::scalar || c.cache == nullptr) return nullptr;
    const auto* t = static_cast<const kernels::add_table*>(c.cache->get());
    return t && t->isa == c.ex.isa ? t : nullptr;
}

/// Whether the lookup and vector kernels may read input t while writing out (n elements): they
/// read 16 elements before writing them, so t must be out itself or lie apart from it.
inline bool lookup_safe(const tensor_ref& t, const tensor_ref& out, std::size_t n) noexcept {
    return t.data == out.data || t.data + n <= out.data || out.data + n <= t.data;
}

/// ADD and MUL of equal-shape 8-bit operands whose record values keep every intermediate in
/// int32 run through the vector kernels (bit-identical to the element loop below, which handles
/// broadcasts, the other operators and out-of-range records). Returns false when it does not apply.
inline bool fast_path(layer_context& c, const tensor_ref& a, const tensor_ref& b, const tensor_ref& out,
                      const format::layer_options::eltwise8& u, std::int32_t lo, std::int32_t hi, bool prepare_only) {
    if ((u.type != 0 && u.type != 1) || a.type != b.type || a.elem != 1 || out.elem != 1 || a.count != out.count ||
        b.count != out.count || a.shape != out.shape || b.shape != out.shape)
        return false;
    const std::size_t n = static_cast<std::size_t>(out.count);
    if (!lookup_safe(a, out, n) || !lookup_safe(b, out, n)) return false;
    const bool in_signed = a.type == 1, out_signed = out.type == 1;
    const std::span<const std::uint8_t> sa(a.u8(), n), sb(b.u8(), n);
    const std::span<std::uint8_t> so(out.u8(), n);
    if (u.type == 1) {
        kernels::mul_params p;
        p.input1_offset = -c.rec.input_offset;
        p.input2_offset = -u.input2_offset;
        const qm mo = read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
        p.output_multiplier = mo.multiplier;
        p.output_shift = mo.shift;
        p.output_offset = c.rec.output_offset;
        p.act_min = lo;
        p.act_max = hi;
        p.input_signed = in_signed;
        if (!kernels::mul_params_in_range(p, out_signed)) return false;
        if (!prepare_only) kernels::mul(c.ex.isa, p, sa, sb, so, c.ex.pool, c.where);
        return true;
    }
    kernels::add_params p;
    p.input1_offset = -c.rec.input_offset;
    p.input2_offset = -u.input2_offset;
    p.left_shift = u.left_shift;
    const qm m1 = read_qm(c, c.rec.input_multiplier, c.rec.input_shift, "input");
    const qm m2 = read_qm(c, u.input2_multiplier, u.input2_shift, "input2");
    const qm mo = read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
    p.input1_multiplier = m1.multiplier;
    p.input1_shift = m1.shift;
    p.input2_multiplier = m2.multiplier;
    p.input2_shift = m2.shift;
    p.output_multiplier = mo.multiplier;
    p.output_shift = mo.shift;
    p.output_offset = c.rec.output_offset;
    p.act_min = lo;
    p.act_max = hi;
    p.input_signed = in_signed;
    p.output_signed = out_signed;
    const int ob_lo = out_signed ? -128 : 0, ob_hi = out_signed ? 127 : 255;
    auto in = [](std::int64_t v, std::int64_t l, std::int64_t h) { return v >= l && v <= h; };
    if (!in(p.input1_offset, -255, 255) || !in(p.input2_offset, -255, 255) || !in(p.left_shift, 0, 20) ||
        !in(p.input1_shift, -31, 0) || !in(p.input2_shift, -31, 0) || !in(p.output_shift, -31, 0) ||
        !in(p.output_offset, ob_lo, ob_hi) || !in(lo, ob_lo, ob_hi) || !in(hi, ob_lo, ob_hi))
        return false;
    // SIMD ISAs look the results up in a table of every input pair, made on the first run.
    if (c.ex.isa != isa_kind::scalar && c.cache) {
        const auto* t = cached_add_table(c);
        if (!t) {
            auto made = std::make_shared<kernels::add_table>(kernels::make_add_table(c.ex.isa, p, c.where));
            t = made.get();
            *c.cache = std::move(made);
        }
        if (!prepare_only) kernels::add(*t, sa, sb, so, c.ex.pool, c.where);
        return true;
    }
    if (!prepare_only) kernels::add(c.ex.isa, p, sa, sb, so, c.ex.pool, c.where);
    return true;
}

/// The element loop: TFLite's recipe per output element, for every operator, broadcast and
/// record (the reference the vector paths are tested against).
inline void element_loop(const layer_context& c, const broadcast_walk& walk, const tensor_ref& a, const tensor_ref& b,
                         const tensor_ref& out, const format::layer_options::eltwise8& u, std::int32_t lo, std::int32_t hi) {
    const std::int32_t za = c.rec.input_offset, zb = u.input2_offset, zo = c.rec.output_offset;
    auto emit = [&](std::uint64_t io, std::int32_t v) { out.set(io, std::clamp(v, lo, hi)); };
    const int type = u.type;
    // 64-bit, saturated to int32: offsets and multipliers come from the file, and hostile
    // ones must not overflow (valid records never reach the saturation). DIV negates its
    // operands, so they stay off INT32_MIN.
    auto sat = [](std::int64_t v) {
        return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, INT32_MIN, INT32_MAX));
    };
    auto sat_sym = [](std::int64_t v) {
        return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, -INT32_MAX, INT32_MAX));
    };
    switch (type) {
        case 0:    // ADD
        case 2:    // SUB
        case 12: { // SQUARED_DIFFERENCE
            const int ls = u.left_shift;
            if (ls < 0 || ls > 20) c.reject("left_shift " + std::to_string(ls) + " is outside 0..20");
            const qm m1 = read_qm(c, c.rec.input_multiplier, c.rec.input_shift, "input");
            const qm m2 = read_qm(c, u.input2_multiplier, u.input2_shift, "input2");
            const qm mo = read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
            walk.for_each(out.count, [&](std::uint64_t ia, std::uint64_t ib, std::uint64_t io) {
                const std::int32_t x = scale(sat((std::int64_t{a.get(ia)} - za) * (std::int64_t{1} << ls)), m1);
                const std::int32_t y = scale(sat((std::int64_t{b.get(ib)} - zb) * (std::int64_t{1} << ls)), m2);
                const std::int64_t d = sat(std::int64_t{x} - y);
                const std::int64_t raw = type == 0 ? std::int64_t{x} + y : type == 2 ? d : d * d;
                emit(io, sat(std::int64_t{scale(sat(raw), mo)} + zo));
            });
            return;
        }
        case 1:    // MUL
        case 3: {  // DIV
            const qm mo = read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
            walk.for_each(out.count, [&](std::uint64_t ia, std::uint64_t ib, std::uint64_t io) {
                const std::int32_t x = sat_sym(std::int64_t{a.get(ia)} - za), y = sat_sym(std::int64_t{b.get(ib)} - zb);
                if (type == 1) {
                    emit(io, sat(std::int64_t{scale(sat(std::int64_t{x} * y), mo)} + zo));
                } else {
                    if (y == 0) c.reject("division by zero at output element " + std::to_string(io));
                    emit(io, sat(std::int64_t{divide(x, y, mo)} + zo));
                }
            });
            return;
        }
        case 4: case 5: case 6: case 7: case 8: case 9: {  // comparisons
            const int ls = u.left_shift;
            if (ls < 0 || ls > 20) c.reject("left_shift " + std::to_string(ls) + " is outside 0..20");
            const qm m1 = read_qm(c, c.rec.input_multiplier, c.rec.input_shift, "input");
            const qm m2 = read_qm(c, u.input2_multiplier, u.input2_shift, "input2");
            walk.for_each(out.count, [&](std::uint64_t ia, std::uint64_t ib, std::uint64_t io) {
                const std::int32_t x = scale(sat((std::int64_t{a.get(ia)} - za) * (std::int64_t{1} << ls)), m1);
                const std::int32_t y = scale(sat((std::int64_t{b.get(ib)} - zb) * (std::int64_t{1} << ls)), m2);
                bool r = false;
                switch (type) {
                    case 4: r = x > y; break;
                    case 5: r = x >= y; break;
                    case 6: r = x < y; break;
                    case 7: r = x <= y; break;
                    case 8: r = x == y; break;
                    default: r = x != y; break;
                }
                out.set(io, r ? 1 : 0);
            });
            return;
        }
        case 10:    // MINIMUM
        case 11: {  // MAXIMUM: the raw codes, as TFLite compares them
            walk.for_each(out.count, [&](std::uint64_t ia, std::uint64_t ib, std::uint64_t io) {
                const std::int32_t x = a.get(ia), y = b.get(ib);
                out.set(io, type == 11 ? std::max(x, y) : std::min(x, y));
            });
            return;
        }
        default: c.reject("eltwise8.type " + std::to_string(type) + " is not one of 0..12");
    }
}

/// Equal-shape 8-bit operands of an operator without a vector kernel of its own (SUB,
/// SQUARED_DIFFERENCE, the comparisons, MINIMUM, MAXIMUM; YOLO's dist2bbox SUB of two
/// 16800-element maps): a table of the result for all 65536 input pairs, made once per model by
/// the element loop itself, then looked up as the ADD table is. DIV stays in the loop (a zero
/// divisor in the table would be refused even where the data has none); small tensors too.
inline bool table_path(layer_context& c, const tensor_ref& a, const tensor_ref& b, const tensor_ref& out,
                       const format::layer_options::eltwise8& u, std::int32_t lo, std::int32_t hi, bool prepare_only) {
    if (c.ex.isa == isa_kind::scalar || c.cache == nullptr || u.type == 3 || u.type < 0 || u.type > 12) return false;
    if (a.elem != 1 || b.elem != 1 || out.elem != 1 || a.shape != out.shape || b.shape != out.shape || out.count < 16384)
        return false;
    const std::size_t n = static_cast<std::size_t>(out.count);
    if (!lookup_safe(a, out, n) || !lookup_safe(b, out, n)) return false;
    std::vector<std::uint8_t> xa(65536), xb(65536);
    for (std::size_t i = 0; i < 65536; ++i) {
        xa[i] = static_cast<std::uint8_t>(i >> 8);
        xb[i] = static_cast<std::uint8_t>(i & 0xFF);
    }
    auto table = std::make_shared<kernels::add_table>();
    table->isa = c.ex.isa;
    table->bytes.assign(65536 + 3, 0);
    auto pairs = [](tensor_ref t, std::uint8_t* data) {
        t.data = reinterpret_cast<std::byte*>(data);
        t.shape = {65536};
        t.count = 65536;
        return t;
    };
    const tensor_ref pa = pairs(a, xa.data()), pb = pairs(b, xb.data()), po = pairs(out, table->bytes.data());
    element_loop(c, broadcast_walk(c, pa, pb, po), pa, pb, po, u, lo, hi);
    const auto* t = table.get();
    *c.cache = std::move(table);
    if (!prepare_only) kernels::add(*t, {a.u8(), n}, {b.u8(), n}, {out.u8(), n}, c.ex.pool, c.where);
    return true;
}

// The layer; with prepare_only, only what a first run makes once (the tables), no element.
inline void run_layer(layer_context& c, bool prepare_only) {
    // A table for this ISA in the cache was made by an earlier run of this layer, from the same
    // records, after every check below had passed: the lookup alone (about 1 us less per run).
    if (c.tensors.size() == 3)
        if (const auto* t = cached_add_table(c)) {
            if (prepare_only) return;
            const std::size_t n = static_cast<std::size_t>(c.tensors[2].count);
            kernels::add(*t, {c.tensors[0].u8(), n}, {c.tensors[1].u8(), n}, {c.tensors[2].u8(), n}, c.ex.pool, c.where);
            return;
        }
    if (c.tensors.size() != 3) c.reject("expects two input tensors and one output tensor");
    c.require_8bit();
    const tensor_ref& a = c.tensors[0];
    const tensor_ref& b = c.tensors[1];
    const tensor_ref& out = c.tensors[2];
    const auto u = c.rec.options.get<format::layer_options::eltwise8>();
    const broadcast_walk walk(c, a, b, out);  // the shapes' check comes first on every path
    const std::int32_t lo = std::max(c.rec.activation_min, out.type_min());
    const std::int32_t hi = std::min(c.rec.activation_max, out.type_max());
    if (lo > hi) c.reject("activation_min " + std::to_string(c.rec.activation_min) + " exceeds activation_max " +
                          std::to_string(c.rec.activation_max));
    if (fast_path(c, a, b, out, u, lo, hi, prepare_only)) return;
    if (table_path(c, a, b, out, u, lo, hi, prepare_only)) return;
    if (!prepare_only) element_loop(c, walk, a, b, out, u, lo, hi);
}
}  // namespace eltwise_detail

template <>
struct layer_exec<static_cast<std::int32_t>(format::vnnx_operator::ELTWISE)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) { eltwise_detail::run_layer(c, false); }
    static void prepare(layer_context& c) { eltwise_detail::run_layer(c, true); }
};

}  // namespace vnnx::sim

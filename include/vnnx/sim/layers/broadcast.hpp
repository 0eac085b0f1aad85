#pragma once
// Element-wise layers with a constant operand stored in the file (lowering.md §7.3.2–7.3.4,
// §8.5): ADD (0), SUB (41), SQUARED_DIFFERENCE (99) and MUL (18) with union broadcast8,
// MAXIMUM (55) and MINIMUM (57) with MinMaxOptions. The constant is filter_shape_dims
// [k, c, h, w] channels-first bytes; each of its dims is 1 (repeated) or the activation's.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vnnx/format/enums.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/layers/eltwise.hpp"

namespace vnnx::sim {

namespace eltwise_detail {

/// The constant of a broadcast layer, read and indexed against the activation.
struct filter_operand {
    std::array<std::int64_t, 4> stride{};  // per [k, c, h, w] of the activation's last 4 dims; 0 = repeated
    std::array<std::int64_t, 4> act_dims{1, 1, 1, 1};
    std::vector<std::int32_t> values;

    filter_operand(const layer_context& c, const tensor_ref& x, const std::array<std::int32_t, 4>& dims,
                   format::obj_off_t data, bool is_signed) {
        for (std::size_t i = 0; i < 4; ++i) {
            act_dims[i] = x.dim_from_end(4 - i);
            if (i == 0 && x.rank() < 4) act_dims[0] = 1;
        }
        std::uint64_t count = 1;
        for (std::size_t i = 0; i < 4; ++i) {
            if (dims[i] < 1) c.reject("filter_shape_dims[" + std::to_string(i) + "] is " + std::to_string(dims[i]));
            if (dims[i] != 1 && dims[i] != act_dims[i])
                c.reject("filter_shape_dims[" + std::to_string(i) + "] is " + std::to_string(dims[i]) +
                         ", it must be 1 or the activation's " + std::to_string(act_dims[i]));
            count *= static_cast<std::uint64_t>(dims[i]);
        }
        std::int64_t acc = 1;
        for (std::size_t d = 4; d-- > 0;) {
            stride[d] = dims[d] == 1 ? 0 : acc;
            acc *= dims[d];
        }
        const auto raw = c.bytes(data, count, "filter_data");
        values.resize(raw.size());
        for (std::size_t i = 0; i < raw.size(); ++i) {
            const auto b = static_cast<std::uint8_t>(raw[i]);
            values[i] = is_signed ? static_cast<std::int8_t>(b) : b;
        }
    }

    /// Calls f(i, index of its constant element) for every activation element i < count (dense
    /// channels-first).
    template <class F>
    void for_each_index(std::uint64_t count, F&& f) const {
        const std::int64_t inner = act_dims[0] * act_dims[1] * act_dims[2] * act_dims[3];
        std::uint64_t i = 0;
        while (i < count) {
            for (std::int64_t k = 0; k < act_dims[0]; ++k)
                for (std::int64_t ch = 0; ch < act_dims[1]; ++ch)
                    for (std::int64_t r = 0; r < act_dims[2]; ++r)
                        for (std::int64_t col = 0; col < act_dims[3] && i < count; ++col, ++i)
                            f(i, static_cast<std::size_t>(k * stride[0] + ch * stride[1] + r * stride[2] + col * stride[3]));
            if (inner == 0) break;
        }
    }

    /// Calls f(i, filter value) for every activation element i < count.
    template <class F>
    void for_each(std::uint64_t count, F&& f) const {
        for_each_index(count, [&](std::uint64_t i, std::size_t at) { f(i, values[at]); });
    }
};

template <class D>
std::array<std::int32_t, 4> dims_of(const D& d) {
    return {d[0], d[1], d[2], d[3]};
}

/// What a broadcast layer computes per element, prepared once per model (the records do not
/// change between runs): the input's contribution per byte code, the constant's per element, and
/// where each output element finds its constant (an index list unless the constant is dense).
struct broadcast_plan {
    std::array<std::int32_t, 256> xs{};   // per input byte: scale((x - zi) << ls, mi), or x - zi for MUL
    std::vector<std::int32_t> fs;          // per constant element: scale((f - zf) << ls, mf), or f - zf
    std::vector<std::uint32_t> index;      // constant element of each output element; empty when dense
    std::vector<std::uint8_t> raw;         // per constant element: its byte as stored
    // SIMD ISAs on large tensors: the result for every (input byte, constant byte) pair and the
    // constant's byte at each output element, so that a run is the pair lookup of the ADD table.
    kernels::add_table pairs;
    std::vector<std::uint8_t> constant_bytes;
};

inline broadcast_plan make_broadcast_plan(const layer_context& c, int kind, const tensor_ref& x, const tensor_ref& out,
                                          const format::layer_options::broadcast8& u) {
    const filter_operand f(c, x, dims_of(u.filter_shape_dims), u.filter_data, x.is_signed());
    const std::int32_t zi = c.rec.input_offset, zf = u.filter_offset;
    broadcast_plan p;
    p.fs.resize(f.values.size());
    p.raw.resize(f.values.size());
    for (std::size_t i = 0; i < f.values.size(); ++i) p.raw[i] = static_cast<std::uint8_t>(f.values[i]);
    if (kind == 18) {
        for (int b = 0; b < 256; ++b) p.xs[static_cast<std::size_t>(b)] = (x.is_signed() ? static_cast<std::int8_t>(b) : b) - zi;
        for (std::size_t i = 0; i < f.values.size(); ++i) p.fs[i] = f.values[i] - zf;
    } else {
        const int ls = u.left_shift;
        if (ls < 0 || ls > 20) c.reject("left_shift " + std::to_string(ls) + " is outside 0..20");
        const qm mi = read_qm(c, c.rec.input_multiplier, c.rec.input_shift, "input");
        const qm mf = read_qm(c, u.filter_multiplier, u.filter_shift, "filter");
        for (int b = 0; b < 256; ++b)
            p.xs[static_cast<std::size_t>(b)] = scale(((x.is_signed() ? static_cast<std::int8_t>(b) : b) - zi) * (1 << ls), mi);
        for (std::size_t i = 0; i < f.values.size(); ++i) p.fs[i] = scale((f.values[i] - zf) * (1 << ls), mf);
    }
    if (f.values.size() != out.count) {
        p.index.resize(static_cast<std::size_t>(out.count));
        f.for_each_index(out.count, [&](std::uint64_t i, std::size_t at) { p.index[i] = static_cast<std::uint32_t>(at); });
    }
    return p;
}

/// The pair table of a broadcast plan (broadcast_plan::pairs): `value(xs, fs)` is the output
/// byte of one element, and a constant element's fs depends on its byte only, so 65536 entries
/// cover every element. Made once per model when the tensor is large enough to repay it.
template <class Value>
void make_pair_table(broadcast_plan& p, isa_kind isa, Value&& value) {
    std::array<std::int32_t, 256> fb{};  // fs per constant byte
    std::array<bool, 256> seen{};
    for (std::size_t i = 0; i < p.raw.size(); ++i) {
        fb[p.raw[i]] = p.fs[i];
        seen[p.raw[i]] = true;
    }
    p.pairs.isa = isa;
    p.pairs.bytes.assign(65536 + 3, 0);
    for (std::size_t xb = 0; xb < 256; ++xb)
        for (std::size_t cb = 0; cb < 256; ++cb)
            if (seen[cb]) p.pairs.bytes[xb << 8 | cb] = value(p.xs[xb], fb[cb]);
    const std::size_t n = p.index.empty() ? p.raw.size() : p.index.size();
    p.constant_bytes.resize(n);
    for (std::size_t i = 0; i < n; ++i) p.constant_bytes[i] = p.raw[p.index.empty() ? i : p.index[i]];
}

/// ADD / SUB / SQUARED_DIFFERENCE / MUL with a constant, union broadcast8.
// With prepare_only, only what a first run makes once (the plan, the pair table), no element.
inline void run_broadcast(layer_context& c, int kind, bool prepare_only = false) {  // 0 add, 41 sub, 99 squared difference, 18 mul
    if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
    c.require_8bit();
    const tensor_ref& x = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    c.require_same_count(x, out);
    const auto u = c.rec.options.get<format::layer_options::broadcast8>();
    const std::int32_t zo = c.rec.output_offset;
    const std::int32_t lo = std::max(c.rec.activation_min, out.type_min());
    const std::int32_t hi = std::min(c.rec.activation_max, out.type_max());
    if (lo > hi) c.reject("activation_min exceeds activation_max");
    const qm mo = read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
    const bool sub = kind == 41 && u.sub != 0;
    if (kind == 41 && u.sub == 0) c.reject("a SUB layer needs broadcast8.sub = 1");
    if (out.count > std::uint64_t{0xFFFFFFFFu}) c.reject("more elements than a 32-bit index");
    std::shared_ptr<void> local;
    std::shared_ptr<void>& slot = c.cache != nullptr ? *c.cache : local;
    if (slot == nullptr) slot = std::make_shared<broadcast_plan>(make_broadcast_plan(c, kind, x, out, u));
    const auto& p = *static_cast<const broadcast_plan*>(slot.get());
    const std::uint8_t* src = x.u8();
    std::uint8_t* dst = out.u8();
    const bool dense = p.index.empty();
    const auto n = static_cast<std::size_t>(out.count);
    const bool apart = lookup_safe(x, out, n);
    if (!p.pairs.bytes.empty() && p.pairs.isa == c.ex.isa && p.constant_bytes.size() == n && apart) {
        if (!prepare_only) kernels::add(p.pairs, {src, n}, {p.constant_bytes.data(), n}, {dst, n}, c.ex.pool, c.where);
        return;
    }
    auto run = [&](auto combine) {
        const bool table = c.ex.isa != isa_kind::scalar && c.cache != nullptr && n >= 4096 && p.pairs.bytes.empty() && apart;
        if (table) {
            auto& plan = *static_cast<broadcast_plan*>(slot.get());
            make_pair_table(plan, c.ex.isa, [&](std::int32_t xs, std::int32_t fs) {
                return static_cast<std::uint8_t>(std::clamp(scale(combine(xs, fs), mo) + zo, lo, hi));
            });
            if (!prepare_only) kernels::add(plan.pairs, {src, n}, {plan.constant_bytes.data(), n}, {dst, n}, c.ex.pool, c.where);
            return;
        }
        if (prepare_only) return;
        for (std::size_t i = 0; i < n; ++i) {
            const std::int32_t xs = p.xs[src[i]];
            const std::int32_t fs = p.fs[dense ? i : p.index[i]];
            dst[i] = static_cast<std::uint8_t>(std::clamp(scale(combine(xs, fs), mo) + zo, lo, hi));
        }
    };
    if (kind == 18) run([](std::int32_t a, std::int32_t b) { return a * b; });
    else if (kind == 99) run([](std::int32_t a, std::int32_t b) { return (a - b) * (a - b); });
    else if (sub && u.swap_inputs) run([](std::int32_t a, std::int32_t b) { return b - a; });
    else if (sub) run([](std::int32_t a, std::int32_t b) { return a - b; });
    else run([](std::int32_t a, std::int32_t b) { return a + b; });
}

}  // namespace eltwise_detail

template <>
struct layer_exec<0> {  // ADD with a constant
    static constexpr bool defined = true;
    static void run(layer_context& c) { eltwise_detail::run_broadcast(c, 0); }
    static void prepare(layer_context& c) { eltwise_detail::run_broadcast(c, 0, true); }
};
template <>
struct layer_exec<41> {  // SUB with a constant
    static constexpr bool defined = true;
    static void run(layer_context& c) { eltwise_detail::run_broadcast(c, 41); }
    static void prepare(layer_context& c) { eltwise_detail::run_broadcast(c, 41, true); }
};
template <>
struct layer_exec<99> {  // SQUARED_DIFFERENCE with a constant
    static constexpr bool defined = true;
    static void run(layer_context& c) { eltwise_detail::run_broadcast(c, 99); }
    static void prepare(layer_context& c) { eltwise_detail::run_broadcast(c, 99, true); }
};
template <>
struct layer_exec<18> {  // MUL with a constant
    static constexpr bool defined = true;
    static void run(layer_context& c) { eltwise_detail::run_broadcast(c, 18); }
    static void prepare(layer_context& c) { eltwise_detail::run_broadcast(c, 18, true); }
};

/// MAXIMUM (55) / MINIMUM (57) with a constant: raw codes compared, as TFLite does.
template <std::int32_t Type>
struct min_max_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
        c.require_8bit();
        const tensor_ref& x = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        c.require_same_count(x, out);
        const auto u = c.rec.options.get<format::layer_options::MinMaxOptions>();
        if (u.max != (Type == 55 ? 1 : 0)) c.reject("MinMaxOptions.max " + std::to_string(u.max) + " contradicts the layer type");
        const eltwise_detail::filter_operand f(c, x, eltwise_detail::dims_of(u.filter_shape_dims), u.filter_data,
                                               x.is_signed());
        f.for_each(out.count, [&](std::uint64_t i, std::int32_t fv) {
            const std::int32_t v = x.get(i);
            out.set(i, Type == 55 ? std::max(v, fv) : std::min(v, fv));
        });
    }
};
template <> struct layer_exec<55> : min_max_exec<55> {};
template <> struct layer_exec<57> : min_max_exec<57> {};

}  // namespace vnnx::sim

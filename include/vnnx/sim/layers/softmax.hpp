#pragma once
// SOFTMAX (25) layer, from the record: SoftmaxOptions.axis (−3 channels, −2 rows, −1 columns)
// names the normalised channels-first axis, `depth` its length; `vci_int8` holds the uint32
// table E[r] ≈ exp((v − 127)·S_in·β)·L (v = r as int8, four byte planes) and input_multiplier/
// input_shift = QM(1 / (S_out·2^16)). Per vector: m = max code; e_j = E[x_j − m + 127] (the
// difference always lies in −255..0, so the index is a valid int8 code); the output is
// round(e_j / Σe · 2^16 · M) + z_out, clamped, with M the stored real multiplier. The scale L
// cancels in the ratio, so the table's own normalisation never needs to be known.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/kernels/softmax_blocks.hpp"

namespace vnnx::sim {

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::SOFTMAX)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
        c.require_8bit();
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        c.require_same_count(in, out);
        const auto o = c.rec.options.get<format::layer_options::SoftmaxOptions>();
        if (o.axis < -3 || o.axis > -1) c.reject("axis " + std::to_string(o.axis) + " is not one of -3, -2, -1");
        const auto from_end = static_cast<std::size_t>(-o.axis);
        const std::int64_t n = in.dim_from_end(from_end);
        if (n != o.depth) c.reject("depth " + std::to_string(o.depth) + " differs from the axis length " + std::to_string(n));
        const std::int64_t inner = from_end == 3 ? std::int64_t{in.rows()} * in.cols() : from_end == 2 ? in.cols() : 1;
        const std::int64_t outer = static_cast<std::int64_t>(in.count) / (n * inner);
        const auto planes = c.bytes(o.vci_int8, 1024, "vci_int8");
        std::uint32_t table[256];
        for (std::size_t r = 0; r < 256; ++r)
            table[r] = static_cast<std::uint32_t>(planes[r]) | static_cast<std::uint32_t>(planes[256 + r]) << 8 |
                       static_cast<std::uint32_t>(planes[512 + r]) << 16 | static_cast<std::uint32_t>(planes[768 + r]) << 24;
        const auto m = c.int32s(c.rec.input_multiplier, 1, "input_multiplier")[0];
        const auto s = c.int32s(c.rec.input_shift, 1, "input_shift")[0];
        if (m <= 0 || s < -62 || s > 62) c.reject("input_multiplier/input_shift do not describe a positive real");
        // 2^16 · M, M = m·2^(s − 31)
        const double k = std::ldexp(static_cast<double>(m), s - 31 + 16);
        const std::int32_t zo = c.rec.output_offset, lo = out.type_min(), hi = out.type_max();
        std::vector<std::uint32_t> e(static_cast<std::size_t>(n));
        // Typed loops (the output layer of a classifier runs alone, 1001 codes); q >= 0 rounds
        // half away from zero as std::round does, through an exact integer truncation.
        auto vectors = [&](const auto* x, auto* y) {
            // Many short vectors side by side: the blocked kernel (k < 2^30 keeps its int32 rounding exact).
            if (k < 0x1p30 && inner >= 16) {
                const kernels::softmax_params p{table, k, zo, lo, hi, n, inner, outer};
                if (!kernels::softmax_blocks(c.ex.isa, p, x, y, c.ex.pool)) c.reject("the exponential table sums to zero");
                return;
            }
            for (std::int64_t a = 0; a < outer; ++a)
                for (std::int64_t b = 0; b < inner; ++b) {
                    const std::int64_t base = a * n * inner + b;
                    std::int32_t mx = INT32_MIN;
                    for (std::int64_t j = 0; j < n; ++j) mx = std::max<std::int32_t>(mx, x[base + j * inner]);
                    std::uint64_t sum = 0;
                    for (std::int64_t j = 0; j < n; ++j) {
                        const std::int32_t v = x[base + j * inner] - mx + 127;
                        e[static_cast<std::size_t>(j)] = table[static_cast<std::uint8_t>(static_cast<std::int8_t>(v))];
                        sum += e[static_cast<std::size_t>(j)];
                    }
                    if (sum == 0) c.reject("the exponential table sums to zero");
                    const double scale = k / static_cast<double>(sum);
                    for (std::int64_t j = 0; j < n; ++j) {
                        const double q = static_cast<double>(e[static_cast<std::size_t>(j)]) * scale;
                        std::int64_t r;
                        if (q < 0x1p52) {
                            r = static_cast<std::int64_t>(q);
                            if (q - static_cast<double>(r) >= 0.5) ++r;
                        } else {
                            r = static_cast<std::int64_t>(std::min(std::round(q), 0x1p62));
                        }
                        y[base + j * inner] = static_cast<std::remove_pointer_t<decltype(y)>>(
                            std::clamp<std::int64_t>(r + zo, lo, hi));
                    }
                }
        };
        const bool si = in.type == 1, so = out.type == 1;
        if (si && so) vectors(reinterpret_cast<const std::int8_t*>(in.data), reinterpret_cast<std::int8_t*>(out.data));
        else if (si) vectors(reinterpret_cast<const std::int8_t*>(in.data), out.u8());
        else if (so) vectors(in.u8(), reinterpret_cast<std::int8_t*>(out.data));
        else vectors(in.u8(), out.u8());
    }
};

}  // namespace vnnx::sim

#pragma once
// ARG_MAX (56) / ARG_MIN (79) layers: the reduce8 flag names the channels-first axis searched
// (exactly one of channels, rows, columns); each output element is the int32 index of the first
// maximum (minimum) code along it, outputs in the order of the kept elements.
#include <cstdint>
#include <string>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"

namespace vnnx::sim {

template <bool Minimum>
struct argmax_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.type != 0 && in.type != 1) c.reject("expects an 8-bit input");
        if (out.type != 3) c.reject("expects an int32 output, found calc type " + std::to_string(out.type));
        const auto r8 = c.rec.options.get<format::layer_options::reduce8>();
        if ((r8.channels != 0) + (r8.rows != 0) + (r8.columns != 0) != 1) c.reject("reduce8 must flag exactly one axis");
        const std::int64_t outer = in.outer(), C = in.channels(), H = in.rows(), W = in.cols();
        // The searched axis has n entries at stride `step`; the rest is walked as [a, b] blocks.
        const std::int64_t n = r8.channels ? C : r8.rows ? H : W;
        const std::int64_t step = r8.channels ? H * W : r8.rows ? W : 1;
        const std::int64_t inner = r8.channels ? H * W : r8.rows ? W : 1;  // elements after the axis
        const std::int64_t before = outer * C * H * W / (n * inner);
        if (static_cast<std::int64_t>(out.count) != before * inner)
            c.reject("output has " + std::to_string(out.count) + " elements, expected " + std::to_string(before * inner));
        for (std::int64_t b = 0; b < before; ++b)
            for (std::int64_t k = 0; k < inner; ++k) {
                const std::int64_t base = b * n * inner + k;
                std::int32_t best = in.get(static_cast<std::uint64_t>(base)), at = 0;
                for (std::int64_t j = 1; j < n; ++j) {
                    const std::int32_t v = in.get(static_cast<std::uint64_t>(base + j * step));
                    if (Minimum ? v < best : v > best) {
                        best = v;
                        at = static_cast<std::int32_t>(j);
                    }
                }
                out.set(static_cast<std::uint64_t>(b * inner + k), at);
            }
    }
};

template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::ARG_MAX)> : argmax_exec<false> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::ARG_MIN)> : argmax_exec<true> {};

}  // namespace vnnx::sim

#pragma once
// --sdk-scales: the SDK's flow reads the model as JSON text written by `flatc -t`, which prints
// every float32 field with six decimals (0.5847029 -> 0.584703), and computes its multipliers,
// records and tables from those decimals read back as doubles. Rounding the graph's scales (and
// the float options) the same way lets a user get the SDK's records exactly: a model validated
// on a board with the SDK's file keeps its numbers. The default keeps the file's float32 scales,
// which are TFLite's own.
#include <cstdio>
#include <cstdlib>

#include "vnnx/ir/graph.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::compiler::passes {

/// The value the SDK reads for a float32 field: its "%.6f" text, parsed as a double (both the
/// printing and the parsing round correctly, so the result is exact, not approximate).
inline double sdk_decimal(float v) {
    char text[64];
    std::snprintf(text, sizeof text, "%.6f", static_cast<double>(v));
    return std::strtod(text, nullptr);
}

inline void round_scales_as_sdk(graph& g) {
    for (auto& t : g.tensors)
        for (auto& s : t.quant.scale) {
            // Below 5e-7 a scale prints as 0. On a filter the SDK then writes multiplier 0 (the
            // channel outputs its zero point), and so does this; an activation cannot divide by 0.
            const double r = sdk_decimal(static_cast<float>(s));
            if (r == 0 && s > 0 && !t.is_constant()) {
                char shown[32];  // %g: std::to_string would print such a scale as 0.000000
                std::snprintf(shown, sizeof shown, "%g", s);
                fail(error_kind::unsupported, g.source + ": tensor '" + t.name + "': scale " + shown +
                                                  " is 0 at six decimals (--sdk-scales); compile without --sdk-scales");
            }
            s = r;
        }
    g.arith = quant::scale_arith::sdk_double;
    g.sdk_records = true;
    for (auto& o : g.ops) {
        o.options.alpha = static_cast<float>(sdk_decimal(o.options.alpha));
        o.options.beta = static_cast<float>(sdk_decimal(o.options.beta));
    }
}

}  // namespace vnnx::compiler::passes

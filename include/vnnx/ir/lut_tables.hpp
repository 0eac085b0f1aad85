#pragma once
// The default LUT table evaluator (lowering.md §3.4, §8.6.2): like the SDK, a chain of
// element-wise operators is saved as a tiny TFLite model whose activation tensors all have
// shape [1, 1, 256, L], fed with the 256 input codes (cast to the input type, so an int8
// input sees 0..127, -128..-1, which puts code v at row v & 0xFF) in every channel, and run
// with the reference interpreter. Row r, column c of the output is entry r of table c. The
// tables are thus exactly the interpreter's own integer kernels, never a second formula.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vnnx/ir/graph.hpp"
#include "vnnx/ir/lut_chain.hpp"
#include "vnnx/ref/interpreter.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/builder.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace vnnx::compiler {

namespace detail {

inline std::optional<dtype> lut_dtype_of(tensor_type t) {
    switch (t) {
        case tensor_type::INT8: return dtype::int8;
        case tensor_type::UINT8: return dtype::uint8;
        case tensor_type::INT32: return dtype::int32;
        case tensor_type::BOOL: return dtype::bool_;  // a comparison with a constant: entries 0 / 1
        default: return std::nullopt;
    }
}

inline tflite::quant lut_quant_of(const quantization& q) {
    // The table model holds float32 scales, as the SDK's table model does (its JSON written back).
    return tflite::quant(std::vector<float>(q.scale.begin(), q.scale.end()), q.zero_point, q.quantized_dimension);
}

/// Adds operator `o` to the builder with the TFLite options the reference kernels read.
inline void add_chain_operator(tflite::builder& b, const op& o, std::vector<std::int32_t> ins,
                               std::vector<std::int32_t> outs) {
    using B = builtin_operator;
    const auto& x = o.options;
    switch (o.code) {
        case B::ADD: b.add_operator(o.code, ins, outs, tflite::add_options{x.fused, x.pot_scale_int16}); break;
        case B::SUB: b.add_operator(o.code, ins, outs, tflite::sub_options{x.fused, x.pot_scale_int16}); break;
        case B::MUL: b.add_operator(o.code, ins, outs, tflite::mul_options{x.fused}); break;
        case B::DIV: b.add_operator(o.code, ins, outs, tflite::div_options{x.fused}); break;
        case B::LEAKY_RELU: b.add_operator(o.code, ins, outs, tflite::leaky_relu_options{x.alpha}); break;
        case B::GELU: b.add_operator(o.code, ins, outs, tflite::gelu_options{x.approximate}); break;
        default: b.add_operator(o.code, ins, outs); break;
    }
}

}  // namespace detail

/// The chain's tables: `tables` tables of 256 entries, entry r = output for input byte r.
inline std::vector<std::vector<std::int32_t>> evaluate_lut_chain(const graph& g, const std::vector<std::int32_t>& chain,
                                                                 int tables) {
    if (chain.empty()) fail(error_kind::bad_input, g.source + ": an empty LUT chain");
    if (tables < 1 || tables > 4)
        fail(error_kind::unsupported, g.source + ": a LUT chain needs 1 to 4 tables, not " + std::to_string(tables));
    const op& first = g.ops.at(static_cast<std::size_t>(chain.front()));
    const std::string where = g.source + ": " + describe(first);
    std::int32_t chain_in = -1;
    for (auto t : first.inputs)
        if (t >= 0 && !g.t(t).is_constant()) {
            chain_in = t;
            break;
        }
    if (chain_in < 0) fail(error_kind::bad_input, where + ": a LUT chain needs one activation input");

    const std::int32_t L = tables;
    const std::vector<std::int32_t> act_shape{1, 1, 256, L};
    tflite::builder b;
    std::map<std::int32_t, std::int32_t> mapped;  // graph tensor -> builder tensor
    auto map_tensor = [&](std::int32_t t) {
        if (auto it = mapped.find(t); it != mapped.end()) return it->second;
        const tensor& x = g.t(t);
        std::int32_t k = 0;
        if (x.is_constant()) {
            k = b.add_constant(x.name, x.type, x.shape, std::span<const std::byte>(*x.data), detail::lut_quant_of(x.quant));
        } else {
            k = b.add_tensor(x.name, x.type, act_shape, detail::lut_quant_of(x.quant));
        }
        mapped.emplace(t, k);
        return k;
    };
    const std::int32_t in_k = map_tensor(chain_in);
    std::int32_t last_out = -1;
    for (auto i : chain) {
        const op& o = g.ops.at(static_cast<std::size_t>(i));
        if (o.kind != op_type::builtin || o.outputs.size() != 1)
            fail(error_kind::unsupported, g.source + ": " + describe(o) + ": cannot be part of a LUT chain");
        std::vector<std::int32_t> ins, outs;
        for (auto t : o.inputs) ins.push_back(map_tensor(t));
        outs.push_back(map_tensor(o.outputs[0]));
        detail::add_chain_operator(b, o, std::move(ins), std::move(outs));
        last_out = o.outputs[0];
    }
    b.set_inputs({in_k});
    b.set_outputs({mapped.at(last_out)});
    const auto bytes = b.finish();

    const auto in_type = detail::lut_dtype_of(g.t(chain_in).type);
    const auto out_type = detail::lut_dtype_of(g.t(last_out).type);
    if (!in_type || *in_type == dtype::int32)
        fail(error_kind::unsupported, where + ": a LUT chain input must be int8 or uint8, not " +
                                          std::string(tflite::type_name(g.t(chain_in).type)));
    if (!out_type)
        fail(error_kind::unsupported, where + ": a LUT chain output must be int8, uint8, int32 or bool, not " +
                                          std::string(tflite::type_name(g.t(last_out).type)));
    ndarray ramp(*in_type, {1, 1, 256, L});
    for (std::int32_t r = 0; r < 256; ++r)
        for (std::int32_t c = 0; c < L; ++c) {
            // The byte r read as the input type: int8 sees 0..127 then -128..-1.
            const std::int32_t v = *in_type == dtype::int8 ? static_cast<std::int8_t>(r) : r;
            ramp.set<std::int32_t>(static_cast<std::size_t>(r * L + c), v);
        }
    std::vector<ndarray> outputs;
    try {
        const auto model = tflite::model_view::parse(bytes, g.source + " (LUT chain)");
        std::vector<ndarray> inputs;
        inputs.push_back(std::move(ramp));
        outputs = ref::run(model, std::move(inputs));
    } catch (const error& e) {
        fail(error_kind::unsupported, where + ": the lookup table of its element-wise chain cannot be computed: " + e.what());
    }
    if (outputs.size() != 1 || outputs[0].element_count() != static_cast<std::size_t>(256 * L))
        fail(error_kind::bad_input, where + ": the LUT chain did not produce 256 x " + std::to_string(L) + " values");
    std::vector<std::vector<std::int32_t>> out(static_cast<std::size_t>(L), std::vector<std::int32_t>(256));
    for (std::int32_t r = 0; r < 256; ++r)
        for (std::int32_t c = 0; c < L; ++c)
            out[static_cast<std::size_t>(c)][static_cast<std::size_t>(r)] =
                outputs[0].get<std::int32_t>(static_cast<std::size_t>(r * L + c));
    return out;
}

/// The evaluator `vnnx::compile` uses when compile_options::lut is empty.
[[nodiscard]] inline passes::lut_evaluator default_lut_evaluator() { return &evaluate_lut_chain; }

}  // namespace vnnx::compiler

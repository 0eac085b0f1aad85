#pragma once
// EXPLICIT_PAD (lowering.md §3.2): convolutions and max pools with SAME padding get an
// explicit PADV2 in front (constant = input zero point; max pool: the type's minimum) and
// become VALID, so no conv or pool reaches lowering with implicit padding. Consumers of the
// same tensor that need identical pads share one PADV2 (SHARED_PAD).
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "vnnx/ir/graph_helpers.hpp"

namespace vnnx::compiler::passes {

inline void explicit_pad(graph& g) {
    using B = builtin_operator;
    std::map<std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t, std::int32_t, std::int32_t>, std::int32_t>
        shared;  // (input, top, bottom, left, right, value) -> padded tensor
    std::vector<op> out;
    out.reserve(g.ops.size());
    for (auto& o : g.ops) {
        const bool conv = o.kind == op_type::builtin && (o.code == B::CONV_2D || o.code == B::DEPTHWISE_CONV_2D);
        const bool maxpool = o.kind == op_type::builtin && o.code == B::MAX_POOL_2D;
        if ((!conv && !maxpool) || o.options.pad != padding::SAME || o.inputs.empty() || o.outputs.empty()) {
            out.push_back(std::move(o));
            continue;
        }
        const std::int32_t in = o.inputs[0];
        const auto ishape = g.t(in).shape;
        const auto oshape = g.t(o.outputs[0]).shape;
        if (ishape.size() != 4 || oshape.size() != 4) {
            out.push_back(std::move(o));
            continue;
        }
        std::int32_t kh = o.options.filter_h, kw = o.options.filter_w;
        if (conv) {
            const auto& w = g.t(o.inputs[1]).shape;  // [K, kh, kw, C] or [1, kh, kw, C]
            kh = w.size() == 4 ? w[1] : 1;
            kw = w.size() == 4 ? w[2] : 1;
        }
        const auto [top, bottom] = same_pads(ishape[1], oshape[1], o.options.stride_h, kh, conv ? o.options.dilation_h : 1);
        const auto [left, right] = same_pads(ishape[2], oshape[2], o.options.stride_w, kw, conv ? o.options.dilation_w : 1);
        o.options.pad = padding::VALID;
        if (top + bottom + left + right == 0) {
            out.push_back(std::move(o));
            continue;
        }
        const tensor& src = g.t(in);
        std::int32_t value = src.quant.zero0();
        if (maxpool) value = src.type == tensor_type::UINT8 ? 0 : -128;
        const auto key = std::make_tuple(in, top, bottom, left, right, value);
        auto it = shared.find(key);
        std::int32_t padded;
        if (it != shared.end()) {
            padded = it->second;
        } else {
            const auto pads = add_i32_constant(g, g.t(in).name + "/pads", {4, 2},
                                               {0, 0, top, bottom, left, right, 0, 0});
            tensor cv;
            cv.name = g.unique_name(g.t(in).name + "/pad_value");
            cv.type = g.t(in).type;
            cv.quant = g.t(in).quant;
            cv.shape = {};
            cv.data = std::vector<std::byte>{static_cast<std::byte>(static_cast<std::uint8_t>(value))};
            const auto value_t = g.add_tensor(std::move(cv));
            padded = add_activation_like(g, in, g.t(in).name + "/padded",
                                         {ishape[0], ishape[1] + top + bottom, ishape[2] + left + right, ishape[3]});
            op pad;
            pad.code = B::PADV2;
            pad.inputs = {in, pads, value_t};
            pad.outputs = {padded};
            out.push_back(std::move(pad));
            shared.emplace(key, padded);
        }
        o.inputs[0] = padded;
        out.push_back(std::move(o));
    }
    g.ops = std::move(out);
}

}  // namespace vnnx::compiler::passes

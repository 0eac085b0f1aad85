#pragma once
// LUT (303): out = table[c][byte(in)], table c chosen by the element's channel when the layer
// holds one table per channel (lut_count > 1), else table 0. 1-byte outputs store 256 bytes
// per table; 4-byte (INT32) outputs store four byte planes of 256 bytes.
#include <array>
#include <cstdint>
#include <vector>

#include "vnnx/format/enums.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/kernels/eltwise.hpp"

namespace vnnx::sim {

template <>
struct layer_exec<static_cast<std::int32_t>(format::vnnx_operator::LUT)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.type != 0 && in.type != 1) c.reject("input must be 8-bit");
        c.require_same_count(in, out);
        const auto opt = c.rec.options.get<format::layer_options::ActivationOptions>();
        const std::int32_t n = opt.lut_count;
        if (n < 1 || n > 4) c.reject("lut_count " + std::to_string(n) + " is outside 1..4");
        const bool wide = out.elem == 4;
        if (!wide && out.elem != 1) c.reject("output must be 8-bit or 32-bit");
        const std::uint64_t per_table = wide ? 1024 : 256;
        const auto raw = c.bytes(opt.vci_int8, per_table * static_cast<std::uint64_t>(n), "vci_int8 tables");
        std::vector<std::array<std::int32_t, 256>> tables(static_cast<std::size_t>(n));
        for (std::size_t t = 0; t < tables.size(); ++t)
            for (std::size_t r = 0; r < 256; ++r) {
                const std::byte* p = raw.data() + t * per_table;
                if (wide) {
                    std::uint32_t v = 0;
                    for (std::size_t plane = 0; plane < 4; ++plane)
                        v |= static_cast<std::uint32_t>(p[plane * 256 + r]) << (8 * plane);
                    tables[t][r] = static_cast<std::int32_t>(v);
                } else {
                    const auto b = static_cast<std::uint8_t>(p[r]);
                    tables[t][r] = out.type == 1 ? static_cast<std::int8_t>(b) : b;
                }
            }
        const std::uint64_t plane = static_cast<std::uint64_t>(in.rows()) * static_cast<std::uint64_t>(in.cols());
        const std::uint64_t channels = static_cast<std::uint64_t>(in.channels());
        if (n > 1 && channels != static_cast<std::uint64_t>(n))
            c.reject(std::to_string(n) + " tables for " + std::to_string(channels) + " channels");
        const std::uint8_t* src = in.u8();
        if (!wide) {
            // Byte tables: the element-wise kernel (a byte permute per 64 elements with VBMI),
            // channel planes over the pool.
            std::vector<kernels::table8> t8(tables.size());
            for (std::size_t t = 0; t < tables.size(); ++t)
                for (std::size_t r = 0; r < 256; ++r) t8[t][r] = static_cast<std::uint8_t>(tables[t][r]);
            const std::size_t batch = static_cast<std::size_t>(channels * plane);
            for (std::size_t o = 0; o * batch < in.count; ++o)
                kernels::apply_lut(c.ex.isa, t8, {src + o * batch, batch}, {out.u8() + o * batch, batch},
                                   static_cast<std::size_t>(channels), c.ex.pool, c.where);
            return;
        }
        for (std::uint64_t i = 0; i < in.count; ++i) {
            const std::size_t t = n == 1 ? 0 : static_cast<std::size_t>((i / plane) % channels);
            out.set(i, tables[t][src[i]]);
        }
    }
};

}  // namespace vnnx::sim

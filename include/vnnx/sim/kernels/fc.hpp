#pragma once
// Fully connected with the FIA arithmetic: y[t][k] = requantize(sum_c x[t][c] * w[k][c]).
// It is a 1x1 convolution over a 1 x T "image" with C channels, so it reuses conv2d (and its
// packed weights); the row-major [T][C] input and [T][K] output are transposed around it
// (O(T*(C+K)) work against O(T*C*K) multiplies). T = 1 needs no transpose at all.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "vnnx/sim/kernels/conv.hpp"

namespace vnnx::sim::kernels {

struct fc_shape {
    int in_features = 1;   // C
    int out_features = 1;  // K
    int rows = 1;          // T (token-wise FC); 1 for a plain vector
    bool input_signed = true;
    bool output_signed = true;
};

class fully_connected {
public:
    fully_connected(const fc_shape& s, std::span<const std::int8_t> weights, requant_params rq, isa_kind isa,
                    std::string name = "fully_connected")
        : s_(s), conv_(as_conv(s, name), weights, std::move(rq), isa, name) {}

    [[nodiscard]] const fc_shape& shape() const noexcept { return s_; }
    [[nodiscard]] isa_kind isa() const noexcept { return conv_.isa(); }

    // input [T][C], output [T][K]
    void run(std::span<const std::uint8_t> input, std::span<std::uint8_t> output, conv_workspace& ws,
             thread_pool* pool = nullptr) const {
        const std::size_t t = static_cast<std::size_t>(s_.rows), c = static_cast<std::size_t>(s_.in_features),
                          k = static_cast<std::size_t>(s_.out_features);
        if (input.size() != t * c)
            fail_input(conv_.name() + ": input has " + std::to_string(input.size()) + " bytes, expected " +
                       std::to_string(t * c) + " (" + std::to_string(t) + " rows of " + std::to_string(c) + ")");
        if (output.size() != t * k)
            fail_input(conv_.name() + ": output has " + std::to_string(output.size()) + " bytes, expected " +
                       std::to_string(t * k));
        if (t == 1) {
            conv_.run(input, output, ws, pool);
            return;
        }
        ws.extra.resize(t * c + t * k);
        std::uint8_t* xt = ws.extra.data();  // [C][T]
        std::uint8_t* yt = xt + t * c;       // [K][T]
        for (std::size_t r = 0; r < t; ++r)
            for (std::size_t i = 0; i < c; ++i) xt[i * t + r] = input[r * c + i];
        conv_.run({xt, t * c}, {yt, t * k}, ws, pool);
        for (std::size_t i = 0; i < k; ++i)
            for (std::size_t r = 0; r < t; ++r) output[r * k + i] = yt[i * t + r];
    }
    void run(std::span<const std::uint8_t> input, std::span<std::uint8_t> output,
             thread_pool* pool = nullptr) const {
        conv_workspace ws;
        run(input, output, ws, pool);
    }

private:
    static conv_shape as_conv(const fc_shape& s, const std::string& name) {
        if (s.rows < 1 || s.in_features < 1 || s.out_features < 1)
            fail_input(name + ": rows, input and output features must be positive (got " + std::to_string(s.rows) +
                       ", " + std::to_string(s.in_features) + ", " + std::to_string(s.out_features) + ")");
        conv_shape c;
        c.channels = s.in_features;
        c.height = 1;
        c.width = s.rows;
        c.kernels = s.out_features;
        c.input_signed = s.input_signed;
        c.output_signed = s.output_signed;
        return c;
    }

    fc_shape s_;
    conv2d conv_;
};

}  // namespace vnnx::sim::kernels

#pragma once
// Recovering int8 weights from the packed FIA filter bytes of a VNNX file (inverse of
// ir/weight_packing.hpp; lowering.md §7.1.3, §7.1.4, §7.10.2). Std-only on purpose: the
// simulator includes it without the compiler (only format/enums.hpp for the preset table).
//
// Node fields the simulator must pass in:
//   header    vbx_nn_preset                 -> P (parallel output maps) via parallel_output_maps()
//   CONV_2D   Conv2DOptions.filter_shape_dims = [K, C, kh, kw] (depthwise: [1, C, kh', kw]),
//             Conv2DOptions.use_depthwise (or group == C), node `maps`, Conv2DOptions.imaps (depthwise),
//             Conv2DOptions.kernels (K; depthwise: C), filter_data offset (the bytes)
//   FC        FullyConnectedOptions.filter_shape_dims = [O, A], node `cols`, filter_data offset
// The byte count to read at filter_data is packed_conv_bytes / packed_depthwise_bytes / packed_fc_bytes.
// Depthwise filters come back with kh' rows (height dilation already materialised, dilation_h = 1).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vnnx/format/enums.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::sim {

// P of the header's vbx_nn_preset.
[[nodiscard]] inline int parallel_output_maps(std::uint32_t vbx_nn_preset) {
    if (vbx_nn_preset >= format::presets.size())
        fail(error_kind::bad_input,
             "header: vbx_nn_preset " + std::to_string(vbx_nn_preset) + " is not a known size preset (0..4)");
    return static_cast<int>(format::presets[vbx_nn_preset].parallel_output_maps);
}

namespace unpacking_detail {
inline void need(bool ok, const std::string& what, const std::string& rule) {
    if (!ok) fail(error_kind::bad_input, what + ": " + rule);
}
inline std::size_t z(int v) { return static_cast<std::size_t>(v); }
}  // namespace unpacking_detail

[[nodiscard]] inline std::size_t packed_conv_bytes(int K, int C, int kh, int kw, int P) {
    return unpacking_detail::z((K + P - 1) / P * P) * unpacking_detail::z(C + C % 2) * unpacking_detail::z(kh) * unpacking_detail::z(kw);
}
[[nodiscard]] inline std::size_t packed_depthwise_bytes(int C, int kh, int kw, int P, int imaps) {
    return (unpacking_detail::z(C) + unpacking_detail::z(imaps == C ? imaps : 2 * imaps)) * unpacking_detail::z(kw) * unpacking_detail::z(kh + P - 1) *
           unpacking_detail::z(P);
}
[[nodiscard]] inline std::size_t packed_fc_bytes(int O, int A, int cols) {
    return 2 * unpacking_detail::z((O + cols - 1) / cols) * unpacking_detail::z(cols) * unpacking_detail::z(A);
}

// Returns W[K][C][kh][kw]. `what` names the node for messages (e.g. "model.vnnx: node 3").
[[nodiscard]] inline std::vector<std::int8_t> unpack_conv_weights(std::span<const std::uint8_t> bytes, int K, int C,
                                                                  int kh, int kw, int P, int maps,
                                                                  const std::string& what = "conv node") {
    using unpacking_detail::z;
    unpacking_detail::need(K >= 1 && C >= 1 && kh >= 1 && kw >= 1 && P >= 1, what,
                 "filter_shape_dims [" + std::to_string(K) + ", " + std::to_string(C) + ", " + std::to_string(kh) +
                     ", " + std::to_string(kw) + "] must be positive");
    unpacking_detail::need(maps == K || (maps >= 1 && maps < K && maps % P == 0), what,
                 "maps " + std::to_string(maps) + " must equal kernels " + std::to_string(K) +
                     " or be a multiple of P = " + std::to_string(P));
    const std::size_t want = packed_conv_bytes(K, C, kh, kw, P);
    unpacking_detail::need(bytes.size() == want, what,
                 "packed filter holds " + std::to_string(bytes.size()) + " bytes, [K, C, kh, kw] with P = " +
                     std::to_string(P) + " needs " + std::to_string(want));
    const int kp = (K + P - 1) / P * P;
    const int cp = C + C % 2;
    const int M = maps == K ? kp : maps;
    const std::size_t plane = z(cp) * z(kh) * z(kw);
    std::vector<std::int8_t> W(z(K) * z(C) * z(kh) * z(kw));
    for (int k = 0; k < K; ++k) {
        const int b = k / M;
        const int mb = std::min(M, kp - b * M);
        const std::size_t base = z(b) * z(M) * plane;
        for (int c = 0; c < C; ++c)
            for (int y = 0; y < kh; ++y)
                for (int x = 0; x < kw; ++x)
                    W[((z(k) * z(C) + z(c)) * z(kh) + z(y)) * z(kw) + z(x)] = static_cast<std::int8_t>(
                        bytes[base + ((z(c) * z(kh) + z(y)) * z(kw) + z(x)) * z(mb) + z(k - b * M)]);
    }
    return W;
}

// Returns F[C][kh][kw]. Checks that every chunk is the Toeplitz matrix of its column and that
// fillers are zero, so a wrong imaps/maps/P is reported instead of producing garbage.
[[nodiscard]] inline std::vector<std::int8_t> unpack_depthwise_weights(std::span<const std::uint8_t> bytes, int C,
                                                                       int kh, int kw, int P, int imaps, int maps,
                                                                       const std::string& what = "depthwise node") {
    using unpacking_detail::z;
    unpacking_detail::need(C >= 1 && kh >= 1 && kw >= 1 && P >= 1, what, "filter_shape_dims must be positive");
    unpacking_detail::need(imaps >= 1 && imaps <= C && maps >= 1 && maps <= C, what,
                 "imaps " + std::to_string(imaps) + " and maps " + std::to_string(maps) + " must lie in 1.." +
                     std::to_string(C));
    const std::size_t want = packed_depthwise_bytes(C, kh, kw, P, imaps);
    unpacking_detail::need(bytes.size() == want, what,
                 "packed depthwise filter holds " + std::to_string(bytes.size()) + " bytes, expected " +
                     std::to_string(want));
    const std::size_t chunk = z(kh + P - 1) * z(P);
    const std::size_t groups = z(C) + z(imaps == C ? imaps : 2 * imaps);
    std::vector<bool> used(groups, false);
    std::vector<std::int8_t> F(z(C) * z(kh) * z(kw));
    std::size_t slot = 0;
    int fillers = 0;
    for (int c = 0; c < C; ++c) {
        used[slot] = true;
        for (int x = 0; x < kw; ++x) {
            const std::size_t base = (slot * z(kw) + z(x)) * chunk;
            for (int y = 0; y < kh; ++y)
                F[(z(c) * z(kh) + z(y)) * z(kw) + z(x)] = static_cast<std::int8_t>(bytes[base + z(y) * z(P)]);
            for (int i = 0; i < kh + P - 1; ++i)
                for (int j = 0; j < P; ++j) {
                    const int d = i - j;
                    const std::uint8_t expect = (d >= 0 && d < kh) ? bytes[base + z(d) * z(P)] : 0;
                    // The message is built only on failure: this check runs for every packed byte.
                    if (bytes[base + z(i) * z(P) + z(j)] != expect)
                        unpacking_detail::need(false, what,
                                 "channel " + std::to_string(c) + " column " + std::to_string(x) +
                                     ": chunk is not a Toeplitz matrix of the filter column (wrong P, imaps or maps?)");
                }
        }
        ++slot;
        if (fillers < 2 && ((c + 1) % imaps == 0 || (c + 1) % maps == 0)) {
            slot += z(imaps);
            ++fillers;
        }
    }
    for (std::size_t g = 0; g < groups; ++g) {
        if (used[g]) continue;
        for (std::size_t i = 0; i < z(kw) * chunk; ++i)
            if (bytes[g * z(kw) * chunk + i] != 0)
                unpacking_detail::need(false, what,
                         "filler chunk group " + std::to_string(g) + " must be zero");
    }
    return F;
}

// Returns W[O][A]; cols = the node's `cols` field used for packing.
[[nodiscard]] inline std::vector<std::int8_t> unpack_fc_weights(std::span<const std::uint8_t> bytes, int O, int A,
                                                                int cols, const std::string& what = "fc node") {
    using unpacking_detail::z;
    unpacking_detail::need(O >= 1 && A >= 1 && cols >= 1, what, "filter_shape_dims and cols must be positive");
    const std::size_t want = packed_fc_bytes(O, A, cols);
    unpacking_detail::need(bytes.size() == want, what,
                 "packed fully connected filter holds " + std::to_string(bytes.size()) + " bytes, expected " +
                     std::to_string(want));
    std::vector<std::int8_t> W(z(O) * z(A));
    for (int o = 0; o < O; ++o) {
        const int i = o / cols;
        const int b = std::min(cols, O - i * cols);
        const std::size_t base = 2 * z(i) * z(cols) * z(A);
        for (int a = 0; a < A; ++a)
            W[z(o) * z(A) + z(a)] = static_cast<std::int8_t>(bytes[base + z(a) * z(b) + z(o - i * cols)]);
    }
    return W;
}

}  // namespace vnnx::sim

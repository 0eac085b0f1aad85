#pragma once
// BATCH_MATMUL over int8 data with TFLite's integer semantics: out[b, i, j] =
// requant(Σ_k (A[b, i, k] − z_a) · (B[b, k, j] − z_b)), with A transposed first when adj_x and
// B when adj_y; the batch dims (all but the last two, ranks 2..5) broadcast like TFLite's.
// The multiplier is QM(float(S_a·S_b) / S_out) (GetQuantizedConvolutionMultipler).
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vnnx/ref/conv.hpp"
#include "vnnx/ref/shape.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::ref {

/// Shapes of a batch matmul: batch dims of the output, and of each operand (right-aligned,
/// padded with 1s to the output's batch rank); rows m, depth k, columns n.
struct batch_matmul_geometry {
    shape_t batch, batch_a, batch_b;
    std::int32_t m = 0, k = 0, n = 0;
};

/// Checks the operand shapes and derives the geometry; `where` names the operator in errors.
[[nodiscard]] inline batch_matmul_geometry batch_matmul_shapes(std::span<const std::int32_t> a, std::span<const std::int32_t> b,
                                                              bool adj_x, bool adj_y, const std::string& where) {
    if (a.size() < 2 || b.size() < 2 || a.size() > 5 || b.size() > 5)
        fail_input(where + ": operands must have rank 2 to 5");
    batch_matmul_geometry g;
    const std::size_t ra = a.size(), rb = b.size();
    g.m = adj_x ? a[ra - 1] : a[ra - 2];
    g.k = adj_x ? a[ra - 2] : a[ra - 1];
    const std::int32_t kb = adj_y ? b[rb - 1] : b[rb - 2];
    g.n = adj_y ? b[rb - 2] : b[rb - 1];
    if (g.k != kb) fail_input(where + ": contracted dims differ (" + std::to_string(g.k) + " and " + std::to_string(kb) + ")");
    const std::size_t nb = std::max(ra, rb) - 2;
    g.batch_a.assign(nb, 1);
    g.batch_b.assign(nb, 1);
    g.batch.assign(nb, 1);
    for (std::size_t i = 0; i + 2 < ra; ++i) g.batch_a[nb - (ra - 2) + i] = a[i];
    for (std::size_t i = 0; i + 2 < rb; ++i) g.batch_b[nb - (rb - 2) + i] = b[i];
    for (std::size_t i = 0; i < nb; ++i) {
        const auto x = g.batch_a[i], y = g.batch_b[i];
        if (x != y && x != 1 && y != 1)
            fail_input(where + ": batch dims " + std::to_string(x) + " and " + std::to_string(y) + " do not broadcast");
        g.batch[i] = std::max(x, y);
    }
    return g;
}

/// Offset of output batch index `flat` in an operand whose batch dims are `own` (size-1 dims broadcast).
[[nodiscard]] inline std::int64_t broadcast_batch_offset(std::int64_t flat, const shape_t& out, const shape_t& own) {
    std::int64_t off = 0, stride = 1;
    for (std::size_t d = out.size(); d-- > 0;) {
        const std::int64_t idx = flat % out[d];
        flat /= out[d];
        if (own[d] != 1) off += idx * stride;
        stride *= own[d];
    }
    return off;
}

/// A [.., M, K] (or [.., K, M] when adj_x), B [.., K, N] (or [.., N, K] when adj_y), out [.., M, N];
/// TFLite row-major data. `q` carries z_a (input_zero_point), z_b (filter_zero_point), the
/// output zero point, one multiplier and the rounding.
template <class T>
void batch_matmul(std::span<const T> a, std::span<const T> b, std::span<T> out, const batch_matmul_geometry& g, bool adj_x,
                  bool adj_y, const requant_params& q) {
    const std::int64_t batches = flat_size(g.batch);
    const std::int64_t mk = static_cast<std::int64_t>(g.m) * g.k, kn = static_cast<std::int64_t>(g.k) * g.n;
    if (static_cast<std::int64_t>(out.size()) != batches * g.m * g.n) fail_input("BATCH_MATMUL: output size does not match");
    if (static_cast<std::int64_t>(a.size()) != flat_size(g.batch_a) * mk ||
        static_cast<std::int64_t>(b.size()) != flat_size(g.batch_b) * kn)
        fail_input("BATCH_MATMUL: operand sizes do not match their shapes");
    for (std::int64_t bi = 0; bi < batches; ++bi) {
        const T* pa = a.data() + broadcast_batch_offset(bi, g.batch, g.batch_a) * mk;
        const T* pb = b.data() + broadcast_batch_offset(bi, g.batch, g.batch_b) * kn;
        T* po = out.data() + bi * g.m * g.n;
        for (std::int32_t i = 0; i < g.m; ++i)
            for (std::int32_t j = 0; j < g.n; ++j) {
                std::int32_t acc = 0;
                for (std::int32_t k = 0; k < g.k; ++k) {
                    const std::int32_t x = adj_x ? pa[k * g.m + i] : pa[i * g.k + k];
                    const std::int32_t y = adj_y ? pb[j * g.k + k] : pb[k * g.n + j];
                    acc += (x - q.input_zero_point) * (y - q.filter_zero_point);
                }
                po[i * g.n + j] = static_cast<T>(q.apply(acc, 0));
            }
    }
}

}  // namespace vnnx::ref

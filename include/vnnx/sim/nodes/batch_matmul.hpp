#pragma once
// BATCH_MATMUL node (126, lowering.md §7.9): out = A·B over the last two TFLite axes of two
// int8 activations, A transposed first when BatchMatMulOptions.adj_x, B when adj_y; leading
// (batch) axes broadcast. Tensors are dense channels-first: for rank >= 3 the TFLite shape
// [.., H, W, C] is stored [.., C, H, W], so a matrix's rows are W and its columns C, and H
// is the innermost batch axis. The record carries no parameters: the requantization
// QM(float(S_a·S_b) / S_out) and the zero points come from the tensor records.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/int16_dots.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/sim/executors.hpp"

namespace vnnx::sim {

namespace bmm {

/// A tensor record seen as a batch of matrices in TFLite order.
struct matrices {
    std::vector<std::int64_t> batch;  // TFLite batch dims (all but the last two)
    std::int64_t rows = 1, cols = 1;
    std::int64_t cf_h = 1;  // rank >= 3: H, the last batch axis, lies between C and W in memory
    bool cf = false;

    explicit matrices(const tensor_ref& t) {
        const auto& s = t.shape;
        const std::size_t r = s.size();
        if (r < 3) {
            if (r >= 1) cols = s[r - 1];
            if (r >= 2) rows = s[r - 2];
            return;
        }
        cf = true;
        for (std::size_t i = 0; i + 3 < r; ++i) batch.push_back(s[i]);  // leading axes
        cf_h = s[r - 2];
        batch.push_back(cf_h);
        rows = s[r - 1];  // W
        cols = s[r - 3];  // C
    }
    /// Offset of element (row, col) of batch `b` (flat over this tensor's own batch dims).
    [[nodiscard]] std::int64_t at(std::int64_t b, std::int64_t row, std::int64_t col) const {
        return base(b) + row * row_stride() + col * col_stride();
    }
    /// Offset of batch b's element (0, 0), and the steps of a row and of a column from there.
    [[nodiscard]] std::int64_t base(std::int64_t b) const {
        if (!cf) return b * rows * cols;
        const std::int64_t lead = b / cf_h, h = b % cf_h;
        return (lead * cols * cf_h + h) * rows;
    }
    [[nodiscard]] std::int64_t row_stride() const { return cf ? 1 : cols; }
    [[nodiscard]] std::int64_t col_stride() const { return cf ? cf_h * rows : 1; }
};

/// Flat batch index of an operand for output batch index `flat` (size-1 axes broadcast).
inline std::int64_t batch_of(std::int64_t flat, const std::vector<std::int64_t>& out, const std::vector<std::int64_t>& own) {
    std::int64_t idx = 0, stride = 1;
    for (std::size_t d = out.size(); d-- > 0;) {
        const std::int64_t i = flat % out[d];
        flat /= out[d];
        const std::size_t od = d + own.size();
        if (od >= out.size()) {  // own axes are right-aligned with the output's
            const std::int64_t n = own[od - out.size()];
            if (n != 1) idx += i * stride;
            stride *= n;
        }
    }
    return idx;
}

}  // namespace bmm

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::BATCH_MATMUL)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        if (c.rec.num_inputs != 2 || c.rec.num_outputs != 1 || c.tensors.size() != 3) c.reject("expects two inputs and one output");
        const tensor_ref& ta = c.tensors[0];
        const tensor_ref& tb = c.tensors[1];
        const tensor_ref& to = c.tensors[2];
        for (const auto* t : {&ta, &tb, &to})
            if (!t->is_signed()) c.reject("expects int8 tensors, found calc type " + std::to_string(t->type));
        const auto opt = c.rec.options.get<format::node_options::BatchMatMulOptions>();
        const bool adj_x = opt.adj_x != 0, adj_y = opt.adj_y != 0;
        const bmm::matrices a(ta), b(tb), y(to);
        const std::int64_t m = adj_x ? a.cols : a.rows, k = adj_x ? a.rows : a.cols;
        const std::int64_t kb = adj_y ? b.cols : b.rows, n = adj_y ? b.rows : b.cols;
        if (k != kb) c.reject("contracted dims differ (" + std::to_string(k) + " and " + std::to_string(kb) + ")");
        if (y.rows != m || y.cols != n) c.reject("output matrices are not " + std::to_string(m) + "x" + std::to_string(n));
        std::int64_t batches = 1;
        for (auto d : y.batch) batches *= d;
        if (a.batch.size() > y.batch.size() || b.batch.size() > y.batch.size()) c.reject("an operand has more batch axes than the output");
        for (const auto* own : {&a.batch, &b.batch})
            for (std::size_t i = 0; i < own->size(); ++i) {
                const auto d = (*own)[i], want = y.batch[i + y.batch.size() - own->size()];
                if (d != 1 && d != want) c.reject("batch axes of an operand do not broadcast to the output's");
            }
        if (!(ta.scale > 0) || !(tb.scale > 0) || !(to.scale > 0)) c.reject("tensor records need positive scales");
        // S_a·S_b in float, then divided in double, as TFLite's GetQuantizedConvolutionMultipler.
        const auto q = quant::quantize_multiplier(static_cast<double>(ta.scale * tb.scale) / static_cast<double>(to.scale));
        const std::int32_t za = ta.zero, zb = tb.zero, zo = to.zero;
        // The products are (code - zero) in int16 and their sums int32: int8 zero points keep each
        // product within 255², and 33000 of them within int32.
        for (const std::int32_t z : {za, zb})
            if (z < -128 || z > 127) c.reject("zero point " + std::to_string(z) + " is not an int8 value");
        if (k > 33000) c.reject("contracted dim " + std::to_string(k) + " exceeds 33000 (the int32 sums could overflow)");
        // Per batch: A's rows and B's columns gathered once as int16 (code minus zero point, k
        // contiguous), then each output column is one pass of int16 dot products over A's rows
        // (integer sums: the element-by-element definition's int32), requantized as TFLite does.
        const quant::dot_isa path = c.ex.isa == isa_kind::scalar ? quant::dot_isa::baseline
                                    : c.ex.isa == isa_kind::avx2 ? quant::dot_isa::avx2
                                                                 : quant::dot_isa::avx512;
        const auto M = static_cast<std::size_t>(m), N = static_cast<std::size_t>(n), K = static_cast<std::size_t>(k);
        std::vector<std::int16_t> a16(M * K), b16(N * K);
        for (std::int64_t bi = 0; bi < batches; ++bi) {
            const std::int64_t ba = bmm::batch_of(bi, y.batch, a.batch), bb = bmm::batch_of(bi, y.batch, b.batch);
            // Element (i, kk) of A (of B: (kk, j)) by the operand's row and column steps; the
            // loop that walks memory contiguously (step 1) is the inner one.
            auto gather = [](std::int16_t* dst, const std::int8_t* src, std::int64_t outer, std::int64_t inner,
                             std::int64_t s_outer, std::int64_t s_inner, std::int32_t zero) {
                const auto inner_n = static_cast<std::size_t>(inner);
                if (s_outer == 1 && s_inner != 1) {
                    for (std::int64_t kk = 0; kk < inner; ++kk)
                        for (std::int64_t i = 0; i < outer; ++i)
                            dst[static_cast<std::size_t>(i) * inner_n + static_cast<std::size_t>(kk)] =
                                static_cast<std::int16_t>(src[i + kk * s_inner] - zero);
                    return;
                }
                for (std::int64_t i = 0; i < outer; ++i)
                    for (std::int64_t kk = 0; kk < inner; ++kk)
                        dst[static_cast<std::size_t>(i) * inner_n + static_cast<std::size_t>(kk)] =
                            static_cast<std::int16_t>(src[i * s_outer + kk * s_inner] - zero);
            };
            // A as M rows of K: row i is A's row i (its column when adj_x).
            gather(a16.data(), ta.i8() + a.base(ba), m, k, adj_x ? a.col_stride() : a.row_stride(),
                   adj_x ? a.row_stride() : a.col_stride(), za);
            // B as N rows of K: row j is B's column j (its row when adj_y).
            gather(b16.data(), tb.i8() + b.base(bb), n, k, adj_y ? b.row_stride() : b.col_stride(),
                   adj_y ? b.col_stride() : b.row_stride(), zb);
            // Output column j for every row i: the rows are adjacent in a channels-first output
            // (W innermost), so each column's dot products and stores run along memory.
            const std::int64_t row_step = y.cf ? 1 : y.cols;
            auto columns = [&](std::size_t j0, std::size_t j1) {
                std::vector<std::int32_t> acc(M);
                for (std::size_t j = j0; j < j1; ++j) {
                    quant::dots(path, b16.data() + j * K, a16.data(), M, K, acc.data());
                    std::int8_t* out = to.i8() + y.at(bi, 0, static_cast<std::int64_t>(j));
                    for (std::size_t i = 0; i < M; ++i) {
                        const std::int32_t v = quant::multiply_by_quantized_multiplier_single_round(acc[i], q.multiplier, q.shift) + zo;
                        out[static_cast<std::int64_t>(i) * row_step] = static_cast<std::int8_t>(std::clamp(v, -128, 127));
                    }
                }
            };
            if (c.ex.pool && c.ex.pool->size() > 1 && M * N * K >= (std::size_t{1} << 20) && N > 1) {
                const std::size_t parts = std::min<std::size_t>(N, 4 * std::size_t{c.ex.pool->size()});
                c.ex.pool->parallel_for(parts, [&](std::size_t p) { columns(N * p / parts, N * (p + 1) / parts); });
            } else {
                columns(0, N);
            }
        }
    }
};

}  // namespace vnnx::sim

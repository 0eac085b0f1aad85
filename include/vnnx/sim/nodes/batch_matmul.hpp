#pragma once
// BATCH_MATMUL node (126, lowering.md §7.9): out = A·B over the last two TFLite axes of two
// int8 activations, A transposed first when BatchMatMulOptions.adj_x, B when adj_y; leading
// (batch) axes broadcast. Tensors are dense channels-first: for rank >= 3 the TFLite shape
// [.., H, W, C] is stored [.., C, H, W], so a matrix's rows are W and its columns C, and H
// is the innermost batch axis. The record carries no parameters: the requantization
// QM(float(S_a·S_b) / S_out) and the zero points come from the tensor records.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/kernels/matmul.hpp"

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

/// What a run keeps for the next: the operands gathered (k codes contiguous) and packed.
struct scratch {
    std::vector<std::int8_t> a8, b8;
    kernels::int8_matmul mm;
};

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
        // Per batch: A's rows and B's columns gathered once (k codes contiguous), packed for the
        // ISA's product (sim/kernels/matmul.hpp), then each output column's sums requantized as
        // TFLite does.
        const auto M = static_cast<std::size_t>(m), N = static_cast<std::size_t>(n), K = static_cast<std::size_t>(k);
        // The gathered and packed operands live in the node's cache between runs: fresh buffers
        // of this size (hundreds of KiB) would be new pages, faulted in, on every run.
        if (*c.cache == nullptr) *c.cache = std::make_shared<bmm::scratch>();
        auto& sc = *static_cast<bmm::scratch*>(c.cache->get());
        sc.a8.resize(M * K);
        sc.b8.resize(N * K);
        auto& a8 = sc.a8;
        auto& b8 = sc.b8;
        auto& mm = sc.mm;
        for (std::int64_t bi = 0; bi < batches; ++bi) {
            const std::int64_t ba = bmm::batch_of(bi, y.batch, a.batch), bb = bmm::batch_of(bi, y.batch, b.batch);
            // Element (i, kk) of A (of B: (kk, j)) by the operand's row and column steps; the
            // loop that walks memory contiguously (step 1) is the inner one.
            auto gather = [](std::int8_t* dst, const std::int8_t* src, std::int64_t outer, std::int64_t inner,
                             std::int64_t s_outer, std::int64_t s_inner) {
                const auto inner_n = static_cast<std::size_t>(inner);
                if (s_inner == 1) {
                    for (std::int64_t i = 0; i < outer; ++i)
                        std::memcpy(dst + static_cast<std::size_t>(i) * inner_n, src + i * s_outer, inner_n);
                    return;
                }
                if (s_outer == 1) {
                    for (std::int64_t kk = 0; kk < inner; ++kk)
                        for (std::int64_t i = 0; i < outer; ++i)
                            dst[static_cast<std::size_t>(i) * inner_n + static_cast<std::size_t>(kk)] = src[i + kk * s_inner];
                    return;
                }
                for (std::int64_t i = 0; i < outer; ++i)
                    for (std::int64_t kk = 0; kk < inner; ++kk)
                        dst[static_cast<std::size_t>(i) * inner_n + static_cast<std::size_t>(kk)] = src[i * s_outer + kk * s_inner];
            };
            // A as M rows of K: row i is A's row i (its column when adj_x).
            gather(a8.data(), ta.i8() + a.base(ba), m, k, adj_x ? a.col_stride() : a.row_stride(),
                   adj_x ? a.row_stride() : a.col_stride());
            // B as N rows of K: row j is B's column j (its row when adj_y).
            gather(b8.data(), tb.i8() + b.base(bb), n, k, adj_y ? b.row_stride() : b.col_stride(),
                   adj_y ? b.col_stride() : b.row_stride());
            mm.set(c.ex.isa, a8.data(), b8.data(), M, N, K, za, zb);
            // Output column j for every row i: the rows are adjacent in a channels-first output
            // (W innermost), so each column's requantization and stores run along memory.
            const std::int64_t row_step = y.cf ? 1 : y.cols;
            auto columns = [&](std::size_t j0, std::size_t j1) {
                mm.columns(j0, j1, [&](std::size_t j, const std::int32_t* acc) {
                    kernels::requant_qm(c.ex.isa, acc, M, q.multiplier, q.shift, zo,
                                        to.i8() + y.at(bi, 0, static_cast<std::int64_t>(j)), row_step);
                });
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

// Property tests of the tiler over many random layers: every chosen tile respects the preset's
// scratchpad and FIA shaper limits, and the walk covers the whole output.
#include <catch2/catch.hpp>

#include <random>

#include "vnnx/ir/tiling.hpp"
#include "vnnx/ir/weight_packing.hpp"

namespace vc = vnnx::compiler;
using vc::op_kind;

namespace {

int pick(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// Output extent of the whole axis and the end of the last step's output window must agree.
void check_axis(const vc::tile_node& n, vc::axis a, long long S, long long last, long long len_final,
                long long olast) {
    const auto full = vc::chain_window(n, a, {0, S, S});
    const auto w = vc::chain_window(n, a, {last, len_final, S});
    CHECK(w.start == olast);
    CHECK(w.start + w.len == full.len);
}

void check_common(const vc::tile_node& n, const vc::tiling_result& r, const vc::preset_info& p) {
    REQUIRE(r.fits);
    const auto use = vc::scratchpad_used(n, r.chosen, p);
    CHECK(use.used <= p.usable_scratchpad());
    CHECK(use.used == r.sp_used);
    CHECK(use.v_out == r.scratchpad_bytes);
    CHECK(vc::chain_valid(n, r.chosen));
    CHECK(r.rows_0 >= 1);
    CHECK(r.rows_final >= 1);
    CHECK(r.rows_0 <= r.chosen.rows);
    CHECK(r.cols_0 <= r.chosen.cols);
    CHECK(r.row_inc0 >= 1);
    CHECK(r.row_inc >= 1);
    CHECK(r.tile_count >= 1);
}

}  // namespace

TEST_CASE("random convs: tiles respect scratchpad and FIA limits", "[compiler][tiling][random]") {
    std::mt19937 rng(2024);
    int fitted = 0, total = 0;
    for (auto pr : {vc::preset::V250, vc::preset::V500, vc::preset::V1000}) {
        const auto& p = vc::info(pr);
        const int P = p.parallel_output_maps;
        for (int iter = 0; iter < 120; ++iter) {
            const bool dw = pick(rng, 0, 3) == 0;
            const int C = pick(rng, 1, 64);
            const int K = dw ? C : pick(rng, 1, 128);
            const int kh = pick(rng, 1, 7), kw = pick(rng, 1, 7);
            const int sh = pick(rng, 1, 2), sw = dw ? 1 : pick(rng, 1, 2);
            const int dil = dw ? 1 : pick(rng, 1, 2);
            const int m = pick(rng, 1, 640), n = pick(rng, 1, 640);
            vc::tile_node node;
            node.op.kind = op_kind::conv;
            node.op.channels = C;
            node.op.m = m;
            node.op.n = n;
            node.op.conv = {K, C, kh, kw, sh, sw, dil, dil, dw};
            if (pick(rng, 0, 2) == 0) {  // a fused activation after the conv
                vc::layer act;
                act.kind = pick(rng, 0, 1) ? op_kind::relu : op_kind::lut;
                act.channels = K;
                act.m = m;
                act.n = n;
                node.subnodes.push_back(act);
            }
            ++total;
            const auto r = vc::tile_node_for(node, pr);
            const bool too_small = node.op.conv.dkh() > m || node.op.conv.dkw() > n;
            if (too_small) {
                CHECK_FALSE(r.fits);
                continue;
            }
            if (!r.fits) {
                CHECK_FALSE(r.reason.empty());
                continue;
            }
            ++fitted;
            INFO("preset " << p.name << " K " << K << " C " << C << " k " << kh << "x" << kw << " s " << sh << "x"
                           << sw << " d " << dil << " dw " << dw << " in " << m << "x" << n);
            check_common(node, r, p);
            CHECK(vc::valid_fia(node.op.conv, r.maps, r.imaps, r.chosen.rows, r.chosen.cols, p));
            CHECK(r.maps * 8 <= 8192);
            CHECK(r.imaps <= C);
            CHECK(r.chosen.rows >= node.op.conv.dkh());
            CHECK(r.chosen.cols >= node.op.conv.dkw());
            if (dw) {
                CHECK(r.imaps <= r.maps);
                CHECK(r.maps <= C);
                // weights of one tile fit half a weight-shaper bank
                CHECK(vc::depthwise_chunk_bytes(kh, P) * static_cast<std::size_t>(kw * r.imaps) * 2 <=
                      static_cast<std::size_t>(p.weight_shaper_bank_bytes()));
            } else {
                CHECK((r.maps == K || r.maps % P == 0));
                CHECK((r.imaps % 2 == 0 || r.imaps == C));
                CHECK_NOTHROW(vc::conv_block_maps(K, P, static_cast<int>(r.maps)));
                const long long wmaps = (r.maps + P - 1) / P * P;
                CHECK(wmaps * kh * kw * (r.imaps + r.imaps % 2) <= p.weight_shaper_bytes() / 2);
            }
            check_axis(node, vc::axis::rows, m, r.row_last, r.rows_final, r.orow_last);
            check_axis(node, vc::axis::cols, n, r.col_last, r.cols_final, r.ocol_last);
            if (r.row_last == 0) {
                CHECK(r.row_inc0 == m);
                CHECK(r.rows_0 == m);
            } else {
                CHECK(r.row_inc0 == r.row_inc);  // no padding: all steps but the last are equal
                CHECK((r.row_last - r.row_inc0) % r.row_inc == 0);
            }
            REQUIRE(r.shaper);
            const auto g = vc::conv_output_shapes(node.op.conv, r.rows_0, r.cols_0);
            CHECK(r.shaper->needed == (g.oh * g.ow != g.osh * g.osw));
        }
    }
    INFO(fitted << " of " << total << " fitted");
    CHECK(fitted * 2 > total);
}

TEST_CASE("random element-wise chains fit and walk", "[compiler][tiling][random]") {
    std::mt19937 rng(77);
    for (auto pr : {vc::preset::V250, vc::preset::V500, vc::preset::V1000}) {
        const auto& p = vc::info(pr);
        for (int iter = 0; iter < 80; ++iter) {
            const int C = pick(rng, 1, 256), m = pick(rng, 1, 320), n = pick(rng, 1, 320);
            vc::tile_node node;
            node.op.kind = op_kind::identity;
            node.op.channels = C;
            node.op.m = m;
            node.op.n = n;
            const op_kind kinds[] = {op_kind::relu, op_kind::relu6, op_kind::lut, op_kind::eltwise, op_kind::cast};
            const int subs = pick(rng, 0, 3);
            for (int s = 0; s < subs; ++s) {
                vc::layer L;
                L.kind = kinds[pick(rng, 0, 4)];
                L.channels = C;
                L.m = m;
                L.n = n;
                L.eltwise = static_cast<vc::eltwise_mode>(pick(rng, 0, 3));
                node.subnodes.push_back(L);
            }
            if (pick(rng, 0, 3) == 0 && m >= 2 && n >= 2) {
                vc::layer pool;
                pool.kind = op_kind::max_pool;
                pool.channels = C;
                pool.m = m;
                pool.n = n;
                pool.pool_kh = pool.pool_kw = pool.pool_sh = pool.pool_sw = 2;
                node.subnodes.push_back(pool);
            }
            const auto r = vc::tile_node_for(node, pr);
            INFO("preset " << p.name << " C " << C << " m " << m << " n " << n << " subnodes " << node.subnodes.size());
            // one row of one map always fits at these widths
            check_common(node, r, p);
            check_axis(node, vc::axis::rows, m, r.row_last, r.rows_final, r.orow_last);
            check_axis(node, vc::axis::cols, n, r.col_last, r.cols_final, r.ocol_last);
            CHECK(r.maps <= C);
        }
    }
}

#pragma once
// Tiling / scratchpad allocation (lowering.md §10): minimum tile, growth under the scratchpad and
// FIA shaper limits, the tile walk and every node field of §10.1, plus the OUTPUT_SHAPER numbers
// of §7.1.7. Follows the "recommended simple scheme" of §10.7: the SDK's order and formulas, each
// +1-step limit found by binary search (all tests are monotone), imaps doubling and P-steps for maps
// kept, the two alternative conv searches of §10.4.3 skipped. Only ncomp is modelled.
// A node that cannot be tiled gives a result with fits == false and a reason (the compiler then
// cuts the split, §4); a malformed description throws vnnx::error.
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "vnnx/ir/preset.hpp"
#include "vnnx/ir/tiling_model.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::compiler {

struct shaper_dims {
    long long height = 0, width = 0, shaper_height = 0, shaper_width = 0;
};
// ShaperOptions of an OUTPUT_SHAPER subnode (§7.1.7); needed iff height*width != shaper area.
struct output_shaper_info {
    bool needed = false;
    shaper_dims first, final;
    long long full_shaper_height = 0, full_shaper_width = 0;  // shape of the renamed conv output
    int stride_height = 1;
    bool use_strided = false;
};

struct tiling_result {
    bool fits = false;
    std::string reason;  // why it does not fit
    tile chosen{};
    // §10.1
    long long maps = 0, imaps = 0, rows = 0, cols = 0;
    long long rows_0 = 0, rows_final = 0, cols_0 = 0, cols_final = 0;
    long long row_start = 0, col_start = 0;
    long long row_inc0 = 0, row_inc = 0, col_inc0 = 0, col_inc = 0;
    long long row_last = 0, col_last = 0, orow_last = 0, ocol_last = 0;
    long long scratchpad_bytes = 0;  // v_out of the chosen tile
    long long sp_used = 0;           // combined usage of §10.5 (<= usable scratchpad)
    long long tile_count = 0;        // Conv2DOptions.tile_count for convs; row x col x map tiles otherwise
    long long input_stride = 0;      // FullyConnectedOptions.input_stride (native FC)
    std::optional<output_shaper_info> shaper;  // convs only
    // The tile each operator of the split receives with the chosen tile (§10.2), in split order,
    // and the graph indices of those operators (tile_split).
    std::vector<tile> op_tiles;
    std::vector<std::int32_t> ops;
};

// One step of the walk of an axis: input start and length, output start.
struct axis_step {
    long long start, len, out_start;
    friend bool operator==(const axis_step&, const axis_step&) = default;
};

namespace tiling_detail {

inline long long& entry(tile& t, int i) {
    switch (i) {
        case 0: return t.batch;
        case 1: return t.imaps;
        case 2: return t.irows;
        case 3: return t.icols;
        case 4: return t.maps;
        case 5: return t.rows;
        default: return t.cols;
    }
}
inline long long value(const tile& t, int i) {
    tile c = t;
    return entry(c, i);
}
inline bool all_positive(const tile& t) {
    return t.batch >= 1 && t.imaps >= 1 && t.irows >= 1 && t.icols >= 1 && t.maps >= 1 && t.rows >= 1 && t.cols >= 1;
}

// Growth limits of the node's tile entries.
struct extents {
    long long maps, imaps, icols, irows, rows, cols;
};
inline extents extents_of(const tile_node& n) {
    const auto& L = n.op;
    if (L.kind == op_kind::conv) return {L.conv.kernels, L.conv.channels, 1, 1, L.m, L.n};
    if (L.kind == op_kind::fully_connected) return {1, 1, L.fc_accum, L.fc_outputs, L.m, L.fc_outputs};
    return {L.channels, 1, 1, 1, L.m, L.n};
}

}  // namespace tiling_detail

// The composed min-output of the node and its subnodes (the SDK's fx).
[[nodiscard]] inline tile chain_min_output(const tile_node& n, tile t) {
    t = min_output(n.op, t);
    for (const auto& s : n.subnodes) t = min_output(s, t);
    return t;
}

// Every op's min-output stays >= 1 while the tile flows through max-outputs (§10.2).
[[nodiscard]] inline bool chain_valid(const tile_node& n, tile t) {
    if (!tiling_detail::all_positive(min_output(n.op, t))) return false;
    t = max_output(n.op, t);
    for (const auto& s : n.subnodes) {
        if (!tiling_detail::all_positive(min_output(s, t))) return false;
        t = max_output(s, t);
    }
    return true;
}

struct scratchpad_usage {
    long long v_out = 0, v_tmp0 = 0, v_tmp = 0, used = 0;
};
// §10.5 with the D = 1 (conv nodes, mxp_double_buffer) / D = 0 combination rule.
[[nodiscard]] inline scratchpad_usage scratchpad_used(const tile_node& n, tile t, const preset_info& p) {
    scratchpad_usage u;
    std::tie(u.v_out, u.v_tmp0) = scratchpad(n.op, t, p);
    t = max_output(n.op, t);
    for (const auto& s : n.subnodes) {
        const auto [o, tmp] = scratchpad(s, t, p);
        u.v_out = std::max(u.v_out, o);
        u.v_tmp = std::max(u.v_tmp, tmp);
        t = max_output(s, t);
    }
    const bool simple = n.subnodes.empty() && !n.strided_output;
    if (n.op.kind == op_kind::conv)
        u.used = simple ? 2 * u.v_out + u.v_tmp0 : std::max(3 * u.v_out + u.v_tmp, 2 * u.v_out + u.v_tmp0 + u.v_tmp);
    else
        u.used = simple ? u.v_out + u.v_tmp0 : std::max(2 * u.v_out + u.v_tmp, u.v_out + u.v_tmp0 + u.v_tmp);
    return u;
}

[[nodiscard]] inline bool fits_scratchpad(const tile_node& n, const tile& t, const preset_info& p) {
    return scratchpad_used(n, t, p).used <= p.usable_scratchpad();
}

// FIA shaper capacity test, double buffering on, row buffering and split weights off (§10.4.2).
[[nodiscard]] inline bool valid_fia(const conv_params& c, long long maps, long long imaps, long long rows,
                                    long long cols, const preset_info& p) {
    const long long P = p.parallel_output_maps;
    const long long IS = p.input_shaper_bytes(), WS = p.weight_shaper_bytes();
    const long long records = maps * preset_info::quantization_record_bytes;
    if (records > preset_info::quantization_shaper_bytes) return false;
    if (c.depthwise) {
        // one bank each, half of it (double buffering)
        if (imaps * cols * rows * 2 > p.input_shaper_bank_bytes()) return false;
        if (imaps * c.kw * (c.kh + P - 1) * P * 2 > p.weight_shaper_bank_bytes()) return false;
        return true;
    }
    const long long banks = preset_info::input_shaper_banks;
    const long long in_imaps = tiling_detail::cdiv(imaps, banks) * banks;  // a possible extra channel per bank
    const long long in_elems = c.strided() ? tiling_detail::cdiv(rows, c.sh) * tiling_detail::cdiv(cols, c.sw) * c.sh * c.sw
                                           : rows * cols;
    if (in_imaps * in_elems * 2 > IS) return false;
    if ((in_imaps / banks) * in_elems * 2 > p.input_shaper_bank_bytes()) return false;
    const long long w_maps = tiling_detail::cdiv(maps, P) * P;
    const long long w_imaps = imaps + imaps % 2;
    if (w_maps * c.kh * c.kw * w_imaps * 2 > WS) return false;
    if (w_maps * c.kh * c.kw * (w_imaps / 2) * 2 > p.weight_shaper_bank_bytes()) return false;
    return true;
}

// Native FC shaper test (§10.4.5): single banks.
[[nodiscard]] inline bool valid_fia_fc(long long accum, long long rows, long long cols, const preset_info& p) {
    const long long P = p.parallel_output_maps;
    if (accum * rows > p.input_shaper_bank_bytes()) return false;
    if (tiling_detail::cdiv(accum * cols, P) * P > p.weight_shaper_bank_bytes()) return false;
    return cols * preset_info::quantization_record_bytes <= preset_info::quantization_shaper_bytes;
}

// The walk of one axis (§10.6): F maps an input window to an output window through the chain.
template <class F>
[[nodiscard]] std::vector<axis_step> walk_axis(F&& f, long long S, long long L, const std::string& where) {
    if (L >= S) return {{0, S, 0}};
    const auto fail_walk = [&](const std::string& rule) {
        fail(error_kind::bad_input, "tiling: " + where + ": walk of an axis of " + std::to_string(S) +
                                        " with tiles of " + std::to_string(L) + ": " + rule);
    };
    const long long T = std::max<long long>(1, f(window{0, S, S}).len);
    std::vector<axis_step> steps;
    long long i = 0;
    for (long long guard = 0; guard <= S + 1; ++guard) {
        long long len = std::min(L, S - i);
        auto w = f(window{i, len, S});
        if (w.len <= 0) fail_walk("a tile produces no output");
        long long out_len = w.len;
        if (w.start + out_len > T) {
            out_len = T - w.start;
            len = 0;
            while (f(window{i, len, S}).len < out_len && len < S - i) ++len;
        }
        // the smallest input length that still gives out_len outputs
        while (len > 1 && f(window{i, len - 1, S}).len >= out_len) --len;
        w = f(window{i, len, S});
        steps.push_back({i, len, w.start});
        if (w.start + out_len >= T) return steps;
        const long long next = w.start + out_len;
        long long j = i;
        while (j < S && f(window{j, len, S}).start < next) ++j;
        if (j == i || j >= S) fail_walk("no progress");
        i = j;
    }
    fail(error_kind::bad_input, "tiling: " + where + ": walk of an axis of " + std::to_string(S) + " did not end");
}

namespace tiling_detail {

// Largest v in [lo, hi] with ok(v), assuming ok is monotone (true then false); lo if none.
template <class Ok>
long long largest_valid(long long lo, long long hi, Ok&& ok) {
    if (hi <= lo) return lo;
    if (ok(hi)) return hi;
    long long good = lo, bad = hi;  // lo is the floor even when it fails (the SDK keeps it too)
    while (bad - good > 1) {
        const long long mid = good + (bad - good) / 2;
        (ok(mid) ? good : bad) = mid;
    }
    return good;
}

// "grow entry i to limit" (SDK increment_tile): the candidates v_k = min(next^k(start), limit) are
// tried in order while the scratchpad holds; binary search over k. Then shrink while invalid.
// nth(k) gives v_k directly and last is the first k with v_k == limit: the candidates are never
// listed, since a model's dimension (the limit) may be large (a listed search once took 1 GiB).
template <class Nth>
tile grow(const tile_node& n, const preset_info& p, tile t, int i, long long limit, long long last, Nth&& nth) {
    if (entry(t, i) < limit && fits_scratchpad(n, t, p)) {
        const auto k = largest_valid(0, last, [&](long long kk) {
            tile c = t;
            entry(c, i) = nth(kk);
            return fits_scratchpad(n, c, p);
        });
        entry(t, i) = nth(k);
    }
    while (!all_positive(chain_min_output(n, t)) && entry(t, i) > 1) --entry(t, i);
    return t;
}
// Candidates start, start + step, start + 2 step, ... up to limit.
inline tile grow_add(const tile_node& n, const preset_info& p, const tile& t, int i, long long limit, long long step) {
    const long long start = value(t, i);
    const long long last = start < limit ? cdiv(limit - start, step) : 0;
    return grow(n, p, t, i, limit, last, [&](long long k) { return std::min(limit, start + k * step); });
}
inline tile grow1(const tile_node& n, const preset_info& p, const tile& t, int i, long long limit) {
    return grow_add(n, p, t, i, limit, 1);
}
// Candidates start, 2 start, 4 start, ... up to limit (at most 63 of them).
inline tile grow_double(const tile_node& n, const preset_info& p, const tile& t, int i, long long limit) {
    const long long start = std::max<long long>(1, value(t, i));
    const auto nth = [&](long long k) {
        long long v = value(t, i);
        for (long long j = 0; j < k && v < limit; ++j) v = std::min(limit, std::max<long long>(1, v) * 2);
        return v;
    };
    long long last = 0;
    for (long long v = start; v < limit; v = std::min(limit, v * 2)) ++last;
    return grow(n, p, t, i, limit, last, nth);
}

constexpr int IMAPS = 1, ICOLS = 3, IROWS = 2, MAPS = 4, ROWS = 5, COLS = 6;

}  // namespace tiling_detail

// The minimum tile (§10.3 step 2); nullopt when an entry would exceed the node's extent.
[[nodiscard]] inline std::optional<tile> minimum_tile(const tile_node& n) {
    const auto e = tiling_detail::extents_of(n);
    const long long lim[7] = {1, e.imaps, e.irows, e.icols, e.maps, e.rows, e.cols};
    tile t;
    for (int guard = 0; guard < 1 << 20; ++guard) {
        const tile o = chain_min_output(n, t);
        if (tiling_detail::all_positive(o)) return t;
        for (int i = 0; i < 7; ++i)
            if (tiling_detail::value(o, i) < 1) {
                if (++tiling_detail::entry(t, i) > lim[i]) return std::nullopt;
            }
    }
    return std::nullopt;
}

namespace tiling_detail {

inline tile fit_conv(const tile_node& n, const preset_info& p, tile t) {
    const auto& c = n.op.conv;
    const long long P = p.parallel_output_maps;
    const auto v = [&](const tile& x) { return valid_fia(c, x.maps, x.imaps, x.rows, x.cols, p); };
    const auto with = [](tile x, int i, long long val) {
        entry(x, i) = val;
        return x;
    };
    t.maps = std::min<long long>(c.kernels, P);
    t.imaps = std::min<long long>(c.channels, 2);
    // 1. columns
    long long lim = largest_valid(t.cols, n.op.n, [&](long long x) { return v(with(t, COLS, x)); });
    t = grow1(n, p, t, COLS, lim);
    // 2. input maps: halve from all channels (even) until valid, round down to even, grow by doubling.
    // The SDK halves a float: once an invalid limit is odd, every later half is a fraction, which
    // its weight-bank test (imaps rounded up to even must be even) always rejects, so the limit
    // collapses to 0 and imaps stays at its start value. Reproduced on purpose (lowering.md §10.4.3
    // says "rounded down to even", which is what happens only when no odd limit is rejected).
    long long li = cdiv(c.channels, 2) * 2;
    while (li > 0 && !v(with(t, IMAPS, li))) li = (li % 2 != 0) ? 0 : li / 2;
    li -= li % 2;
    t = grow_double(n, p, t, IMAPS, li);
    t.imaps = std::min<long long>(t.imaps, c.channels);
    // 3. rows
    lim = largest_valid(t.rows, n.op.m, [&](long long x) { return v(with(t, ROWS, x)); });
    t = grow1(n, p, t, ROWS, lim);
    // 4. output maps in steps of P
    long long lm = largest_valid(t.maps, c.kernels, [&](long long x) { return v(with(t, MAPS, x)); });
    if (lm != c.kernels) lm = lm / P * P;
    t = grow_add(n, p, t, MAPS, lm, P);
    if (t.maps != c.kernels && t.maps % P != 0 && t.maps > P) t.maps = t.maps / P * P;
    return t;
}

inline tile fit_depthwise(const tile_node& n, const preset_info& p, tile t) {
    const auto& c = n.op.conv;
    const auto v = [&](const tile& x) { return valid_fia(c, x.maps, x.imaps, x.rows, x.cols, p); };
    const auto with = [](tile x, int i, long long val) {
        entry(x, i) = val;
        return x;
    };
    long long lim = largest_valid(t.cols, n.op.n, [&](long long x) { return v(with(t, COLS, x)); });
    t = grow1(n, p, t, COLS, lim);
    lim = largest_valid(t.rows, n.op.m, [&](long long x) { return v(with(t, ROWS, x)); });
    t = grow1(n, p, t, ROWS, lim);
    // maps, then imaps: +1 while both the FIA test and the scratchpad hold
    const auto both = [&](const tile& x) { return v(x) && fits_scratchpad(n, x, p); };
    t.maps = largest_valid(t.maps, c.channels, [&](long long x) { return both(with(t, MAPS, x)); });
    t.imaps = largest_valid(t.imaps, c.channels, [&](long long x) { return both(with(t, IMAPS, x)); });
    // an even split of the maps into DMA chunks of imaps
    const long long it = cdiv(t.maps, t.imaps);
    if (t.maps % it == 0) t.imaps = t.maps / it;
    return t;
}

inline tile fit_fc(const tile_node& n, const preset_info& p, tile t) {
    const auto& L = n.op;
    long long la = largest_valid(t.icols, L.fc_accum, [&](long long a) { return valid_fia_fc(a, t.rows, t.cols, p); });
    t = grow1(n, p, t, ICOLS, la);
    long long lo = largest_valid(t.cols, L.fc_outputs, [&](long long o) { return valid_fia_fc(t.icols, t.rows, o, p); });
    t = grow1(n, p, t, COLS, lo);
    long long lr = largest_valid(t.rows, L.m, [&](long long r) { return valid_fia_fc(t.icols, r, t.cols, p); });
    t = grow1(n, p, t, ROWS, lr);
    return t;
}

inline bool tile_less_anywhere(const tile& a, const tile& b) {
    for (int i = 0; i < 7; ++i)
        if (value(a, i) < value(b, i)) return true;
    return false;
}

}  // namespace tiling_detail

[[nodiscard]] inline window chain_window(const tile_node& n, axis a, window w) {
    w = map_window(n.op, a, w);
    for (const auto& s : n.subnodes) w = map_window(s, a, w);
    return w;
}

// Tile a node for a preset (§10.3), walk it (§10.6) and fill every field of §10.1.
[[nodiscard]] inline tiling_result tile_node_for(const tile_node& node, preset pr) {
    const preset_info& p = info(pr);
    // A height-dilated depthwise filter is tiled as its re-materialised kh' x kw filter (§7.1.1).
    tile_node n = node;
    if (n.op.kind == op_kind::conv && n.op.conv.depthwise && n.op.conv.dh > 1) {
        n.op.conv.kh = (n.op.conv.kh - 1) * n.op.conv.dh + 1;
        n.op.conv.dh = 1;
    }
    check_layer(n.op, true, "node");
    for (std::size_t i = 0; i < n.subnodes.size(); ++i) check_layer(n.subnodes[i], false, "subnode " + std::to_string(i));

    tiling_result r;
    const auto min = minimum_tile(n);
    if (!min) {
        r.reason = "no tile produces an output: the minimum tile exceeds the node's extents";
        return r;
    }
    tile t = *min;
    if (!fits_scratchpad(n, t, p)) {
        r.reason = "the minimum tile needs " + std::to_string(scratchpad_used(n, t, p).used) +
                   " bytes of scratchpad, " + std::string(p.name) + " has " + std::to_string(p.usable_scratchpad());
        return r;
    }
    const auto& L = n.op;
    using namespace tiling_detail;
    if (L.kind == op_kind::conv) {
        t = L.conv.depthwise ? fit_depthwise(n, p, t) : fit_conv(n, p, t);
        if (tile_less_anywhere(t, *min) || !valid_fia(L.conv, t.maps, t.imaps, t.rows, t.cols, p)) {
            r.reason = "no valid FIA tile (shaper buffers of " + std::string(p.name) + ")";
            return r;
        }
    } else if (L.kind == op_kind::fully_connected) {
        t = fit_fc(n, p, t);
        if (!valid_fia_fc(t.icols, t.rows, t.cols, p)) {
            r.reason = "no valid FIA tile for the fully connected node";
            return r;
        }
    } else {
        t = grow1(n, p, t, COLS, L.n);
        t = grow1(n, p, t, ROWS, L.m);
        t = grow1(n, p, t, MAPS, L.channels);
    }
    const auto use = scratchpad_used(n, t, p);
    if (use.used > p.usable_scratchpad()) {
        r.reason = "tile needs " + std::to_string(use.used) + " bytes of scratchpad, " + std::string(p.name) +
                   " has " + std::to_string(p.usable_scratchpad());
        return r;
    }
    if (!chain_valid(n, t)) {
        r.reason = "a subnode needs a larger or whole extent than fits the scratchpad";
        return r;
    }

    r.fits = true;
    r.chosen = t;
    r.op_tiles.push_back(t);
    for (tile f = max_output(n.op, t); const auto& s : n.subnodes) {
        r.op_tiles.push_back(f);
        f = max_output(s, f);
    }
    r.sp_used = use.used;
    r.scratchpad_bytes = use.v_out;
    r.maps = t.maps;
    r.imaps = t.imaps;
    const long long m_stop = L.m;
    const long long n_stop = L.kind == op_kind::fully_connected ? L.fc_outputs : L.n;
    const auto ys = walk_axis([&](window w) { return chain_window(n, axis::rows, w); }, m_stop, t.rows, "rows");
    const auto xs = walk_axis([&](window w) { return chain_window(n, axis::cols, w); }, n_stop, t.cols, "columns");
    const auto fill = [](const std::vector<axis_step>& s, long long stop, long long& len, long long& len0,
                         long long& len_final, long long& inc0, long long& inc, long long& last, long long& olast) {
        len0 = len = len_final = s[0].len;
        if (s.size() > 1) {
            len = s[1].len;
            len_final = s.back().len;
        }
        inc0 = inc = stop;
        if (s.size() > 1) {
            inc0 = s[1].start - s[0].start;
            inc = s.back().start - s[s.size() - 2].start;
        }
        last = s.back().start;
        olast = s.back().out_start;
    };
    fill(ys, m_stop, r.rows, r.rows_0, r.rows_final, r.row_inc0, r.row_inc, r.row_last, r.orow_last);
    fill(xs, n_stop, r.cols, r.cols_0, r.cols_final, r.col_inc0, r.col_inc, r.col_last, r.ocol_last);
    const long long steps = static_cast<long long>(ys.size() * xs.size());
    if (L.kind == op_kind::conv) {
        r.tile_count = steps * cdiv(L.conv.kernels, t.maps) * cdiv(L.channels, t.imaps);
        output_shaper_info s;
        const auto g0 = conv_output_shapes(L.conv, r.rows_0, r.cols_0);
        const auto gf = conv_output_shapes(L.conv, r.rows_final, r.cols_final);
        const auto gfull = conv_output_shapes(L.conv, L.m, L.n);
        s.first = {g0.oh, g0.ow, g0.osh, g0.osw};
        s.final = {gf.oh, gf.ow, gf.osh, gf.osw};
        s.full_shaper_height = gfull.osh;
        s.full_shaper_width = gfull.osw;
        s.needed = g0.oh * g0.ow != g0.osh * g0.osw;
        s.stride_height = L.conv.sh;
        s.use_strided = L.conv.strided();
        r.shaper = s;
    } else {
        r.tile_count = steps * cdiv(L.channels, t.maps);
    }
    if (L.kind == op_kind::fully_connected) r.input_stride = t.icols;
    return r;
}

[[nodiscard]] inline tiling_result tile_node_for(const tile_node& n, const preset_info& p) {
    if (p.id >= preset_table.size())
        fail(error_kind::bad_input, "tiling: preset id " + std::to_string(p.id) + " is not a known size preset");
    return tile_node_for(n, static_cast<preset>(p.id));
}

}  // namespace vnnx::compiler

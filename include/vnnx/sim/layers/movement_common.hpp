#pragma once
// Strided views for the data-movement executors. VNNX tensors are dense channels-first
// (lowering.md §2.1); a TFLite reshape, squeeze, unpack or rank-changing slice is a
// reinterpretation in TFLite axis order, so those executors read the input through a view in
// TFLite order and write the output through another, element by element in row-major order.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "vnnx/sim/context.hpp"
#include "vnnx/sim/kernels/even_bytes.hpp"
#include "vnnx/sim/kernels/short_rows.hpp"
#include "vnnx/support/byte_transpose.hpp"

namespace vnnx::sim::movement {

/// Elements base[Σ idx_i·strides_i] for idx in the box `dims`, visited in row-major order.
struct view {
    std::byte* base = nullptr;
    std::vector<std::int64_t> dims, strides;  // strides in elements
    std::uint32_t elem = 1;

    [[nodiscard]] std::int64_t count() const noexcept {
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        return n;
    }
};

/// Dense row-major strides of a shape.
inline std::vector<std::int64_t> dense_strides(const std::vector<std::int32_t>& s) {
    std::vector<std::int64_t> st(s.size(), 1);
    for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

/// Reorders the axes of a channels-first view ([..., C, H, W]) into TFLite order ([..., H, W, C]).
inline view to_tflite_order(view v) {
    const std::size_t r = v.dims.size();
    if (r < 3) return v;
    std::vector<std::int64_t> d(v.dims.begin(), v.dims.end() - 3), s(v.strides.begin(), v.strides.end() - 3);
    for (std::size_t a : {r - 2, r - 1, r - 3}) {
        d.push_back(v.dims[a]);
        s.push_back(v.strides[a]);
    }
    v.dims = std::move(d);
    v.strides = std::move(s);
    return v;
}

/// A dense channels-first tensor as a view in its own (channels-first) axis order.
inline view cf_view(const tensor_ref& t) {
    view v;
    v.base = t.data;
    v.elem = t.elem;
    v.dims.assign(t.shape.begin(), t.shape.end());
    v.strides = dense_strides(t.shape);
    return v;
}

/// A dense channels-first tensor seen in TFLite axis order.
inline view tflite_view(const tensor_ref& t) { return to_tflite_order(cf_view(t)); }

/// The view with axis `a` fixed at index k (the axis removed).
inline view fix_axis(view v, std::size_t a, std::int64_t k) {
    v.base += static_cast<std::ptrdiff_t>(k * v.strides[a] * v.elem);
    v.dims.erase(v.dims.begin() + static_cast<std::ptrdiff_t>(a));
    v.strides.erase(v.strides.begin() + static_cast<std::ptrdiff_t>(a));
    return v;
}

/// Copies src into dst, both walked in row-major order of their own boxes. The caller checks
/// that both hold the same number of elements of the same size.
namespace copy_detail {
// A box of bytes whose destination-contiguous axis (the last, destination stride 1) is strided
// in the source while another axis is contiguous there: a transpose of those two axes, done in
// tiles for every index of the other axes. False when no axis is source-contiguous.
inline bool transpose_box(const std::byte* src, std::byte* dst, const std::vector<std::int64_t>& dims,
                          const std::vector<std::int64_t>& ss, const std::vector<std::int64_t>& ds, thread_pool* pool) {
    const std::size_t last = dims.size() - 1;
    std::size_t k = last;
    for (std::size_t a = 0; a < last; ++a)
        if (ss[a] == 1) k = a;
    if (k == last) return false;
    // The other axes, walked by a flat index.
    std::vector<std::size_t> rest;
    std::int64_t outer = 1;
    for (std::size_t a = 0; a < last; ++a)
        if (a != k) {
            rest.push_back(a);
            outer *= dims[a];
        }
    const std::int64_t rows = dims[last], cols = dims[k];  // the source matrix: rows along `last`
    // Strips of 64 source rows (a multiple of the 16-row tile) are the unit of work.
    const std::int64_t strip = 64, strips = (rows + strip - 1) / strip;
    auto one = [&](std::int64_t item) {
        std::int64_t o = item / strips, so = 0, dof = 0;
        const std::int64_t r0 = (item % strips) * strip, n = std::min(strip, rows - r0);
        for (std::size_t i = rest.size(); i-- > 0;) {
            const std::size_t a = rest[i];
            const std::int64_t idx = o % dims[a];
            o /= dims[a];
            so += idx * ss[a];
            dof += idx * ds[a];
        }
        ::vnnx::transpose_bytes(reinterpret_cast<const std::uint8_t*>(src + so + r0 * ss[last]), ss[last],
                        reinterpret_cast<std::uint8_t*>(dst + dof + r0), ds[k], static_cast<std::size_t>(n),
                        static_cast<std::size_t>(cols));
    };
    const std::int64_t items = outer * strips;
    if (pool && pool->size() > 1 && outer * rows * cols >= 65536 && items > 1) {
        pool->parallel_for(static_cast<std::size_t>(items), [&](std::size_t i) { one(static_cast<std::int64_t>(i)); });
    } else {
        for (std::int64_t i = 0; i < items; ++i) one(i);
    }
    return true;
}

// Two views whose boxes differ but enumerate the same elements in row-major order (a reshape
// between channels-first and TFLite order): both split into one common box, axis by axis from
// the innermost, where one dim divides the other. False when some pair does not divide.
inline bool common_box(view& a, view& b) {
    std::vector<std::int64_t> dims, sa, sb;
    std::size_t i = a.dims.size(), j = b.dims.size();
    std::int64_t ra = 1, rb = 1, ta = 0, tb = 0;
    // The next axis of size > 1 of view v, innermost first: its remaining extent and stride.
    auto next = [](const view& v, std::size_t& at, std::int64_t& rest, std::int64_t& stride) {
        while (at > 0 && v.dims[at - 1] == 1) --at;
        if (at == 0) return false;
        --at;
        rest = v.dims[at];
        stride = v.strides[at];
        return true;
    };
    auto next_a = [&] { return next(a, i, ra, ta); };
    auto next_b = [&] { return next(b, j, rb, tb); };
    bool ha = next_a(), hb = next_b();
    while (ha && hb) {
        const std::int64_t d = std::min(ra, rb);
        if (ra % d != 0 || rb % d != 0) return false;
        dims.push_back(d);
        sa.push_back(ta);
        sb.push_back(tb);
        ra /= d;
        rb /= d;
        ta *= d;
        tb *= d;
        if (ra == 1) ha = next_a();
        if (rb == 1) hb = next_b();
    }
    if (ha || hb) return false;
    std::reverse(dims.begin(), dims.end());
    std::reverse(sa.begin(), sa.end());
    std::reverse(sb.begin(), sb.end());
    a.dims = dims;
    a.strides = std::move(sa);
    b.dims = std::move(dims);
    b.strides = std::move(sb);
    return true;
}

// The same box in both views (slices, concatenations, splits): visit it in the destination's
// memory order with adjacent axes merged, so the innermost loop is a run that is contiguous in
// the destination (one memcpy when the source run is contiguous too). Every element still goes
// to the same place; only the order of the copies changes, which needs disjoint tensors.
inline bool copy_same_box(const view& src, const view& dst, thread_pool* pool, isa_kind isa) {
    if (src.dims != dst.dims || src.elem != dst.elem) return false;
    const std::size_t es = src.elem;
    const std::int64_t n = src.count();
    auto span_of = [&](const view& v) {
        std::int64_t lo = 0, hi = 0;
        for (std::size_t a = 0; a < v.dims.size(); ++a) {
            const std::int64_t ext = (v.dims[a] - 1) * v.strides[a];
            (ext < 0 ? lo : hi) += ext;
        }
        return std::pair{v.base + lo * static_cast<std::int64_t>(es), v.base + (hi + 1) * static_cast<std::int64_t>(es)};
    };
    const auto [s0, s1] = span_of(src);
    const auto [d0, d1] = span_of(dst);
    if (!(s1 <= d0 || d1 <= s0)) return false;
    std::vector<std::size_t> ax;
    for (std::size_t a = 0; a < src.dims.size(); ++a)
        if (src.dims[a] != 1) ax.push_back(a);
    std::stable_sort(ax.begin(), ax.end(), [&](std::size_t x, std::size_t y) {
        return std::abs(dst.strides[x]) > std::abs(dst.strides[y]);
    });
    std::vector<std::int64_t> dims, ss, ds;
    for (std::size_t a : ax) {
        if (!dims.empty() && ss.back() == src.strides[a] * src.dims[a] && ds.back() == dst.strides[a] * dst.dims[a]) {
            dims.back() *= src.dims[a];
            ss.back() = src.strides[a];
            ds.back() = dst.strides[a];
            continue;
        }
        dims.push_back(src.dims[a]);
        ss.push_back(src.strides[a]);
        ds.push_back(dst.strides[a]);
    }
    if (dims.empty()) {
        dims = {1};
        ss = ds = {1};
    }
    const std::int64_t run = dims.back(), rs = ss.back(), rd = ds.back();
    if (es == 1 && rd == 1 && rs != 1 && transpose_box(src.base, dst.base, dims, ss, ds, pool)) return true;
    const std::size_t outer_rank = dims.size() - 1;
    // Short runs contiguous on both sides: the axis before the run goes to the short-row kernel
    // whole (rows [r0, r1) of the flat row index over the axes before it).
    if (rs == 1 && rd == 1 && outer_rank >= 1 && run * static_cast<std::int64_t>(es) <= 64) {
        const std::size_t ra = outer_rank - 1;
        const std::int64_t nrows = dims[ra], total = n / run;
        const std::int64_t w = run * static_cast<std::int64_t>(es);
        auto rows = [&](std::int64_t r0, std::int64_t r1) {
            while (r0 < r1) {
                std::int64_t g = r0 / nrows, so = 0, dof = 0;
                const std::int64_t i = r0 % nrows, m = std::min(nrows - i, r1 - r0);
                for (std::size_t d = ra; d-- > 0;) {
                    const std::int64_t idx = g % dims[d];
                    g /= dims[d];
                    so += idx * ss[d];
                    dof += idx * ds[d];
                }
                so += i * ss[ra];
                dof += i * ds[ra];
                kernels::short_rows(isa, reinterpret_cast<std::uint8_t*>(dst.base + dof * static_cast<std::int64_t>(es)),
                                    ds[ra] * static_cast<std::int64_t>(es),
                                    reinterpret_cast<const std::uint8_t*>(src.base + so * static_cast<std::int64_t>(es)),
                                    ss[ra] * static_cast<std::int64_t>(es), static_cast<std::size_t>(w), static_cast<std::size_t>(m));
                r0 += m;
            }
        };
        const std::int64_t parts = pool && pool->size() > 1 && n * static_cast<std::int64_t>(es) >= 65536
                                       ? std::min<std::int64_t>(total, 8 * static_cast<std::int64_t>(pool->size()))
                                       : 1;
        if (parts <= 1) {
            rows(0, total);
        } else {
            pool->parallel_for(static_cast<std::size_t>(parts), [&](std::size_t p) {
                const auto pi = static_cast<std::int64_t>(p);
                rows(total * pi / parts, total * (pi + 1) / parts);
            });
        }
        return true;
    }
    // Runs [r0, r1) of the box; the run index is decomposed into the outer axes' indices.
    auto runs = [&](std::int64_t r0, std::int64_t r1) {
        std::vector<std::int64_t> idx(outer_rank, 0);
        std::int64_t so = 0, dof = 0;
        for (std::size_t d = outer_rank, rest = static_cast<std::size_t>(r0); d-- > 0;) {
            idx[d] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(dims[d]));
            rest /= static_cast<std::size_t>(dims[d]);
            so += idx[d] * ss[d];
            dof += idx[d] * ds[d];
        }
        for (std::int64_t r = r0; r < r1; ++r) {
            const std::byte* sp = src.base + so * static_cast<std::int64_t>(es);
            std::byte* dp = dst.base + dof * static_cast<std::int64_t>(es);
            if (rs == 1 && rd == 1) {
                std::memcpy(dp, sp, static_cast<std::size_t>(run) * es);
            } else if (es == 1 && rs == 2 && rd == 1) {
                // Stride-2 slices (the strided convolutions' outputs).
                kernels::even_bytes(isa, reinterpret_cast<std::uint8_t*>(dp), reinterpret_cast<const std::uint8_t*>(sp),
                                    static_cast<std::size_t>(run));
            } else if (es == 1) {
                for (std::int64_t j = 0; j < run; ++j) dp[j * rd] = sp[j * rs];
            } else {
                for (std::int64_t j = 0; j < run; ++j)
                    std::memcpy(dp + j * rd * static_cast<std::int64_t>(es), sp + j * rs * static_cast<std::int64_t>(es), es);
            }
            for (std::size_t d = outer_rank; d-- > 0;) {
                so += ss[d];
                dof += ds[d];
                if (++idx[d] < dims[d]) break;
                so -= ss[d] * dims[d];
                dof -= ds[d] * dims[d];
                idx[d] = 0;
            }
        }
    };
    const std::int64_t nruns = n / run;
    // Disjoint tensors, so the runs can go to several threads; small copies stay on one.
    const std::int64_t chunks = pool && pool->size() > 1 && n * static_cast<std::int64_t>(es) >= 32768
                                    ? std::min<std::int64_t>(nruns, 8 * static_cast<std::int64_t>(pool->size()))
                                    : 1;
    if (chunks <= 1) {
        runs(0, nruns);
    } else {
        pool->parallel_for(static_cast<std::size_t>(chunks), [&](std::size_t i) {
            const auto ci = static_cast<std::int64_t>(i);
            runs(nruns * ci / chunks, nruns * (ci + 1) / chunks);
        });
    }
    return true;
}

// Whether the view's elements, in its row-major order, are the consecutive ones from its base
// (unit axes aside): a reshape between two such views is one memmove.
inline bool dense_in_order(const view& v) {
    std::int64_t expect = 1;
    for (std::size_t a = v.dims.size(); a-- > 0;) {
        if (v.dims[a] == 1) continue;
        if (v.strides[a] != expect) return false;
        expect *= v.dims[a];
    }
    return true;
}
}  // namespace copy_detail

inline void copy(const view& src, const view& dst, thread_pool* pool, isa_kind isa) {
    const std::int64_t n = src.count();
    if (n == 0) return;
    // Element e to element e in two dense views: memmove keeps that even when they overlap.
    // Large disjoint ones go over the pool as the same box (when their boxes agree).
    const bool dense = copy_detail::dense_in_order(src) && copy_detail::dense_in_order(dst);
    const std::size_t bytes = static_cast<std::size_t>(n) * src.elem;
    const bool small = pool == nullptr || bytes < 32768;
    if (!(dense && small) && copy_detail::copy_same_box(src, dst, pool, isa)) return;
    if (!dense && src.dims != dst.dims && src.elem == dst.elem) {
        view a = src, b = dst;
        if (copy_detail::common_box(a, b) && copy_detail::copy_same_box(a, b, pool, isa)) return;
    }
    if (dense) {
        std::memmove(dst.base, src.base, bytes);
        return;
    }
    const std::size_t es = src.elem;
    struct cursor {
        const view& v;
        std::vector<std::int64_t> idx;
        std::int64_t off = 0;
        explicit cursor(const view& x) : v(x), idx(x.dims.size(), 0) {}
        void next() {
            for (std::size_t d = idx.size(); d-- > 0;) {
                off += v.strides[d];
                if (++idx[d] < v.dims[d]) return;
                off -= v.strides[d] * v.dims[d];
                idx[d] = 0;
            }
        }
    };
    cursor s(src), d(dst);
    if (es == 1) {  // a byte store, not a call to memcpy per element
        for (std::int64_t e = 0; e < n; ++e) {
            dst.base[d.off] = src.base[s.off];
            s.next();
            d.next();
        }
        return;
    }
    for (std::int64_t e = 0; e < n; ++e) {
        std::memcpy(dst.base + static_cast<std::size_t>(d.off) * es, src.base + static_cast<std::size_t>(s.off) * es, es);
        s.next();
        d.next();
    }
}

/// The TFLite axis of rank `rank` whose channels-first axis is `cf_axis` (non-negative), or -1.
inline std::int32_t tflite_axis_of_cf(std::int32_t cf_axis, std::int32_t rank) {
    for (std::int32_t a = 0; a < rank; ++a) {
        std::int32_t c = a;
        if (rank >= 3) {
            if (a == rank - 1) c = rank - 3;
            else if (a == rank - 3 || a == rank - 2) c = a + 1;
        }
        if (c == cf_axis) return a;
    }
    return -1;
}

/// Requires two tensors of the same element size and count.
template <class Ctx>
void require_same_elements(const Ctx& c, const tensor_ref& a, const tensor_ref& b, const char* what) {
    if (a.elem != b.elem || a.type != b.type)
        c.reject(std::string(what) + ": calc type " + std::to_string(a.type) + " vs " + std::to_string(b.type));
    c.require_same_count(a, b);
}

}  // namespace vnnx::sim::movement

// movement::copy (the data movement of slices, concatenations, splits, transposes): on random
// boxes with permuted and offset strides it equals the element-by-element definition, for the
// merged-run path (same box on both sides) and the general path.
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/sim/isa.hpp>
#include <vnnx/sim/kernels/short_rows.hpp>
#include <vnnx/sim/layers/movement_common.hpp>
#include <vnnx/sim/thread_pool.hpp>

namespace {
namespace mv = vnnx::sim::movement;
using vnnx::sim::isa_kind;

// Every ISA this CPU runs: each kernel path is compared with the definition.
std::vector<isa_kind> runnable_isas() {
    std::vector<isa_kind> v;
    for (auto k : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi})
        if (vnnx::sim::isa_supported(k)) v.push_back(k);
    return v;
}

// A view of `dims` over a buffer laid out with the axes in `order` (outermost first) and
// `pad` extra elements on each axis; elements start at `offset`.
mv::view make_view(std::vector<std::byte>& buf, const std::vector<std::int64_t>& dims, const std::vector<std::size_t>& order,
                   const std::vector<std::int64_t>& pad, std::int64_t offset, std::uint32_t es) {
    mv::view v;
    v.dims = dims;
    v.elem = es;
    v.strides.assign(dims.size(), 0);
    std::int64_t acc = 1;
    for (std::size_t i = order.size(); i-- > 0;) {
        const std::size_t a = order[i];
        v.strides[a] = acc;
        acc *= dims[a] + pad[a];
    }
    buf.assign(static_cast<std::size_t>((acc + offset) * es + 64), std::byte{0});
    v.base = buf.data() + offset * es;
    return v;
}

std::int64_t offset_of(const mv::view& v, std::int64_t linear) {
    std::int64_t off = 0;
    for (std::size_t d = v.dims.size(); d-- > 0;) {
        off += (linear % v.dims[d]) * v.strides[d];
        linear /= v.dims[d];
    }
    return off;
}
}  // namespace

TEST_CASE("movement::copy equals the element-by-element definition on random views") {
    std::mt19937 rng(31337);
    std::uniform_int_distribution<int> rank(1, 5), dim(1, 7), pad(0, 2), coin(0, 3), off(0, 9);
    for (int n = 0; n < 400; ++n) {
        const std::size_t r = static_cast<std::size_t>(rank(rng));
        std::vector<std::int64_t> dims(r);
        for (auto& d : dims) d = dim(rng);
        const std::uint32_t es = coin(rng) == 0 ? 4 : 1;
        auto order = [&] {
            std::vector<std::size_t> o(r);
            std::iota(o.begin(), o.end(), 0);
            std::shuffle(o.begin(), o.end(), rng);
            return o;
        };
        auto pads = [&] {
            std::vector<std::int64_t> p(r);
            for (auto& x : p) x = coin(rng) == 0 ? pad(rng) : 0;
            return p;
        };
        std::vector<std::byte> sbuf, dbuf;
        const mv::view src = make_view(sbuf, dims, order(), pads(), off(rng), es);
        // Destination: the same box, or (general path) the same count in another shape.
        std::vector<std::int64_t> ddims = dims;
        if (coin(rng) == 0 && r >= 2) {
            ddims[0] *= ddims[1];
            ddims.erase(ddims.begin() + 1);
        }
        const std::size_t dr = ddims.size();
        std::vector<std::size_t> dorder(dr);
        std::iota(dorder.begin(), dorder.end(), 0);
        std::shuffle(dorder.begin(), dorder.end(), rng);
        std::vector<std::int64_t> dpad(dr);
        for (auto& x : dpad) x = coin(rng) == 0 ? pad(rng) : 0;
        const mv::view dst = make_view(dbuf, ddims, dorder, dpad, off(rng), es);
        for (std::size_t i = 0; i < sbuf.size(); ++i) sbuf[i] = static_cast<std::byte>(rng());
        std::vector<std::byte> want = dbuf;
        const std::int64_t count = src.count();
        REQUIRE(count == dst.count());
        const auto dbase = static_cast<std::int64_t>(dst.base - dbuf.data());
        for (std::int64_t e = 0; e < count; ++e)
            for (std::uint32_t b = 0; b < es; ++b)
                want[static_cast<std::size_t>(dbase + offset_of(dst, e) * es + b)] = src.base[offset_of(src, e) * es + b];
        const std::vector<std::byte> before = dbuf;
        for (auto isa : runnable_isas()) {
            dbuf = before;
            mv::copy(src, dst, nullptr, isa);
            INFO("case " << n << " rank " << r << " element size " << es << " isa " << vnnx::sim::isa_name(isa));
            REQUIRE(dbuf == want);
        }
    }
}

TEST_CASE("movement::copy of two dense views (a reshape) moves every element to its place, overlapping or not") {
    // Unit axes aside both views are the consecutive elements from their bases: one memmove,
    // which keeps element e -> e when the output lies over the input (in either direction).
    std::mt19937 rng(4242);
    vnnx::sim::thread_pool pool(2);
    for (const std::int64_t shift : {-5, -1, 0, 3, 40, 70000}) {
        for (const std::int64_t n : {1001, 40000}) {
            std::vector<std::byte> buf(static_cast<std::size_t>(2 * n + 140000));
            for (auto& b : buf) b = static_cast<std::byte>(rng());
            const std::int64_t s0 = 20;
            mv::view src, dst;
            src.base = buf.data() + s0;
            src.dims = {1, n, 1, 1};  // [1, n, 1, 1] channels-first seen in TFLite order
            src.strides = {n, 1, 1, 1};
            dst.base = buf.data() + s0 + 20 + shift;
            dst.dims = {1, n};
            dst.strides = {n, 1};
            const std::vector<std::byte> original(src.base, src.base + n);
            for (vnnx::sim::thread_pool* p : {static_cast<vnnx::sim::thread_pool*>(nullptr), &pool}) {
                std::vector<std::byte> before(buf);
                mv::copy(src, dst, p, vnnx::sim::best_isa());
                INFO("shift " << shift << " n " << n << " threads " << (p ? 2 : 1));
                REQUIRE(std::equal(original.begin(), original.end(), dst.base));
                // Nothing outside the destination changed.
                for (std::size_t i = 0; i < buf.size(); ++i) {
                    const auto at = static_cast<std::int64_t>(i);
                    const bool in_dst = at >= dst.base - buf.data() && at < dst.base - buf.data() + n;
                    if (!in_dst) REQUIRE(buf[i] == before[i]);
                }
                std::copy(original.begin(), original.end(), src.base);  // restore for the next run
            }
        }
    }
}

TEST_CASE("movement::copy of large byte transposes and reshapes (tiles, strips, threads) equals the definition") {
    // The YOLO head's shapes in small: a channels-first map read in TFLite order (a reshape that
    // moves data), a 3-axis permutation, and a box whose source-contiguous axis is not the last.
    std::mt19937 rng(7);
    vnnx::sim::thread_pool pool(2);
    struct shape_case {
        std::vector<std::int64_t> dims;
        std::vector<std::size_t> src_order, dst_order;
    };
    const std::vector<shape_case> cases = {
        {{80, 40, 40}, {0, 1, 2}, {1, 2, 0}},
        {{3, 67, 129}, {2, 0, 1}, {0, 1, 2}},
        {{4, 16, 300}, {0, 2, 1}, {0, 1, 2}},
        {{2, 5, 33, 17}, {3, 1, 0, 2}, {0, 2, 1, 3}},
        {{1, 144, 400}, {0, 2, 1}, {0, 1, 2}},
    };
    for (const auto& k : cases) {
        for (vnnx::sim::thread_pool* p : {static_cast<vnnx::sim::thread_pool*>(nullptr), &pool}) {
            std::vector<std::byte> sbuf, dbuf;
            const std::vector<std::int64_t> none(k.dims.size(), 0);
            const mv::view src = make_view(sbuf, k.dims, k.src_order, none, 3, 1);
            const mv::view dst = make_view(dbuf, k.dims, k.dst_order, none, 5, 1);
            for (auto& b : sbuf) b = static_cast<std::byte>(rng());
            std::vector<std::byte> want = dbuf;
            const auto dbase = static_cast<std::int64_t>(dst.base - dbuf.data());
            for (std::int64_t e = 0; e < src.count(); ++e)
                want[static_cast<std::size_t>(dbase + offset_of(dst, e))] = src.base[offset_of(src, e)];
            mv::copy(src, dst, p, vnnx::sim::best_isa());
            INFO("dims " << k.dims.size() << " first " << k.dims[0] << " threads " << (p ? 2 : 1));
            REQUIRE(dbuf == want);
        }
    }
    // A reshape between boxes of different dims: [C, H*W] read as [C, H, W] into TFLite order.
    for (vnnx::sim::thread_pool* p : {static_cast<vnnx::sim::thread_pool*>(nullptr), &pool}) {
        const std::int64_t C = 48, H = 20, W = 24;
        std::vector<std::byte> sbuf(static_cast<std::size_t>(C * H * W)), dbuf(sbuf.size());
        for (auto& b : sbuf) b = static_cast<std::byte>(rng());
        mv::view src, dst;
        src.base = sbuf.data();
        src.elem = dst.elem = 1;
        src.dims = {H, W, C};  // element (h, w, c) of a channels-first map
        src.strides = {W, 1, H * W};
        dst.base = dbuf.data();
        dst.dims = {H * W, C};
        dst.strides = {C, 1};
        mv::copy(src, dst, p, vnnx::sim::best_isa());
        bool same = true;
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t w = 0; w < W; ++w)
                for (std::int64_t c = 0; c < C; ++c)
                    same = same && dbuf[static_cast<std::size_t>((h * W + w) * C + c)] ==
                                       sbuf[static_cast<std::size_t>(c * H * W + h * W + w)];
        INFO("threads " << (p ? 2 : 1));
        REQUIRE(same);
    }
}

TEST_CASE("short_rows equals the row-by-row copy for every row size, stride and ISA, and touches nothing else") {
    // The vector forms (every k-th element of 1, 2 or 4 bytes into a dense output, and back) and
    // the masked and fixed-size rows, on row counts around the vector's row count.
    std::mt19937 rng(99);
    struct form {
        std::size_t w;
        std::ptrdiff_t ss, ds;
    };
    std::vector<form> forms;
    for (std::size_t w : {1, 2, 3, 4, 7, 8, 16, 33, 64, 80})
        for (std::size_t k : {1, 2, 4, 8, 3}) {
            forms.push_back({w, static_cast<std::ptrdiff_t>(k * w), static_cast<std::ptrdiff_t>(w)});  // a slice
            forms.push_back({w, static_cast<std::ptrdiff_t>(w), static_cast<std::ptrdiff_t>(k * w)});  // a concatenation's input
            forms.push_back({w, static_cast<std::ptrdiff_t>(k * w + 1), static_cast<std::ptrdiff_t>(k * w + 5)});
        }
    for (const auto& f : forms)
        for (std::size_t rows : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65, 300}) {
            const std::size_t guard = 80;
            const std::size_t sbytes = rows ? (rows - 1) * static_cast<std::size_t>(f.ss) + f.w : 0;
            const std::size_t dbytes = rows ? (rows - 1) * static_cast<std::size_t>(f.ds) + f.w : 0;
            std::vector<std::uint8_t> s(sbytes + 2 * guard), d0(dbytes + 2 * guard);
            for (auto& b : s) b = static_cast<std::uint8_t>(rng());
            for (auto& b : d0) b = static_cast<std::uint8_t>(rng());
            std::vector<std::uint8_t> want = d0;
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t j = 0; j < f.w; ++j)
                    want[guard + r * static_cast<std::size_t>(f.ds) + j] = s[guard + r * static_cast<std::size_t>(f.ss) + j];
            for (auto isa : runnable_isas()) {
                std::vector<std::uint8_t> d = d0;
                vnnx::sim::kernels::short_rows(isa, d.data() + guard, f.ds, s.data() + guard, f.ss, f.w, rows);
                INFO("w " << f.w << " source stride " << f.ss << " destination stride " << f.ds << " rows " << rows << " isa "
                          << vnnx::sim::isa_name(isa));
                REQUIRE(d == want);
            }
        }
}

TEST_CASE("movement::copy of YOLO's box slices and short rows on threads equals the definition") {
    // [8400, 4] -> the rows' second half [8400, 2] (a STRIDED_SLICE of dist2bbox) and [8400, 144]
    // -> [8400, 64]: short runs contiguous on both sides, split over the pool when large.
    std::mt19937 rng(5);
    vnnx::sim::thread_pool pool(2);
    for (const auto& [rows, from, take, begin] : std::vector<std::array<std::int64_t, 4>>{{8400, 4, 2, 2}, {8400, 144, 64, 0}, {37, 4, 2, 0}}) {
        std::vector<std::byte> sbuf(static_cast<std::size_t>(rows * from)), dbuf(static_cast<std::size_t>(rows * take));
        for (auto& b : sbuf) b = static_cast<std::byte>(rng());
        mv::view src, dst;
        src.base = sbuf.data() + begin;
        src.dims = dst.dims = {1, rows, take};
        src.strides = {rows * from, from, 1};
        dst.base = dbuf.data();
        dst.strides = {rows * take, take, 1};
        for (vnnx::sim::thread_pool* p : {static_cast<vnnx::sim::thread_pool*>(nullptr), &pool})
            for (auto isa : runnable_isas()) {
                std::fill(dbuf.begin(), dbuf.end(), std::byte{0});
                mv::copy(src, dst, p, isa);
                bool same = true;
                for (std::int64_t r = 0; r < rows; ++r)
                    for (std::int64_t j = 0; j < take; ++j)
                        same = same && dbuf[static_cast<std::size_t>(r * take + j)] == sbuf[static_cast<std::size_t>(r * from + begin + j)];
                INFO("rows " << rows << " of " << from << " taking " << take << " threads " << (p ? 2 : 1) << " isa "
                             << vnnx::sim::isa_name(isa));
                REQUIRE(same);
            }
    }
}

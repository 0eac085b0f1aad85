#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/sim/isa.hpp>
#include <vnnx/sim/kernels/conv.hpp>
#include <vnnx/sim/thread_pool.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

// Random FIA requantization: mostly realistic constants (outputs spread over the code range),
// some extreme ones (clamped), all four shifts, multipliers up to 65535.
[[maybe_unused]] k::requant_params random_requant(std::mt19937& rng, int channels, bool out_signed, std::int64_t acc_scale) {
    k::requant_params rq;
    std::uniform_int_distribution<int> sidx(0, 3), pick(0, 9);
    for (int i = 0; i < channels; ++i) {
        const int o = k::shift_from_index(sidx(rng));
        const int mode = pick(rng);
        std::uint16_t om = static_cast<std::uint16_t>(
            mode == 0 ? 65535 : std::uniform_int_distribution<int>(0, 65535)(rng));
        if (mode >= 5) {
            // aim om*acc_scale at about 2^o * 64 so outputs land in range
            const double target = std::ldexp(64.0, o) / static_cast<double>(std::max<std::int64_t>(1, acc_scale));
            om = static_cast<std::uint16_t>(std::clamp(target * std::uniform_real_distribution<double>(0.3, 2.0)(rng), 1.0, 65535.0));
        }
        std::int64_t c;
        if (mode == 1) c = k::c_max;
        else if (mode == 2) c = k::c_min;
        else if (mode == 3) c = std::uniform_int_distribution<std::int64_t>(k::c_min, k::c_max)(rng);
        else {
            const std::int64_t span = std::int64_t{1} << std::min(46, o + 8);
            c = std::uniform_int_distribution<std::int64_t>(-span, span)(rng) + (std::int64_t{1} << (o - 1));
        }
        rq.multiplier.push_back(om);
        rq.shift.push_back(static_cast<std::uint8_t>(o));
        rq.constant.push_back(c);
    }
    const int lo = out_signed ? -128 : 0, hi = out_signed ? 127 : 255;
    rq.act_min = lo;
    rq.act_max = hi;
    if (pick(rng) < 4) {
        rq.act_min = std::uniform_int_distribution<int>(lo, lo + 100)(rng);
        rq.act_max = std::uniform_int_distribution<int>(rq.act_min, hi)(rng);
    }
    return rq;
}

// Random codes; some tensors are saturated at the extremes of the code range.
[[maybe_unused]] std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t n, bool extreme) {
    std::vector<std::uint8_t> v(n);
    static constexpr std::uint8_t ends[4] = {0x00, 0xFF, 0x7F, 0x80};  // uint8 and int8 extremes
    std::uniform_int_distribution<int> d(0, 255), e(0, 3);
    for (auto& b : v) b = extreme ? ends[e(rng)] : static_cast<std::uint8_t>(d(rng));
    return v;
}
[[maybe_unused]] std::vector<std::int8_t> random_weights(std::mt19937& rng, std::size_t n, bool extreme) {
    std::vector<std::int8_t> v(n);
    std::uniform_int_distribution<int> d(-128, 127), e(0, 1);
    for (auto& w : v) w = static_cast<std::int8_t>(extreme ? (e(rng) ? 127 : -128) : d(rng));
    return v;
}

[[maybe_unused]] std::vector<isa_kind> simd_isas() {
    std::vector<isa_kind> out;
    for (isa_kind i : {isa_kind::avx2, isa_kind::avx512_vnni}) {
        if (vnnx::sim::isa_supported(i)) out.push_back(i);
        else WARN("skipping " << vnnx::sim::isa_name(i) << ": not supported by this CPU");
    }
    return out;
}
}  // namespace


TEST_CASE("isa: names, support and dispatch") {
    using namespace vnnx::sim;
    CHECK(isa_supported(isa_kind::scalar));
    CHECK(isa_from_name("scalar") == isa_kind::scalar);
    CHECK(isa_supported(best_isa()));
    try {
        (void)isa_from_name("sse9");
        FAIL("no error");
    } catch (const vnnx::error& e) {
        CHECK(e.kind() == vnnx::error_kind::usage);
        CHECK(std::string(e.what()).find("unknown instruction set 'sse9'") != std::string::npos);
    }
    for (const char* n : {"avx2", "avx512"}) {
        if (isa_supported(n[3] == '2' ? isa_kind::avx2 : isa_kind::avx512_vnni)) {
            CHECK(isa_name(isa_from_name(n)) == n);
        } else {
            CHECK_THROWS_WITH(isa_from_name(n), Catch::Contains("not supported by this CPU"));
        }
    }
    for (isa_kind i : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni})
        CHECK(dispatch(i, [](auto tag) { return decltype(tag)::kind; }) == i);
}

TEST_CASE("thread pool: every index once, exceptions reach the caller, pools are reusable") {
    for (unsigned n : {1u, 2u, 4u}) {
        vnnx::sim::thread_pool pool(n);
        CHECK(pool.size() == n);
        for (int round = 0; round < 20; ++round) {
            std::vector<std::atomic<int>> hits(1000);
            pool.parallel_for(hits.size(), [&](std::size_t i) { hits[i].fetch_add(1); });
            CHECK(std::all_of(hits.begin(), hits.end(), [](const auto& h) { return h.load() == 1; }));
        }
        CHECK_THROWS_WITH(pool.parallel_for(100, [](std::size_t i) {
            if (i == 37) throw std::runtime_error("index 37 failed");
        }), "index 37 failed");
        std::atomic<int> sum{0};
        pool.parallel_for(10, [&](std::size_t i) { sum += static_cast<int>(i); });
        CHECK(sum == 45);
    }
}

TEST_CASE("conv kernels: results do not depend on the thread count") {
    std::mt19937 rng(11);
    vnnx::sim::thread_pool p2(2), p3(3);
    for (int dw = 0; dw < 2; ++dw) {
        k::conv_shape s;
        s.channels = s.kernels = 37;
        s.groups = dw ? 37 : 1;
        s.height = 31, s.width = 29, s.kernel_h = s.kernel_w = 3, s.stride_w = 2;
        const auto x = random_bytes(rng, s.input_size(), false);
        const auto w = random_weights(rng, s.weight_size(), false);
        const auto rq = random_requant(rng, s.kernels, true, 128 * 64 * 4);
        std::vector<isa_kind> isas{isa_kind::scalar};
        for (isa_kind i : simd_isas()) isas.push_back(i);
        std::vector<std::uint8_t> want(s.output_size());
        k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
        for (isa_kind i : isas) {
            const k::conv2d c(s, w, rq, i);
            k::conv_workspace ws;  // reused across runs and thread counts
            for (vnnx::sim::thread_pool* p : {static_cast<vnnx::sim::thread_pool*>(nullptr), &p2, &p3}) {
                std::vector<std::uint8_t> got(s.output_size(), 0);
                c.run(x, got, ws, p);
                INFO("isa " << vnnx::sim::isa_name(i) << " threads " << (p ? p->size() : 1) << " dw " << dw);
                CHECK(got == want);
            }
        }
    }
}

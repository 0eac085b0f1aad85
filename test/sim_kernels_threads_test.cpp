#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "support/sim_random.hpp"

#include <vnnx/sim/isa.hpp>
#include <vnnx/sim/kernels/conv.hpp>
#include <vnnx/sim/kernels/item_split.hpp>
#include <vnnx/sim/thread_pool.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

using namespace vnnx_test;
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
    const std::pair<const char*, isa_kind> named[] = {
        {"avx2", isa_kind::avx2}, {"avx512", isa_kind::avx512_vnni}, {"vbmi", isa_kind::avx512_vbmi},
        {"amx", isa_kind::avx512_amx}};
    for (const auto& [n, k] : named) {
        if (isa_supported(k)) {
            CHECK(isa_from_name(n) == k);
            CHECK(isa_name(k) == n);
        } else {
            CHECK_THROWS_WITH(isa_from_name(n), Catch::Contains("not supported by this CPU"));
        }
    }
    // AMX implies VBMI, VBMI implies AVX-512 VNNI; the best present is the default.
    if (isa_supported(isa_kind::avx512_amx)) {
        CHECK(isa_supported(isa_kind::avx512_vbmi));
        CHECK(best_isa() == isa_kind::avx512_amx);
    }
    if (isa_supported(isa_kind::avx512_vbmi)) CHECK(isa_supported(isa_kind::avx512_vnni));
    CHECK(uses_avx512(isa_kind::avx512_amx));
    CHECK(uses_avx512(isa_kind::avx512_vbmi));
    CHECK(!uses_avx512(isa_kind::avx2));
    // Only the VBMI kinds take the byte-permute paths: `--isa avx512` leaves them out.
    CHECK(uses_vbmi(isa_kind::avx512_vbmi));
    CHECK(uses_vbmi(isa_kind::avx512_amx));
    CHECK(!uses_vbmi(isa_kind::avx512_vnni));
    for (isa_kind i : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni})
        CHECK(dispatch(i, [](auto tag) { return decltype(tag)::kind; }) == i);
    // The VBMI and AMX kinds run the AVX-512 kernels; the extensions' paths are chosen on the kind.
    CHECK(dispatch(isa_kind::avx512_vbmi, [](auto tag) { return decltype(tag)::kind; }) == isa_kind::avx512_vnni);
    CHECK(dispatch(isa_kind::avx512_amx, [](auto tag) { return decltype(tag)::kind; }) == isa_kind::avx512_vnni);
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

TEST_CASE("thread pool: many short loops back to back, each index exactly once") {
    // Workers join, miss or arrive late to loops of two to five indices; a late worker must
    // never run an index of a loop that has returned, nor miss one of the current loop.
    vnnx::sim::thread_pool pool(2);
    std::vector<int> hits(5 * 20000, 0);
    for (std::size_t loop = 0; loop < 20000; ++loop) {
        const std::size_t n = 2 + loop % 4;
        int* h = hits.data() + loop * 5;
        pool.parallel_for(n, [&](std::size_t i) { ++h[i]; });
        for (std::size_t i = 0; i < 5; ++i) REQUIRE(h[i] == (i < n ? 1 : 0));
    }
}

TEST_CASE("thread pool: workers that fell asleep between loops are woken for the next one") {
    // Each loop's index 0 (the caller's share) waits for every other index to have started,
    // which only the workers can do: a worker left asleep shows as a wait that times out.
    for (unsigned threads : {2u, 3u}) {
        vnnx::sim::thread_pool pool(threads);
        for (int loop = 0; loop < 100; ++loop) {
            // Longer than the workers' spin: they are asleep when the loop opens (every other
            // loop; the rest open while they spin).
            if (loop % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
            std::atomic<unsigned> started{0};
            bool all_started = false;
            pool.parallel_for(threads, [&](std::size_t i) {
                if (i != 0) {
                    started.fetch_add(1);
                    return;
                }
                const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                while (started.load() < threads - 1 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
                all_started = started.load() == threads - 1;
            });
            INFO("threads " << threads << " loop " << loop);
            REQUIRE(all_started);
        }
    }
}

TEST_CASE("thread pool: uneven shares are stolen, every index exactly once") {
    // Each thread owns a contiguous share and steals from the others once its own is done:
    // shares of very different cost, loop sizes smaller than the pool or not divisible by it,
    // and a throw inside a share being stolen must still cover each index exactly once.
    for (unsigned threads : {2u, 3u, 4u}) {
        vnnx::sim::thread_pool pool(threads);
        for (std::size_t n : {2u, 3u, 5u, 7u, 64u, 1001u}) {
            std::vector<std::atomic<int>> hits(n);
            pool.parallel_for(n, [&](std::size_t i) {
                // The first share is slow: its owner alone would finish last.
                if (i < n / threads) std::this_thread::sleep_for(std::chrono::microseconds(20));
                hits[i].fetch_add(1);
            });
            for (std::size_t i = 0; i < n; ++i) REQUIRE(hits[i].load() == 1);
        }
        std::atomic<int> ran{0};
        CHECK_THROWS_WITH(pool.parallel_for(400, [&](std::size_t i) {
            ran.fetch_add(1);
            if (i == 399) throw std::runtime_error("last index failed");
        }), "last index failed");
        CHECK(ran.load() >= 1);
        CHECK(ran.load() <= 400);
        // The pool is usable after a failed loop.
        std::vector<std::atomic<int>> hits(97);
        pool.parallel_for(hits.size(), [&](std::size_t i) { hits[i].fetch_add(1); });
        CHECK(std::all_of(hits.begin(), hits.end(), [](const auto& h) { return h.load() == 1; }));
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

namespace {
// Runs s with random data on every SIMD ISA and each pool (null: one thread), a fresh workspace
// per run so a packed byte a thread leaves unwritten shows, against the scalar kernel.
void check_threads_equal_scalar(std::mt19937& rng, const k::conv_shape& s,
                                std::initializer_list<vnnx::sim::thread_pool*> pools, const std::string& what) {
    const auto x = random_bytes(rng, s.input_size(), false);
    const auto w = random_weights(rng, s.weight_size(), false);
    const auto rq = random_requant(rng, s.kernels, true, 128 * 64 * 4);
    std::vector<std::uint8_t> want(s.output_size());
    k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
    for (isa_kind i : simd_isas()) {
        const k::conv2d c(s, w, rq, i);
        for (vnnx::sim::thread_pool* p : pools) {
            k::conv_workspace ws;
            std::vector<std::uint8_t> got(s.output_size(), 0);
            c.run(x, got, ws, p);
            INFO("isa " << vnnx::sim::isa_name(i) << " threads " << (p ? p->size() : 1) << " shape " << what);
            CHECK(got == want);
        }
    }
}
}  // namespace

TEST_CASE("conv kernels: stride-1 layers of 2048+ pixels on two and three threads, fresh workspaces, equal one thread") {
    std::mt19937 rng(12);
    vnnx::sim::thread_pool p2(2), p3(3);
    struct shape_t {
        int channels, kernels, h, w, k;
    };
    // 1x1 and 3x3, channel counts that leave a partial group of four; a fresh workspace per run,
    // so a packed byte a thread leaves unwritten shows.
    for (const auto& sh : {shape_t{37, 24, 48, 50, 1}, shape_t{19, 40, 45, 47, 3}, shape_t{64, 32, 64, 64, 1}}) {
        k::conv_shape s;
        s.channels = sh.channels, s.kernels = sh.kernels, s.height = sh.h, s.width = sh.w;
        s.kernel_h = s.kernel_w = sh.k;
        check_threads_equal_scalar(rng, s, {nullptr, &p2, &p3},
                                   std::to_string(sh.channels) + "->" + std::to_string(sh.kernels) + " " + std::to_string(sh.h) +
                                       "x" + std::to_string(sh.w) + " k" + std::to_string(sh.k));
    }
}

TEST_CASE("conv kernels: inputs of one to three channel groups are packed in row bands on two and three threads") {
    // The stem's three channels make one group of four: its packing is split by input rows.
    // Stride 1 (the whole-channel interleave) and stride 2 (the row interleave), padded widths.
    std::mt19937 rng(13);
    vnnx::sim::thread_pool p2(2), p3(3);
    struct shape_t {
        int channels, kernels, h, w, k, stride;
    };
    for (const auto& sh : {shape_t{3, 16, 121, 118, 3, 2}, shape_t{3, 8, 97, 101, 3, 1}, shape_t{12, 24, 90, 92, 1, 1},
                           shape_t{5, 8, 130, 67, 3, 2}}) {
        k::conv_shape s;
        s.channels = sh.channels, s.kernels = sh.kernels, s.height = sh.h, s.width = sh.w;
        s.kernel_h = s.kernel_w = sh.k;
        s.stride_h = s.stride_w = sh.stride;
        check_threads_equal_scalar(rng, s, {&p2, &p3},
                                   std::to_string(sh.channels) + "->" + std::to_string(sh.kernels) + " " + std::to_string(sh.h) +
                                       "x" + std::to_string(sh.w) + " k" + std::to_string(sh.k) + " stride " +
                                       std::to_string(sh.stride));
    }
}

TEST_CASE("item split: the pool's schedule and the balanced split of a few items") {
    namespace d = vnnx::sim::kernels::detail;
    // Shares [0,1) and [1,3): the caller's one item of 3 outlasts the worker's two of 1.
    CHECK(d::schedule_makespan({3, 1, 1}, 2) == 3.0);
    // A free thread claims from the other's share: shares [1, 1] and [4, 1, 1] end at 4, not 6.
    CHECK(d::schedule_makespan({1, 1, 4, 1, 1}, 2) == 4.0);
    // ... in index order: the long last item starts when the first thread frees up.
    CHECK(d::schedule_makespan({1, 1, 1, 1, 4}, 2) == 6.0);
    CHECK(d::schedule_makespan(std::vector<double>(9, 1.0), 2) == 5.0);
    CHECK(d::schedule_makespan(std::vector<double>(9, 1.0), 3) == 3.0);
    CHECK(d::schedule_makespan(std::vector<double>(10, 1.0), 4) == 3.0);

    auto makespan = [](std::size_t kblocks, std::size_t tiles, double last, std::size_t kbp, std::size_t tpi,
                       std::size_t threads) {
        std::vector<double> cost;
        for (std::size_t t0 = 0; t0 < tiles; t0 += tpi) {
            const std::size_t t1 = std::min(tiles, t0 + tpi);
            const double w = static_cast<double>(t1 - t0) - (t1 == tiles ? 1.0 - last : 0.0);
            for (std::size_t b0 = 0; b0 < kblocks; b0 += kbp) cost.push_back(w * static_cast<double>(std::min(kblocks, b0 + kbp) - b0));
        }
        return d::schedule_makespan(cost, threads);
    };
    SECTION("a 14x14 layer of 72 blocks in 9 items: an even count of equal items") {
        const auto [kbp, tpi] = d::balanced_split(72, 5, 1.0 / 3, 9, 1, 2);
        const std::size_t items = (72 + kbp - 1) / kbp * ((5 + tpi - 1) / tpi);
        CHECK(items % 2 == 0);
        CHECK(makespan(72, 5, 1.0 / 3, kbp, tpi, 2) == Approx(72 * (4 + 1.0 / 3) / 2));
        CHECK(makespan(72, 5, 1.0 / 3, 8, 5, 2) > makespan(72, 5, 1.0 / 3, kbp, tpi, 2));
    }
    SECTION("18 blocks x 66 tiles in (8, 8, 2) x (16, 16, 16, 16, 2): equal sizes, no thread idle") {
        const auto [kbp, tpi] = d::balanced_split(18, 66, 1.0, 3, 5, 2);
        CHECK(makespan(18, 66, 1.0, kbp, tpi, 2) == Approx(18.0 * 66 / 2));
        CHECK(makespan(18, 66, 1.0, 8, 16, 2) > 18.0 * 66 / 2 * 1.05);
    }
    SECTION("one thread keeps the split it was given") {
        CHECK(d::balanced_split(72, 5, 1.0, 9, 1, 1) == std::pair<std::size_t, std::size_t>{8, 5});
    }
    SECTION("random layers: never slower than the split it started from, every block and tile covered") {
        // The conv asks only below 8 items per thread.
        std::mt19937 rng(77);
        int checked = 0;
        for (int n = 0; n < 20000 && checked < 1000; ++n) {
            const std::size_t kblocks = 1 + rng() % 40, tiles = 1 + rng() % 30, threads = 2 + rng() % 3;
            const std::size_t ki = 1 + rng() % kblocks, qi = 1 + rng() % tiles;
            if (ki * qi >= 8 * threads) continue;
            ++checked;
            const double last = static_cast<double>(1 + rng() % 3) / 3;
            const auto [kbp, tpi] = d::balanced_split(kblocks, tiles, last, ki, qi, threads);
            INFO("kblocks " << kblocks << " tiles " << tiles << " from " << ki << " x " << qi << " on " << threads);
            REQUIRE(kbp >= 1);
            REQUIRE(tpi >= 1);
            REQUIRE(kbp <= kblocks);
            REQUIRE(tpi <= tiles);
            const std::size_t kbp0 = (kblocks + ki - 1) / ki, tpi0 = (tiles + qi - 1) / qi;
            REQUIRE(makespan(kblocks, tiles, last, kbp, tpi, threads) <=
                    makespan(kblocks, tiles, last, kbp0, tpi0, threads) + 1e-9);
        }
        CHECK(checked == 1000);
    }
}

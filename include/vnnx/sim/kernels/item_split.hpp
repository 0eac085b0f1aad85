#pragma once
// How an ordinary convolution with few work items splits them over the pool's threads.
// An item is a run of k-blocks (output channels) times a run of pixel tiles. With only a few
// items per thread, a count that does not divide by the threads, or items of unequal size
// (channel blocks of 8, 8 and 2), leaves one thread working while the others wait: 9 items of a
// 14x14 layer on 2 threads kept the caller waiting 5-8 us for the worker's fifth item. The split
// is chosen by simulating thread_pool's schedule over nearby splits, once per layer and thread
// count (split_cache); which thread computes an item never changes the output.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace vnnx::sim::kernels::detail {

/// Makespan of `cost` (items in index order) under thread_pool::parallel_for with a grain of
/// one: thread p takes its contiguous share in order, then claims the rest of the others'
/// shares, each index going to whichever thread is free first.
inline double schedule_makespan(const std::vector<double>& cost, std::size_t threads) {
    const std::size_t n = cost.size();
    std::vector<std::size_t> next(threads), end(threads);
    for (std::size_t p = 0; p < threads; ++p) {
        next[p] = n * p / threads;
        end[p] = n * (p + 1) / threads;
    }
    std::vector<double> clock(threads, 0.0);
    for (std::size_t done = 0; done < n; ++done) {
        const auto t = static_cast<std::size_t>(std::min_element(clock.begin(), clock.end()) - clock.begin());
        for (std::size_t r = 0; r < threads; ++r) {
            const std::size_t s = (t + r) % threads;
            if (next[s] < end[s]) {
                clock[t] += cost[next[s]++];
                break;
            }
        }
    }
    return *std::max_element(clock.begin(), clock.end());
}

/// Blocks per item and tiles per item for `kblocks` x `tiles` work (the last tile weighing
/// `last_tile` of a full one), starting from `k_items` x `q_items` items: every split with
/// k_items..2*k_items runs of blocks and q_items..2*q_items runs of tiles (sizes made equal,
/// at most 16 items per thread) is scheduled, and the shortest wins; a small charge per item
/// prefers fewer items when two schedule alike (each item is claimed through a shared counter
/// and re-reads its input tile): 0.3% of a thread's share per item per thread.
inline std::pair<std::size_t, std::size_t> balanced_split(std::size_t kblocks, std::size_t tiles, double last_tile,
                                                          std::size_t k_items, std::size_t q_items, std::size_t threads) {
    auto per = [](std::size_t total, std::size_t n) { return (total + n - 1) / n; };
    std::pair<std::size_t, std::size_t> best{per(kblocks, k_items), per(tiles, q_items)};
    if (threads < 2 || kblocks == 0 || tiles == 0) return best;
    double best_score = 1e300;
    std::vector<double> cost;
    for (std::size_t kn = k_items; kn <= std::min(kblocks, 2 * k_items); ++kn)
        for (std::size_t qn = q_items; qn <= std::min(tiles, 2 * q_items); ++qn) {
            const std::size_t kbp = per(kblocks, kn), tpi = per(tiles, qn);
            const std::size_t ki = per(kblocks, kbp), qi = per(tiles, tpi);
            if (ki * qi > 16 * threads) continue;
            cost.clear();
            for (std::size_t q = 0; q < qi; ++q) {
                const std::size_t t0 = q * tpi, t1 = std::min(tiles, t0 + tpi);
                const double w = static_cast<double>(t1 - t0) - (t1 == tiles ? 1.0 - last_tile : 0.0);
                for (std::size_t k = 0; k < ki; ++k)
                    cost.push_back(w * static_cast<double>(std::min(kblocks, (k + 1) * kbp) - k * kbp));
            }
            const double total = static_cast<double>(kblocks) * (static_cast<double>(tiles) - 1.0 + last_tile);
            const double per_thread = total / static_cast<double>(threads);
            const double score = schedule_makespan(cost, threads) +
                                 0.003 * per_thread * static_cast<double>(ki * qi) / static_cast<double>(threads);
            if (score < best_score - 1e-9) {
                best_score = score;
                best = {kbp, tpi};
            }
        }
    return best;
}

/// The split of one layer for one thread count: threads in the low 16 bits, blocks per item in
/// the next 24, tiles per item above. Copies start empty (a copy may run on another pool).
struct split_cache {
    std::atomic<std::uint64_t> v{0};
    split_cache() = default;
    split_cache(const split_cache&) noexcept {}
    split_cache& operator=(const split_cache&) noexcept {
        v.store(0, std::memory_order_relaxed);
        return *this;
    }
};

}  // namespace vnnx::sim::kernels::detail

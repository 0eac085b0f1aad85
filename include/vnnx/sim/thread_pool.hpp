#pragma once
// A small fixed pool for the simulator's kernels. parallel_for gives each thread a contiguous
// share of the indices (claimed through an atomic cursor per share, see `part`); the caller
// works too. Idle workers spin for a few tens of microseconds (a model's layers follow one
// another faster than a sleeping thread wakes up), then sleep on a condition variable.
// Kernels write disjoint outputs per index, so results never depend on the thread count.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace vnnx::sim {

class thread_pool {
public:
    // `threads` counts the calling thread: 1 means no workers at all.
    explicit thread_pool(unsigned threads = 1) {
        const unsigned n = std::max(1u, threads);
        workers_.reserve(n - 1);
        parts_ = std::make_unique<part[]>(n);
        for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
    }
    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;
    ~thread_pool() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& t : workers_) t.join();
    }

    [[nodiscard]] unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }

    // Runs f(i) for i in [0, n); returns when all calls are done. The first exception thrown by
    // any call is rethrown here (remaining indices are skipped).
    template <class F>
    void parallel_for(std::size_t n, F&& f) {
        if (n == 0) return;
        if (workers_.empty() || n == 1) {
            for (std::size_t i = 0; i < n; ++i) f(i);
            return;
        }
        job& j = job_;
        // Indices are claimed a few at a time: callers hand out one index per channel or
        // plane, and a claim per tiny index (the counter's cache line moving between cores)
        // cost more than the work; eight claims per thread still balance the load.
        j.grain = std::max<std::size_t>(1, n / (8 * size()));
        j.ctx = &f;
        j.call = [](void* ctx, std::size_t i) { (*static_cast<std::remove_reference_t<F>*>(ctx))(i); };
        for (unsigned p = 0; p < size(); ++p) {
            parts_[p].next.store(n * p / size(), std::memory_order_relaxed);
            parts_[p].end = n * (p + 1) / size();
        }
        j.failed.store(false, std::memory_order_relaxed);
        j.error = nullptr;
        j.open.store(true, std::memory_order_seq_cst);
        // Spinning workers see the new generation by themselves; the mutex and the condition
        // variable are for sleeping ones only (each is a cross-core round trip, 0.2-0.4 us on
        // some hosts, and a model runs over a hundred loops). sleepers_ and generation_ are
        // seq_cst both ways: either this sees a worker's sleepers_ count, or that worker's
        // check under the mutex sees the new generation.
        generation_.fetch_add(1, std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_seq_cst) != 0) {
            { std::lock_guard lock(mutex_); }
            wake_.notify_all();
        }
        run_job(j, 0);
        // Close the job, then wait only for the workers that joined it: a worker that is not
        // running (asleep, or preempted on a busy machine) is not waited for; the caller has
        // done its share of the work. joined/open are seq_cst both ways: either the caller sees
        // a worker's join, or the worker sees the job closed and leaves without touching it.
        j.open.store(false, std::memory_order_seq_cst);
        if (joined_.load(std::memory_order_seq_cst) != 0) {
            spin_until([&] { return joined_.load(std::memory_order_seq_cst) == 0; });
            std::unique_lock lock(mutex_);
            done_.wait(lock, [this] { return joined_.load(std::memory_order_seq_cst) == 0; });
        }
        if (j.error) std::rethrow_exception(j.error);
    }

private:
    struct job {
        std::size_t grain = 1;
        void* ctx = nullptr;
        void (*call)(void*, std::size_t) = nullptr;
        std::atomic<bool> open{false};
        std::atomic<bool> failed{false};
        std::exception_ptr error;
        std::mutex error_mutex;
    };

    void run_job(job& j, unsigned self) {
        const unsigned T = size();
        for (unsigned r = 0; r < T; ++r) {
            part& pt = parts_[(self + r) % T];
            for (;;) {
                if (j.failed.load(std::memory_order_relaxed)) return;
                const std::size_t i = pt.next.fetch_add(j.grain, std::memory_order_relaxed);
                if (i >= pt.end) break;
                try {
                    for (std::size_t k = i, e = std::min(pt.end, i + j.grain); k < e; ++k) j.call(j.ctx, k);
                } catch (...) {
                    std::lock_guard lock(j.error_mutex);
                    if (!j.error) j.error = std::current_exception();
                    j.failed.store(true, std::memory_order_relaxed);
                }
            }
        }
    }

    // Spins for up to about 50 microseconds or until ready() holds.
    template <class P>
    static void spin_until(P&& ready) {
        const auto start = std::chrono::steady_clock::now();
        for (unsigned i = 1; !ready(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            if (i % 64 == 0 && std::chrono::steady_clock::now() - start > std::chrono::microseconds(50)) return;
        }
    }

    void worker_loop(unsigned self) {
        unsigned long long seen = 0;
        for (;;) {
            spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
            unsigned long long now = generation_.load(std::memory_order_seq_cst);
            if (now == seen) {  // nothing within the spin: sleep until a job or the pool's end
                std::unique_lock lock(mutex_);
                sleepers_.fetch_add(1, std::memory_order_seq_cst);
                wake_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_seq_cst) != seen; });
                sleepers_.fetch_sub(1, std::memory_order_seq_cst);
                if (stop_) return;
                now = generation_.load(std::memory_order_seq_cst);
            }
            seen = now;
            joined_.fetch_add(1, std::memory_order_seq_cst);
            // The job still open is the current one (perhaps newer than `seen`): its fields were
            // set before it was opened, and the caller cannot reuse them until this worker leaves.
            if (job_.open.load(std::memory_order_seq_cst)) run_job(job_, self);
            if (joined_.fetch_sub(1, std::memory_order_seq_cst) == 1) {
                std::lock_guard lock(mutex_);
                done_.notify_one();
            }
        }
    }

    // Thread t's share of a job's indices: it claims them first, so in consecutive jobs split the
    // same way it reads what it wrote (cross-core reads cost far more on some hosts); once its
    // share is done it steals what is left of the others' (a late worker's share gets done).
    struct alignas(64) part {
        std::atomic<std::size_t> next{0};
        std::size_t end = 0;
    };
    std::unique_ptr<part[]> parts_;
    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    job job_;
    std::atomic<unsigned> joined_{0};  // workers inside job_
    std::atomic<unsigned long long> generation_{0};
    std::atomic<unsigned> sleepers_{0};  // workers waiting on wake_ (or about to)
    bool stop_ = false;
};

}  // namespace vnnx::sim

#pragma once
// Many inputs through one model at once: a batch_runner holds `jobs` machines, each with its
// own memory image, and runs samples on them side by side, one thread per machine, each
// claiming the next sample when its last one is done. Machines share nothing they write, so
// the jobs do not wait on each other's cache lines: on hosts where two threads splitting one
// inference pass every activation between cores (and lose most of the second core to that),
// inferences run side by side still scale with the cores. A sample's outputs do not depend
// on which machine ran it or what it ran before (every run writes what it reads first).
#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "vnnx/sim/machine.hpp"
#include "vnnx/sim/thread_pool.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::sim {

struct batch_options {
    isa_kind isa = best_isa();
    unsigned jobs = 1;     // machines running samples at once, one thread each
    unsigned threads = 1;  // threads within each machine's inference (run_options::threads)
    bool fuse_layers = true;
};

class batch_runner {
public:
    /// `bytes` must outlive the runner. Checks the file and the ISA at once (as machine does);
    /// each job's machine is made by the thread that first runs it.
    batch_runner(std::span<const std::byte> bytes, std::string source, batch_options opt = {})
        : bytes_(bytes), source_(std::move(source)), opt_(opt), first_(bytes, source_, run_opts()) {
        if (opt_.jobs == 0) fail(error_kind::usage, source_ + ": a batch needs at least one job");
        machines_.resize(opt_.jobs);
        if (opt_.jobs > 1) pool_ = std::make_unique<thread_pool>(opt_.jobs);
    }

    [[nodiscard]] const format::model_view& view() const noexcept { return first_.view(); }
    [[nodiscard]] unsigned jobs() const noexcept { return opt_.jobs; }

    /// Runs samples 0..n-1. For each, on the thread of the machine that runs it:
    /// `fill(machine&, s)` sets its inputs, the machine runs, `take(machine&, s)` reads its
    /// outputs. Calls for different samples may run at once, never two on one machine. If a
    /// call throws, no further sample starts, and the error of the lowest failing sample is
    /// rethrown once the running ones are done.
    template <class Fill, class Take>
    void run(std::size_t n, Fill&& fill, Take&& take) {
        if (n == 0) return;
        std::atomic<std::size_t> next{0};
        std::atomic<bool> failed{false};
        std::mutex error_mutex;
        std::size_t error_sample = n;
        std::exception_ptr error;
        auto job = [&](std::size_t j) {
            for (;;) {
                if (failed.load(std::memory_order_relaxed)) return;
                const std::size_t s = next.fetch_add(1, std::memory_order_relaxed);
                if (s >= n) return;
                try {
                    machine& m = machine_for(j);
                    fill(m, s);
                    m.run();
                    take(m, s);
                } catch (...) {
                    std::lock_guard lock(error_mutex);
                    if (s < error_sample) {
                        error_sample = s;
                        error = std::current_exception();
                    }
                    failed.store(true, std::memory_order_relaxed);
                }
            }
        };
        if (pool_) pool_->parallel_for(opt_.jobs, job);
        else job(0);
        if (error) std::rethrow_exception(error);
    }

private:
    [[nodiscard]] run_options run_opts() const { return {opt_.isa, opt_.threads, opt_.fuse_layers}; }

    // Job 0 reuses the machine the constructor made to check the file; the others are made on
    // first use, by the thread that runs them, so that their memory starts in that core's caches.
    machine& machine_for(std::size_t j) {
        if (j == 0) return first_;
        auto& slot = machines_[j];
        if (!slot) slot = std::make_unique<machine>(bytes_, source_, run_opts());
        return *slot;
    }

    std::span<const std::byte> bytes_;
    std::string source_;
    batch_options opt_;
    machine first_;
    std::vector<std::unique_ptr<machine>> machines_;  // [0] unused: job 0 is first_
    std::unique_ptr<thread_pool> pool_;
};

}  // namespace vnnx::sim

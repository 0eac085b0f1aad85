#pragma once
// The simulator: runs the bytes of a VNNX file node by node, layer by layer, in the model's
// own memory image (allocate_bytes long, the file copied to its start), exactly where the
// file's tensor records place every activation.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "vnnx/format/model_view.hpp"
#include "vnnx/sim/registry.hpp"
#include "vnnx/support/huge_pages.hpp"
#include "vnnx/support/limits.hpp"
#include "vnnx/support/linkage.hpp"
#include "vnnx/support/npy.hpp"

namespace vnnx::sim {

struct run_options {
    isa_kind isa = best_isa();
    unsigned threads = 1;
    bool fuse_layers = true;  // see execution::fuse_layers
    // A first run on one thread, on a CPU with another core, prepares the nodes' data (packed
    // weights) ahead on a second thread while the nodes before them run: a one-shot inference
    // then costs little more than a warm one. Off: each node prepares when it first runs.
    bool prepare_ahead = true;
};

/// Element type of a calc type as an .npy dtype.
inline dtype dtype_of_calc(std::int32_t type) {
    switch (type) {
        case 0: return dtype::uint8;
        case 1: return dtype::int8;
        case 2: return dtype::int16;
        case 3: return dtype::int32;
        default: fail_input("calc type " + std::to_string(type) + " has no array type");
    }
}

class machine {
public:
    /// `bytes` must outlive the machine.
    machine(std::span<const std::byte> bytes, std::string source, run_options opt = {});

    [[nodiscard]] const format::model_view& view() const noexcept { return view_; }

    /// Writes graph input i (channels-first, the tensor's calc type and element count).
    void set_input(std::size_t i, std::span<const std::byte> data) {
        const auto& io = view_.input(i);
        const std::uint64_t bytes = io.length * format::element_size(io.type);
        if (data.size() != bytes)
            fail_input(view_.source() + ": input " + std::to_string(i) + " needs " + std::to_string(bytes) + " bytes, got " +
                       std::to_string(data.size()));
        std::memcpy(region(io.direct, bytes, [&] { return "input " + std::to_string(i); }), data.data(), data.size());
    }
    /// Graph output o after run().
    [[nodiscard]] std::span<const std::byte> output(std::size_t o) {
        const auto& io = view_.output(o);
        const std::uint64_t bytes = io.length * format::element_size(io.type);
        return {region(io.direct, bytes, [&] { return "output " + std::to_string(o); }), static_cast<std::size_t>(bytes)};
    }

    /// Runs every node; calls `after_node(k)` after node k (per-node comparison, progress).
    template <class F>
    void run(F&& after_node) {
        const execution ex{opt_.isa, pool_.get(), opt_.fuse_layers};
        std::size_t layer_base = 0, k = 0;  // the running node k and the index of its first layer
        const std::function<void(std::size_t, std::span<tensor_ref>)> run_layer = [&](std::size_t l,
                                                                                      std::span<tensor_ref> t) {
            const auto& layer = view_.node_layers(k)[l];
            layer_context lc{view_, layer, t, layer_where_[layer_base + l], ex, k, &layer_cache_[layer_base + l]};
            layer_function(layer.type)(lc);
        };
        const std::function<std::vector<tensor_ref>(std::size_t)> resolve_node = [this](std::size_t j) { return resolve(j); };
        start_ahead();
        const ahead_stopper stopper{*this};
        for (; k < view_.num_nodes(); ++k) {
            const auto& node = view_.node(k);
            auto& all = resolved_[k];
            resolve_into(k, all);
            const std::size_t own = static_cast<std::size_t>(std::max(0, node.num_inputs)) +
                                    static_cast<std::size_t>(std::max(0, node.num_outputs));
            const auto layers = view_.node_layers(k);
            if (own > all.size())
                fail_input(view_.source() + ": " + node_where_[k] + ": " + std::to_string(own) +
                           " node tensors but only " + std::to_string(all.size()) + " records");
            if (node.skip != 0) {
                // Zero-copy split or concatenation: its parts already alias one buffer, the
                // node does no work (vnnx-format.md §3.2).
                layer_base += layers.size();
                after_node(k);
                continue;
            }
            // This node and the next (which this one may carry out) are this thread's from here.
            take_ahead(k);
            take_ahead(k + 1);
            std::size_t done = 0;
            bool next_done = false;
            node_context nc{view_, node, std::span<tensor_ref>(all.data(), own), node_where_[k], ex, k, &node_cache_[k],
                            std::span<tensor_ref>(all.data() + own, all.size() - own), &done, &run_layer,
                            k + 1 < view_.num_nodes() ? &next_done : nullptr, &resolve_node};
            node_function(node.type)(nc);
            fused_[k] = done;
            std::size_t next = own;
            for (std::size_t l = 0; l < layers.size(); ++l) {
                const auto& layer = layers[l];
                const std::size_t n = layer.num_tensors < 0 ? 0 : static_cast<std::size_t>(layer.num_tensors);
                const std::string& where = layer_where_[layer_base + l];
                if (next + n > all.size())
                    fail_input(view_.source() + ": " + where + ": needs " + std::to_string(n) +
                               " tensor records beyond those of its node");
                if (l < done) {
                    next += n;
                    continue;
                }
                layer_context lc{view_, layer, std::span<tensor_ref>(all.data() + next, n), where, ex, k,
                                 &layer_cache_[layer_base + l]};
                layer_function(layer.type)(lc);
                next += n;
            }
            layer_base += layers.size();
            after_node(k);
            if (next_done) {
                // Node k + 1 was carried out by node k: all its layers count as fused.
                ++k;
                fused_[k] = view_.node_layers(k).size();
                layer_base += fused_[k];
                after_node(k);
            }
        }
    }
    void run();
    /// How many of node k's layers its executor carried out itself in the last run (their
    /// intermediate tensors then hold nothing, see execution::fuse_layers); all of them when
    /// the node before carried out node k too.
    [[nodiscard]] std::size_t layers_fused(std::size_t k) const { return k < fused_.size() ? fused_[k] : 0; }

    /// The tensors of node k resolved to memory (node tensors, then each layer's).
    [[nodiscard]] std::vector<tensor_ref> resolve(std::size_t k);
    /// The same into `out`, reusing its storage.
    void resolve_into(std::size_t k, std::vector<tensor_ref>& out);

private:
    // Preparation ahead (run_options::prepare_ahead): ahead_->nodes[k] is 0 while node k is free,
    // 1 while the helper thread prepares it, 2 once it is prepared or the run has taken it.
    void start_ahead();
    // Whether node k does work that its executors can prepare (the node's own or a layer's).
    [[nodiscard]] bool prepares(std::size_t k) const {
        if (view_.node(k).skip != 0) return false;
        if (node_prepare_function(view_.node(k).type) != nullptr) return true;
        for (const auto& l : view_.node_layers(k))
            if (layer_prepare_function(l.type) != nullptr) return true;
        return false;
    }
    void prepare_ahead_loop();
    void take_ahead(std::size_t k) {
        if (!ahead_ || k >= view_.num_nodes()) return;
        auto& s = ahead_->nodes[k];
        int free = 0;
        if (s.compare_exchange_strong(free, 2, std::memory_order_acq_rel)) return;
        while (s.load(std::memory_order_acquire) == 1) s.wait(1, std::memory_order_acquire);
    }
    void stop_ahead() noexcept {
        if (!ahead_) return;
        ahead_->stop.store(true, std::memory_order_relaxed);
        if (ahead_->helper.joinable()) ahead_->helper.join();
        ahead_.reset();
    }
    struct ahead_stopper {
        machine& m;
        ~ahead_stopper() { m.stop_ahead(); }
    };

    // `what()` names the region in the error; it is made only then (resolve runs per node per run).
    template <class What>
    std::byte* region(std::uint64_t offset, std::uint64_t bytes, What&& what) {
        if (offset > memory_.size() || memory_.size() - offset < bytes)
            fail_input(view_.source() + ": " + what() + ": " + std::to_string(bytes) + " bytes at offset " +
                       std::to_string(offset) + " lie outside the model's " + std::to_string(memory_.size()) +
                       " bytes of memory");
        return memory_.data() + offset;
    }

    format::model_view view_;
    run_options opt_;
    std::unique_ptr<thread_pool> pool_;
    zeroed_pages memory_;
    std::vector<std::shared_ptr<void>> node_cache_, layer_cache_;
    std::vector<std::size_t> fused_;
    std::vector<std::vector<tensor_ref>> resolved_;  // per node, refilled every run (resolve_into)
    std::vector<std::string> node_where_, layer_where_;  // "node 3 (CONV_2D)", "node 3 layer 0 (PAD)"
    struct ahead_state {
        std::unique_ptr<std::atomic<int>[]> nodes;
        std::atomic<bool> stop{false};
        std::thread helper;
    };
    std::unique_ptr<ahead_state> ahead_;  // only during a first run
    bool ahead_tried_ = false;            // only a first run prepares ahead: later runs find the caches made
};

#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY machine::machine(std::span<const std::byte> bytes, std::string source, run_options opt)
    : view_(bytes, std::move(source)), opt_(opt) {
    if (!isa_supported(opt_.isa))
        fail(error_kind::usage, "the ISA '" + std::string(isa_name(opt_.isa)) + "' is not supported by this CPU");
    if (opt_.threads > 1) pool_ = std::make_unique<thread_pool>(opt_.threads);
    // allocate_bytes comes from the file: bounded before it sizes an allocation (issue 8).
    check_limit(view_.header().allocate_bytes, active_limits().max_activation_bytes,
                view_.source() + ": header allocate_bytes", "VNNX_MAX_ACTIVATION_BYTES");
    memory_ = zeroed_pages(view_.header().allocate_bytes);
    std::memcpy(memory_.data(), bytes.data(), bytes.size());
    for (std::size_t k = 0; k < view_.num_nodes(); ++k) {
        const auto type = view_.node(k).type;
        if (node_function(type) == nullptr)
            fail(error_kind::unsupported, view_.source() + ": " + format::model_view::describe("node", k, type) +
                                              ": the simulator has no executor for this node type");
        const auto layers = view_.node_layers(k);
        for (std::size_t l = 0; l < layers.size(); ++l)
            if (layer_function(layers[l].type) == nullptr)
                fail(error_kind::unsupported, view_.source() + ": node " + std::to_string(k) + " " +
                                                  format::model_view::describe("layer", l, layers[l].type) +
                                                  ": the simulator has no executor for this layer type");
    }
    node_cache_.resize(view_.num_nodes());
    fused_.assign(view_.num_nodes(), 0);
    layer_cache_.resize(view_.num_layers());
    resolved_.resize(view_.num_nodes());
    // The executors' names, made once: each run would otherwise format a string per node and layer.
    for (std::size_t k = 0; k < view_.num_nodes(); ++k) {
        node_where_.push_back(format::model_view::describe("node", k, view_.node(k).type));
        const auto layers = view_.node_layers(k);
        for (std::size_t l = 0; l < layers.size(); ++l)
            layer_where_.push_back("node " + std::to_string(k) + " " + format::model_view::describe("layer", l, layers[l].type));
    }
}

VNNX_ENTRY void machine::run() {
    run([](std::size_t) {});
}

VNNX_ENTRY void machine::start_ahead() {
    if (ahead_tried_ || !opt_.prepare_ahead) return;
    ahead_tried_ = true;
    // Only with a core to spare: a run on a pool already uses the others.
    if (pool_ || std::thread::hardware_concurrency() < 2) return;
    bool any = false;
    for (std::size_t k = 0; k < view_.num_nodes() && !any; ++k) any = prepares(k);
    if (!any) return;
    ahead_ = std::make_unique<ahead_state>();
    ahead_->nodes = std::make_unique<std::atomic<int>[]>(view_.num_nodes());
    try {
        ahead_->helper = std::thread([this] { prepare_ahead_loop(); });
    } catch (const std::system_error&) {
        ahead_.reset();  // no thread to spare: each node prepares when it runs
    }
}

VNNX_ENTRY void machine::prepare_ahead_loop() {
    const execution ex{opt_.isa, nullptr, opt_.fuse_layers};
    // The same context the run gives (the executor decides from it what to prepare); it never
    // runs a layer here.
    const std::function<void(std::size_t, std::span<tensor_ref>)> no_layer = [](std::size_t, std::span<tensor_ref>) {
        throw std::logic_error("a node's preparation ran a layer");
    };
    const std::function<std::vector<tensor_ref>(std::size_t)> resolve_node = [this](std::size_t j) { return resolve(j); };
    std::size_t layer_base = 0;  // the index of node k's first layer
    for (std::size_t k = 0; k < view_.num_nodes(); ++k) {
        if (ahead_->stop.load(std::memory_order_relaxed)) return;
        const auto& node = view_.node(k);
        const auto layers = view_.node_layers(k);
        const std::size_t first_layer = layer_base;
        layer_base += layers.size();
        if (!prepares(k)) continue;
        const node_fn prep = node_prepare_function(node.type);
        int free = 0;
        auto& s = ahead_->nodes[k];
        if (!s.compare_exchange_strong(free, 1, std::memory_order_acq_rel)) continue;
        try {
            auto all = resolve(k);
            const std::size_t own = static_cast<std::size_t>(std::max(0, node.num_inputs)) +
                                    static_cast<std::size_t>(std::max(0, node.num_outputs));
            if (own <= all.size() && prep != nullptr) {
                std::size_t done = 0;
                bool next_done = false;
                node_context nc{view_, node, std::span<tensor_ref>(all.data(), own), node_where_[k], ex, k, &node_cache_[k],
                                std::span<tensor_ref>(all.data() + own, all.size() - own), &done, &no_layer,
                                k + 1 < view_.num_nodes() ? &next_done : nullptr, &resolve_node};
                prep(nc);
            }
            // The layers on their record tensors (a layer a node runs on other tensors makes
            // the same tables: they follow from its records).
            std::size_t next = own;
            for (std::size_t l = 0; l < layers.size(); ++l) {
                const std::size_t n = layers[l].num_tensors < 0 ? 0 : static_cast<std::size_t>(layers[l].num_tensors);
                if (next + n > all.size()) break;
                if (const layer_fn lp = layer_prepare_function(layers[l].type)) {
                    layer_context lc{view_, layers[l], std::span<tensor_ref>(all.data() + next, n), layer_where_[first_layer + l],
                                     ex, k, &layer_cache_[first_layer + l]};
                    lp(lc);
                }
                next += n;
            }
        } catch (...) {
            // The run meets the same error at this node and reports it there.
        }
        s.store(2, std::memory_order_release);
        s.notify_all();
    }
    // Then the activations' pages, 2 MiB at a time, so that the run's first stores into them
    // do not wait for the kernel to zero them.
    for (std::size_t at = 0; at < memory_.size(); at += huge_page_bytes) {
        if (ahead_->stop.load(std::memory_order_relaxed)) return;
        memory_.prefault(at, huge_page_bytes);
    }
}

VNNX_ENTRY std::vector<tensor_ref> machine::resolve(std::size_t k) {
    std::vector<tensor_ref> out;
    resolve_into(k, out);
    return out;
}

VNNX_ENTRY void machine::resolve_into(std::size_t k, std::vector<tensor_ref>& out) {
    const auto recs = view_.node_tensors(k);
    out.resize(recs.size());
    for (std::size_t i = 0; i < recs.size(); ++i) {
        const auto& r = recs[i];
        tensor_ref& t = out[i];
        t.shape.clear();  // keeps its storage: a warm run allocates nothing here
        t.type = r.type;
        t.elem = format::element_size(r.type);
        if (t.elem == 0)
            fail_input(view_.source() + ": node " + std::to_string(k) + " tensor " + std::to_string(i) +
                       ": unknown calc type " + std::to_string(r.type));
        if (r.dims < 0 || r.dims > 6)
            fail_input(view_.source() + ": node " + std::to_string(k) + " tensor " + std::to_string(i) + ": dims " +
                       std::to_string(r.dims) + " is outside 0..6");
        t.count = 1;
        t.shape.reserve(static_cast<std::size_t>(r.dims));
        for (std::int32_t d = 0; d < r.dims; ++d) {
            const std::int32_t v = r.shape[static_cast<std::size_t>(d)];
            // An entry <= 0 is no dimension: the firmware counts elements without it, and the SDK
            // writes 2-D tensors as dims 4 with shape [n, m, 0, 0].
            if (v <= 0) continue;
            if (v > (1 << 24))
                fail_input(view_.source() + ": node " + std::to_string(k) + " tensor " + std::to_string(i) +
                           ": shape entry " + std::to_string(v) + " is larger than 2^24");
            t.shape.push_back(v);
            t.count *= static_cast<std::uint64_t>(v);
            if (t.count > (std::uint64_t{1} << 32))
                fail_input(view_.source() + ": node " + std::to_string(k) + " tensor " + std::to_string(i) +
                           ": too many elements");
        }
        t.scale = r.scale;
        t.zero = r.zero;
        if (r.direct.absent())
            fail_input(view_.source() + ": node " + std::to_string(k) + " tensor " + std::to_string(i) + " has no buffer");
        t.data = region(r.direct.value, t.count * t.elem,
                        [&] { return "node " + std::to_string(k) + " tensor " + std::to_string(i); });
    }
}
#endif

}  // namespace vnnx::sim

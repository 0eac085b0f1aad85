#pragma once
// The simulated VectorBlox core behind libvbx_cnn_sim.so: the firmware API's states, error
// register and output-valid flag over vnnx::sim::machine. A start runs the model to the end in
// the caller's thread (the SDK's Python client sleeps 0.1 s whenever a poll says "running",
// so a core that finished at once serves it best); the inputs are copied from the caller's
// buffers into the machine's memory image and the outputs back, in the VNNX layout and types.
//
// Prepared machines are kept per model address, up to four. At every start the model's bytes
// are checked against those the machine was made from, and a machine whose model changed is
// made anew: by default the first and last 4 KiB (the header, the first records, the last
// weights) and 32 samples of 64 bytes spread between (another model at a freed model's address
// differs there); VNNX_SIM_CHECK_MODEL=full compares every byte. A full
// compare streams the whole model through the caches at every run: MobileNetV2's 10 MB cost
// 0.57 ms and slowed the run after it by as much again (BENCHMARKS.md, "The SDK's simulation
// library"), for the one case the sample misses, a few weights changed in place.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vnnx/capi/model_access.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/machine.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::capi {

/// The error register's values (the firmware API's vbx_cnn_err_e) that the simulated core sets.
enum class core_error : std::uint32_t {
    none = 0,
    invalid_network_address = 6,
    model_blob_invalid = 7,
    model_blob_version_mismatch = 8,
    model_blob_size_configuration_mismatch = 9,
};

/// vbx_cnn_state_e.
enum class core_state : int { ready = 1, running = 2, error = 8 };

struct core_config {
    std::optional<std::uint32_t> size_conf;  // nothing: the core takes models of every size
    sim::run_options run;
    bool full_model_check = false;  // compare every byte of the model at every start
};

/// The configuration the environment asks for (see vbx_cnn_sim.h, vbx_cnn_init); a
/// vnnx::error naming the variable when a value is invalid.
inline core_config config_from_environment() {
    core_config c;
    c.run.threads = 1;
    if (const char* s = std::getenv("VBX_CNN_SIM_SIZE"); s != nullptr && *s != '\0') {
        const auto p = format::preset_from_name(s);  // the firmware's numbers (vbx_cnn_size_conf_e)
        if (!p)
            fail(error_kind::usage, "VBX_CNN_SIM_SIZE='" + std::string(s) + "': expected V250, V500, V1000, V2000 or V4000");
        c.size_conf = static_cast<std::uint32_t>(*p);
    }
    if (const char* s = std::getenv("VNNX_SIM_THREADS"); s != nullptr && *s != '\0') {
        char* end = nullptr;
        const long n = std::strtol(s, &end, 10);
        if (end == s || *end != '\0' || n < 1 || n > 256)
            fail(error_kind::usage, "VNNX_SIM_THREADS='" + std::string(s) + "': expected a whole number from 1 to 256");
        c.run.threads = static_cast<unsigned>(n);
    }
    if (const char* s = std::getenv("VNNX_SIM_CHECK_MODEL"); s != nullptr && *s != '\0') {
        const std::string_view v(s);
        if (v != "full" && v != "sample")
            fail(error_kind::usage, "VNNX_SIM_CHECK_MODEL='" + std::string(v) + "': expected full or sample");
        c.full_model_check = v == "full";
    }
    if (const char* s = std::getenv("VNNX_SIM_ISA"); s != nullptr && *s != '\0') {
        try {
            c.run.isa = sim::isa_from_name(s);
        } catch (const error& e) {
            fail(e.kind(), std::string("VNNX_SIM_ISA: ") + e.what());
        }
    }
    return c;
}

/// Process-wide run statistics (the SDK keeps its simulator's statistics per process too).
struct run_stats {
    std::atomic<std::uint64_t> tensor_bytes{0};  // bytes of the nodes' input and output tensors
    std::atomic<std::uint64_t> nodes{0};
};
inline run_stats& global_stats() noexcept {
    static run_stats s;
    return s;
}

class sim_core {
public:
    explicit sim_core(core_config cfg) : cfg_(cfg) {}

    [[nodiscard]] const core_config& config() const noexcept { return cfg_; }

    /// vbx_cnn_model_start: 0 when the model ran, -1 when it did not (the core in ERROR, a run
    /// in progress, or a fault that now stops the core).
    int start(const void* model, const std::uint64_t* io) noexcept {
        if (error_.load() != core_error::none) return -1;
        std::unique_lock lock(run_mutex_, std::try_to_lock);
        if (!lock.owns_lock()) return -1;
        running_.store(true);
        const core_error e = run(model, io);
        running_.store(false);
        if (e != core_error::none) {
            error_.store(e);
            return -1;
        }
        output_valid_.store(true);
        return 0;
    }

    /// vbx_cnn_model_poll.
    [[nodiscard]] int poll() noexcept {
        if (error_.load() != core_error::none) return -1;
        if (output_valid_.exchange(false)) return 0;
        if (running_.load()) return 1;
        return -2;
    }

    /// vbx_cnn_model_wfi: as poll once any run in progress has finished; 0 when nothing ran.
    [[nodiscard]] int wait() noexcept {
        { std::lock_guard lock(run_mutex_); }
        const int r = poll();
        return r == -2 ? 0 : r;
    }

    /// The ISR's half: takes the output-valid flag (true when a run had finished).
    [[nodiscard]] bool take_output_valid() noexcept { return output_valid_.exchange(false); }

    [[nodiscard]] core_state state() const noexcept {
        if (error_.load() != core_error::none) return core_state::error;
        return running_.load() ? core_state::running : core_state::ready;
    }
    [[nodiscard]] core_error error_value() const noexcept { return error_.load(); }
    /// Why the core stopped; "" while it has not.
    [[nodiscard]] const char* message() const noexcept {
        std::lock_guard lock(message_mutex_);
        return message_.c_str();
    }

    /// model_check_configuration's size and compression check: 0, -2 or -3.
    [[nodiscard]] int check_configuration(const format::vnnx_graph_t& h) const noexcept {
        if (h.sparsity != 0) return -2;  // the simulated core has no weight decompression
        if (cfg_.size_conf && h.vbx_nn_preset != *cfg_.size_conf) return -3;
        return 0;
    }

    /// Tests only: called inside a run, after the inputs are in the machine.
    std::function<void()> during_run;

private:
    struct loaded {
        const void* address = nullptr;
        std::vector<std::byte> bytes;  // the model as it was read: the machine's view lives on it
        std::unique_ptr<sim::machine> machine;
        std::vector<std::uint64_t> input_bytes, output_bytes;
        std::uint64_t tensor_bytes = 0;  // per run, for the statistics
        std::uint64_t last_use = 0;
    };
    static constexpr std::size_t max_loaded = 4;

    core_error stop(core_error e, std::string why) noexcept {
        try {
            std::lock_guard lock(message_mutex_);
            message_ = std::move(why);
        } catch (...) {
        }
        return e;
    }

    static std::string where(const void* model) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "model at %p", model);
        return buf;
    }

    core_error run(const void* model, const std::uint64_t* io) noexcept {
        try {
            if (model == nullptr) return stop(core_error::invalid_network_address, "the model address is null");
            const model_access m(model);
            if (!m.magic_ok())
                return stop(core_error::model_blob_invalid, where(model) + ": no VNNX magic at offset 76: not a VNNX model");
            if (!m.sane())
                return stop(core_error::model_blob_version_mismatch,
                            where(model) + ": format version " + std::to_string(m.header().version) +
                                " (this library reads " + std::to_string(format::graph_version) + ")");
            const auto& h = m.header();
            const int configuration = check_configuration(h);
            if (configuration == -2)
                return stop(core_error::model_blob_size_configuration_mismatch,
                            where(model) + ": compiled for compression configuration " + std::to_string(h.sparsity) +
                                "; the simulated core has none");
            if (configuration == -3)
                return stop(core_error::model_blob_size_configuration_mismatch,
                            where(model) + ": compiled for size configuration " + preset_name(h.vbx_nn_preset) +
                                "; the simulated core is " + preset_name(*cfg_.size_conf));
            if (io == nullptr) return stop(core_error::invalid_network_address, where(model) + ": the io buffer array is null");
            // The model is read and checked first: only then are its io counts worth reading
            // that many entries of the caller's array.
            loaded& l = load(model, h.data_bytes);
            const std::size_t n_in = l.input_bytes.size(), n_io = n_in + l.output_bytes.size();
            for (std::size_t j = 0; j < n_io; ++j)
                if (io[j] == 0)
                    return stop(core_error::invalid_network_address,
                                where(model) + ": io buffer " + std::to_string(j) + " (" +
                                    (j < n_in ? "input " + std::to_string(j) : "output " + std::to_string(j - n_in)) +
                                    ") is null");
            sim::machine& mach = *l.machine;
            for (std::size_t i = 0; i < l.input_bytes.size(); ++i)
                mach.set_input(i, {reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(io[i])),
                                   static_cast<std::size_t>(l.input_bytes[i])});
            if (during_run) during_run();
            mach.run();
            for (std::size_t o = 0; o < l.output_bytes.size(); ++o) {
                const auto out = mach.output(o);
                std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(io[l.input_bytes.size() + o])), out.data(),
                            out.size());
            }
            global_stats().tensor_bytes += l.tensor_bytes;
            global_stats().nodes += mach.view().num_nodes();
            return core_error::none;
        } catch (const std::exception& e) {
            return stop(core_error::model_blob_invalid, e.what());
        } catch (...) {
            return stop(core_error::model_blob_invalid, where(model) + ": the simulator failed");
        }
    }

    static std::string preset_name(std::uint32_t p) {
        return p < format::presets.size() ? std::string(format::presets[p].name) : "number " + std::to_string(p);
    }

    // The machine for the model at `model` (data_bytes long), made anew unless one was made
    // from the same bytes at the same address.
    loaded& load(const void* model, std::uint64_t data_bytes) {
        const auto* bytes = static_cast<const std::byte*>(model);
        ++clock_;
        loaded_.reserve(max_loaded);
        auto it = std::find_if(loaded_.begin(), loaded_.end(), [&](const loaded& l) { return l.address == model; });
        if (it != loaded_.end() && it->bytes.size() == data_bytes && unchanged(*it, bytes)) {
            it->last_use = clock_;
            return *it;
        }
        if (it == loaded_.end()) {
            if (loaded_.size() < max_loaded) {
                it = loaded_.emplace(loaded_.end());
            } else {
                it = std::min_element(loaded_.begin(), loaded_.end(),
                                      [](const loaded& a, const loaded& b) { return a.last_use < b.last_use; });
            }
        }
        loaded& l = *it;
        l = loaded{};  // a failure below leaves an empty slot, never a stale machine
        std::vector<std::byte> copy(bytes, bytes + data_bytes);
        auto mach = std::make_unique<sim::machine>(copy, where(model), cfg_.run);
        const auto& view = mach->view();
        std::vector<std::uint64_t> in, out;
        for (std::size_t i = 0; i < view.num_inputs(); ++i)
            in.push_back(view.input(i).length * format::element_size(view.input(i).type));
        for (std::size_t o = 0; o < view.num_outputs(); ++o)
            out.push_back(view.output(o).length * format::element_size(view.output(o).type));
        std::uint64_t traffic = 0;
        for (std::size_t k = 0; k < view.num_nodes(); ++k) {
            const auto& node = view.node(k);
            const auto recs = view.node_tensors(k);
            const std::size_t own = std::min<std::size_t>(recs.size(), static_cast<std::size_t>(node.num_inputs) +
                                                                           static_cast<std::size_t>(node.num_outputs));
            for (std::size_t t = 0; t < own; ++t) traffic += model_access::length(recs[t]) * format::element_size(recs[t].type);
        }
        // The vector moves into the slot with its heap block, so the machine's view stays valid.
        l.address = model;
        l.bytes = std::move(copy);
        l.machine = std::move(mach);
        l.input_bytes = std::move(in);
        l.output_bytes = std::move(out);
        l.tensor_bytes = traffic;
        l.last_use = clock_;
        return l;
    }

    // Whether the model at l.address still holds the bytes l's machine was made from (see the
    // top of this file for what is compared).
    [[nodiscard]] bool unchanged(const loaded& l, const std::byte* now) const noexcept {
        const std::size_t size = l.bytes.size();
        const std::byte* was = l.bytes.data();
        if (cfg_.full_model_check) return std::memcmp(was, now, size) == 0;
        // A fixed number of samples: each is a cache miss or two, whatever the model's size.
        constexpr std::size_t edge = 4096, samples = 32, sample = 64;
        if (size <= 2 * edge + samples * sample) return std::memcmp(was, now, size) == 0;
        if (std::memcmp(was, now, edge) != 0 || std::memcmp(was + size - edge, now + size - edge, edge) != 0) return false;
        const std::size_t step = (size - 2 * edge - sample) / samples;
        for (std::size_t k = 0; k < samples; ++k) {
            const std::size_t at = edge + k * step;
            if (std::memcmp(was + at, now + at, sample) != 0) return false;
        }
        return true;
    }

    core_config cfg_;
    std::mutex run_mutex_;
    mutable std::mutex message_mutex_;
    std::atomic<bool> running_{false}, output_valid_{false};
    std::atomic<core_error> error_{core_error::none};
    std::string message_;
    std::vector<loaded> loaded_;
    std::uint64_t clock_ = 0;
};

}  // namespace vnnx::capi

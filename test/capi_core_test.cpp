// The simulated core behind libvbx_cnn_sim.so (vnnx/capi/sim_core.hpp) and its model
// accessors (vnnx/capi/model_access.hpp), without the shared library: the firmware API's
// states and error values, a second start while a run is in progress, a model changed in
// place at the same address, and accessors that never read outside a model's data_bytes.
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "vnnx/capi/model_access.hpp"
#include "vnnx/capi/sim_core.hpp"
#include "vnnx/compiler/compile.hpp"
#include "vnnx/tflite/builder.hpp"

namespace {
using vnnx::capi::core_error;
using vnnx::capi::core_state;
using vnnx::capi::model_access;
using vnnx::capi::sim_core;
using namespace vnnx::tflite;
using vnnx::builtin_operator;

// input 1x6x5x4 -> CONV_2D 3x3 (SAME) -> 1x6x5x8; the weights come from `seed`, so two seeds
// give models of the same records and size that answer differently.
std::vector<std::byte> conv_model(std::uint64_t seed) {
    builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 6, 5, 4}, quant{0.05f, 3});
    const auto w = detail::add_conv_weights(b, "conv", {8, 3, 3, 4}, 0, 0.05f, seed);
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 6, 5, 8}, quant{0.11f, -7});
    b.add_operator(builtin_operator::CONV_2D, {in, w.weights, w.bias}, {out},
                   conv2d_options{padding_mode::SAME, 1, 1, activation_function::NONE, 1, 1, tensor_type::FLOAT32});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

std::vector<std::byte> compiled(std::uint64_t seed) {
    return vnnx::compile(conv_model(seed), {}, "conv.tflite").bytes;
}

std::vector<std::byte> input_bytes(int salt) {
    std::vector<std::byte> v(6 * 5 * 4);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::byte>((static_cast<int>(i) * 37 + salt) % 256);
    return v;
}

// What a fresh machine gives for `model` on `input`.
std::vector<std::byte> machine_output(const std::vector<std::byte>& model, const std::vector<std::byte>& input) {
    vnnx::sim::machine m(model, "fresh", {});
    m.set_input(0, input);
    m.run();
    const auto o = m.output(0);
    return {o.begin(), o.end()};
}

struct io_set {
    std::vector<std::byte> in, out;
    std::uint64_t ptrs[2];
    explicit io_set(std::vector<std::byte> input) : in(std::move(input)), out(6 * 5 * 8) {
        ptrs[0] = reinterpret_cast<std::uintptr_t>(in.data());
        ptrs[1] = reinterpret_cast<std::uintptr_t>(out.data());
    }
};

sim_core make_core() {
    vnnx::capi::core_config c;
    c.run.isa = vnnx::sim::isa_kind::scalar;
    return sim_core(c);
}
}  // namespace

TEST_CASE("capi core: a start runs the model to the end, poll reports it once", "[capi]") {
    const auto model = compiled(5);
    sim_core core = make_core();
    CHECK(core.state() == core_state::ready);
    CHECK(core.poll() == -2);
    io_set io(input_bytes(1));
    REQUIRE(core.start(model.data(), io.ptrs) == 0);
    CHECK(io.out == machine_output(model, io.in));
    CHECK(core.state() == core_state::ready);
    CHECK(core.poll() == 0);
    CHECK(core.poll() == -2);
    CHECK(core.wait() == 0);  // nothing runs: wfi does not wait forever
    CHECK(core.error_value() == core_error::none);
    CHECK(std::string(core.message()).empty());

    // The same core and model on another input, then on the first again.
    io_set io2(input_bytes(99));
    REQUIRE(core.start(model.data(), io2.ptrs) == 0);
    CHECK(io2.out == machine_output(model, io2.in));
    CHECK(io2.out != io.out);
    io_set io3(input_bytes(1));
    REQUIRE(core.start(model.data(), io3.ptrs) == 0);
    CHECK(io3.out == io.out);
}

TEST_CASE("capi core: a second start while a run is in progress is refused and leaves the run whole", "[capi]") {
    const auto model = compiled(5);
    sim_core core = make_core();
    io_set io(input_bytes(3)), other(input_bytes(4));
    int second = 0, poll_during = 0, wait_result = 99;
    core_state state_during{};
    core.during_run = [&] {
        // Another thread, as a program sharing one core would do it.
        std::thread t([&] {
            second = core.start(model.data(), other.ptrs);
            poll_during = core.poll();
            state_during = core.state();
        });
        t.join();
    };
    REQUIRE(core.start(model.data(), io.ptrs) == 0);
    CHECK(second == -1);
    CHECK(poll_during == 1);
    CHECK(state_during == core_state::running);
    CHECK(other.out == std::vector<std::byte>(other.out.size()));  // the refused start wrote nothing
    CHECK(io.out == machine_output(model, io.in));
    CHECK(core.error_value() == core_error::none);  // refused, not an error
    core.during_run = nullptr;
    CHECK(core.poll() == 0);

    // wfi from another thread waits for the run in progress, then takes its output-valid flag.
    std::thread waiter;
    core.during_run = [&] { waiter = std::thread([&] { wait_result = core.wait(); }); };
    REQUIRE(core.start(model.data(), io.ptrs) == 0);
    waiter.join();
    CHECK(wait_result == 0);
    CHECK(core.poll() == -2);
}

TEST_CASE("capi core: a model changed in place at the same address is read anew", "[capi]") {
    const auto a = compiled(5), b = compiled(77);
    REQUIRE(a.size() == b.size());
    REQUIRE(a != b);
    std::vector<std::byte> memory = a;  // the caller's one buffer
    sim_core core = make_core();
    io_set io(input_bytes(8));
    REQUIRE(core.start(memory.data(), io.ptrs) == 0);
    const auto from_a = io.out;
    CHECK(from_a == machine_output(a, io.in));
    std::memcpy(memory.data(), b.data(), b.size());
    REQUIRE(core.start(memory.data(), io.ptrs) == 0);
    CHECK(io.out == machine_output(b, io.in));
    CHECK(io.out != from_a);
    // And back: the machine made for `a` was replaced, not kept stale.
    std::memcpy(memory.data(), a.data(), a.size());
    REQUIRE(core.start(memory.data(), io.ptrs) == 0);
    CHECK(io.out == from_a);
}

TEST_CASE("capi core: faults stop the core with the firmware API's error values", "[capi]") {
    const auto model = compiled(5);
    io_set io(input_bytes(2));
    SECTION("null model: INVALID_NETWORK_ADDRESS") {
        sim_core core = make_core();
        CHECK(core.start(nullptr, io.ptrs) == -1);
        CHECK(core.error_value() == core_error::invalid_network_address);
        CHECK(core.state() == core_state::error);
        CHECK(core.poll() == -1);
        CHECK(core.start(model.data(), io.ptrs) == -1);  // stays stopped
    }
    SECTION("null io array and null output buffer: INVALID_NETWORK_ADDRESS naming the buffer") {
        sim_core core = make_core();
        CHECK(core.start(model.data(), nullptr) == -1);
        CHECK(core.error_value() == core_error::invalid_network_address);
        sim_core core2 = make_core();
        std::uint64_t ptrs[2] = {io.ptrs[0], 0};
        CHECK(core2.start(model.data(), ptrs) == -1);
        CHECK(core2.error_value() == core_error::invalid_network_address);
        CHECK(std::string(core2.message()).find("output 0") != std::string::npos);
    }
    SECTION("broken magic: MODEL_BLOB_INVALID; other version: MODEL_BLOB_VERSION_MISMATCH") {
        auto bad = model;
        bad[76] ^= std::byte{0xFF};
        sim_core core = make_core();
        CHECK(core.start(bad.data(), io.ptrs) == -1);
        CHECK(core.error_value() == core_error::model_blob_invalid);
        CHECK(std::string(core.message()).find("magic") != std::string::npos);
        auto old = model;
        old[0] ^= std::byte{1};
        sim_core core2 = make_core();
        CHECK(core2.start(old.data(), io.ptrs) == -1);
        CHECK(core2.error_value() == core_error::model_blob_version_mismatch);
    }
    SECTION("a core of one size refuses a model of another: MODEL_BLOB_SIZE_CONFIGURATION_MISMATCH") {
        vnnx::capi::core_config c;
        c.size_conf = 0;  // V250; the model is V1000
        sim_core core(c);
        CHECK(core.check_configuration(model_access(model.data()).header()) == -3);
        CHECK(core.start(model.data(), io.ptrs) == -1);
        CHECK(core.error_value() == core_error::model_blob_size_configuration_mismatch);
        CHECK(std::string(core.message()).find("V250") != std::string::npos);
        c.size_conf = 2;
        sim_core v1000(c);
        CHECK(v1000.check_configuration(model_access(model.data()).header()) == 0);
        CHECK(v1000.start(model.data(), io.ptrs) == 0);
    }
    SECTION("records the simulator rejects: MODEL_BLOB_INVALID with the reader's message") {
        auto bad = model;
        // data_bytes shorter than the records: the bounds-checked reader refuses the model.
        vnnx::store_le<std::uint32_t>(bad.data() + 36, 100);
        sim_core core = make_core();
        CHECK(core.start(bad.data(), io.ptrs) == -1);
        CHECK(core.error_value() == core_error::model_blob_invalid);
        INFO(core.message());
        CHECK(std::string(core.message()).find("model at 0x") == 0);
        CHECK(std::string(core.message()).find("past the end of the 100-byte file") != std::string::npos);
    }
}

TEST_CASE("capi accessors: io records inside data_bytes or nothing", "[capi]") {
    const auto model = compiled(5);
    const model_access m(model.data());
    REQUIRE(m.sane());
    const auto in = m.io(true, 0);
    REQUIRE(in);
    CHECK(model_access::length(in->tensor) == 6 * 5 * 4);
    CHECK(in->tensor.type == 1);  // int8
    // The shape the firmware hands out points into the model's own record.
    std::int32_t shape0 = 0;
    std::memcpy(&shape0, model.data() + in->offset + model_access::shape_offset, 4);
    CHECK(shape0 == in->tensor.shape[0]);
    const auto out = m.io(false, 0);
    REQUIRE(out);
    CHECK(model_access::length(out->tensor) == 6 * 5 * 8);
    CHECK(m.test_vector(*in) != nullptr);  // the compiler embeds vectors (zeros) by default
    CHECK_FALSE(m.io(true, 1));
    CHECK_FALSE(m.io(false, 1));
    CHECK_FALSE(m.io(true, -1));
    CHECK_FALSE(model_access(nullptr).io(true, 0));

    // Every data_bytes shorter than the records reaches: nothing, never a read past it.
    for (std::uint32_t cut : {0u, 84u, 200u, static_cast<std::uint32_t>(in->offset) + 20u}) {
        auto shortened = model;
        vnnx::store_le<std::uint32_t>(shortened.data() + 36, cut);
        shortened.resize(std::max<std::size_t>(cut, 84));  // ASan sees any read past the cut
        CHECK_FALSE(model_access(shortened.data()).io(true, 0));
    }
    // io_nodes pointing at a node that does not exist.
    auto bad = model;
    const auto io_nodes = m.header().io_nodes.value;
    vnnx::store_le<std::int32_t>(bad.data() + io_nodes, 1000);
    CHECK_FALSE(model_access(bad.data()).io(true, 0));
}

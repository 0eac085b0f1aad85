// sim::batch_runner: every sample of a batch gives what a fresh machine gives on it, whatever
// the jobs, threads and ISA; a failing sample's error is the lowest failing one and leaves the
// runner usable; the io helpers split and stack samples along a new first axis.
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"
#include "vnnx/sim/batch.hpp"
#include "vnnx/sim/io.hpp"

namespace {
using namespace conv_test;
using vnnx::sim::isa_kind;

struct batch_case {
    std::vector<std::byte> bytes;
    std::vector<std::vector<std::byte>> inputs, want;  // channels first, per sample
};

batch_case make_case(std::size_t samples) {
    spec s;
    s.H = 12, s.W = 10, s.C = 6, s.K = 16, s.pad = padding_mode::SAME, s.act = activation_function::RELU;
    batch_case c;
    c.bytes = compile(build(s)).bytes;
    for (std::size_t i = 0; i < samples; ++i) {
        c.inputs.push_back(to_channels_first(input_for(s, 300 + i)));
        c.want.push_back(simulate(c.bytes, c.inputs.back(), isa_kind::scalar, 1));
    }
    return c;
}

std::vector<std::vector<std::byte>> run_batch(vnnx::sim::batch_runner& br, const batch_case& c,
                                              std::set<const void*>* machines = nullptr) {
    std::vector<std::vector<std::byte>> got(c.inputs.size());
    std::mutex mu;
    br.run(
        c.inputs.size(), [&](vnnx::sim::machine& m, std::size_t s) { m.set_input(0, c.inputs[s]); },
        [&](vnnx::sim::machine& m, std::size_t s) {
            const auto o = m.output(0);
            got[s].assign(o.begin(), o.end());
            if (machines) {
                std::lock_guard lock(mu);
                machines->insert(&m);
            }
        });
    return got;
}
}  // namespace

TEST_CASE("batch: every sample gives a fresh machine's answer, for any jobs, threads and ISA") {
    const auto c = make_case(9);
    // Distinct samples give distinct outputs, so a sample answered with another's would show.
    for (std::size_t i = 1; i < c.want.size(); ++i) REQUIRE(c.want[i] != c.want[0]);
    for (isa_kind isa : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi}) {
        if (!vnnx::sim::isa_supported(isa)) continue;
        for (unsigned jobs : {1u, 2u, 3u})
            for (unsigned threads : {1u, 2u}) {
                INFO("isa " << vnnx::sim::isa_name(isa) << ", jobs " << jobs << ", threads " << threads);
                vnnx::sim::batch_runner br(c.bytes, "batch.vnnx", {isa, jobs, threads});
                CHECK(br.jobs() == jobs);
                std::set<const void*> machines;
                CHECK(run_batch(br, c, &machines) == c.want);
                CHECK(machines.size() <= jobs);
                CHECK(!machines.empty());
                // A second batch on the same machines (each now holds another sample's activations).
                CHECK(run_batch(br, c) == c.want);
            }
    }
}

TEST_CASE("batch: the lowest failing sample's error comes back, and the runner still works") {
    const auto c = make_case(9);
    for (unsigned jobs : {1u, 2u, 3u}) {
        INFO("jobs " << jobs);
        vnnx::sim::batch_runner br(c.bytes, "batch.vnnx", {isa_kind::scalar, jobs, 1});
        std::vector<int> taken(c.inputs.size(), 0);
        std::mutex mu;
        auto fill = [&](vnnx::sim::machine& m, std::size_t s) {
            if (s == 4 || s == 6) throw std::runtime_error("sample " + std::to_string(s) + " is broken");
            m.set_input(0, c.inputs[s]);
        };
        auto take = [&](vnnx::sim::machine&, std::size_t s) {
            std::lock_guard lock(mu);
            ++taken[s];
        };
        CHECK_THROWS_WITH(br.run(c.inputs.size(), fill, take), "sample 4 is broken");
        for (std::size_t s = 0; s < 4; ++s) CHECK(taken[s] == 1);
        CHECK(taken[4] == 0);
        CHECK(taken[6] == 0);
        // A wrong input size fails inside the machine, naming the file and the input.
        CHECK_THROWS_WITH(br.run(
                              2, [&](vnnx::sim::machine& m, std::size_t) { m.set_input(0, std::vector<std::byte>(3)); },
                              take),
                          Catch::Contains("batch.vnnx: input 0 needs 720 bytes, got 3"));
        CHECK(run_batch(br, c) == c.want);
        int calls = 0;
        br.run(0, [&](vnnx::sim::machine&, std::size_t) { ++calls; }, [&](vnnx::sim::machine&, std::size_t) { ++calls; });
        CHECK(calls == 0);
    }
    CHECK_THROWS_WITH(vnnx::sim::batch_runner(c.bytes, "batch.vnnx", {isa_kind::scalar, 0, 1}),
                      "batch.vnnx: a batch needs at least one job");
}

TEST_CASE("batch io: samples along a new first axis are counted, split and stacked back") {
    using vnnx::ndarray;
    using vnnx::sim::io_layout;
    spec s;
    s.H = 4, s.W = 3, s.C = 2, s.K = 5, s.kh = 1, s.kw = 1;
    const auto bytes = compile(build(s)).bytes;
    const vnnx::format::model_view v(bytes, "io.vnnx");
    const auto& in = v.input(0);
    // One sample, with or without its batch of one; three along a new axis, in either form.
    CHECK(vnnx::sim::io_samples(in, ndarray(vnnx::dtype::int8, {1, 4, 3, 2}), io_layout::tflite) == 1);
    CHECK(vnnx::sim::io_samples(in, ndarray(vnnx::dtype::int8, {4, 3, 2}), io_layout::tflite) == 1);
    CHECK(vnnx::sim::io_samples(in, ndarray(vnnx::dtype::int8, {3, 4, 3, 2}), io_layout::tflite) == 3);
    CHECK(vnnx::sim::io_samples(in, ndarray(vnnx::dtype::int8, {3, 1, 4, 3, 2}), io_layout::tflite) == 3);
    CHECK(vnnx::sim::io_samples(in, ndarray(vnnx::dtype::int8, {3, 2, 4, 3}), io_layout::vnnx) == 3);
    CHECK(vnnx::sim::io_samples(in, ndarray(vnnx::dtype::int8, {3, 2, 4, 3}), io_layout::tflite) == 0);
    CHECK(vnnx::sim::io_samples(in, ndarray(vnnx::dtype::int8, {2, 3, 3, 2}), io_layout::tflite) == 0);

    ndarray batch(vnnx::dtype::int16, {3, 1, 2});
    for (std::size_t i = 0; i < batch.element_count(); ++i) batch.set(i, static_cast<std::int64_t>(100 * i) - 250);
    std::vector<ndarray> parts;
    for (std::size_t k = 0; k < 3; ++k) {
        parts.push_back(vnnx::sim::sample_of(batch, k));
        CHECK(parts.back().shape == std::vector<std::int64_t>{1, 2});
        CHECK(parts.back().get<std::int64_t>(0) == static_cast<std::int64_t>(200 * k) - 250);
        CHECK(parts.back().get<std::int64_t>(1) == static_cast<std::int64_t>(200 * k) - 150);
    }
    // The parts' leading 1 gives way to the count: the stack is the batch as it came.
    const ndarray back = vnnx::sim::stack_samples(parts);
    CHECK(back.shape == std::vector<std::int64_t>{3, 2});
    CHECK(back.data == batch.data);
    CHECK_THROWS_WITH(vnnx::sim::sample_of(batch, 3), Catch::Contains("sample 3 is outside an array of shape (3, 1, 2)"));
    parts[1].shape = {2, 1};
    CHECK_THROWS_WITH(vnnx::sim::stack_samples(parts), Catch::Contains("sample 1 has shape (2, 1), sample 0 (1, 2)"));
}

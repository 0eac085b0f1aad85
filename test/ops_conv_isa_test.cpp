// Every ISA and thread count gives the same bytes as the scalar simulator on compiled
// convolution models (ordinary, strided, depthwise, uint8), and malformed records are rejected
// with the node named.
#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"

using namespace conv_test;

TEST_CASE("conv sim: every ISA and thread count gives identical output") {
    std::vector<spec> cases;
    spec s;
    s.C = 13;
    s.K = 21;
    s.H = 10;
    s.W = 9;
    cases.push_back(s);
    s.sh = s.sw = 2;
    cases.push_back(s);
    spec d;
    d.op = kind::depthwise;
    d.C = 19;
    d.H = 13;
    d.W = 70;
    d.sh = 2;
    cases.push_back(d);
    spec u;
    u.in_type = u.out_type = u.w_type = tensor_type::UINT8;
    u.w_zero = 128;
    u.C = 9;
    u.K = 17;
    cases.push_back(u);
    // Past the sizes where data movement and small-plane items are split over the threads.
    spec big_dw;
    big_dw.op = kind::depthwise;
    big_dw.C = 48;
    big_dw.H = big_dw.W = 66;
    big_dw.sh = big_dw.sw = 2;
    cases.push_back(big_dw);
    spec small_plane;
    small_plane.C = 64;
    small_plane.K = 200;
    small_plane.H = small_plane.W = 9;
    cases.push_back(small_plane);
    for (const auto& c : cases) {
        const auto compiled = compile(build(c));
        const auto x = to_channels_first(input_for(c, 77));
        const auto want = simulate(compiled.bytes, x, vnnx::sim::isa_kind::scalar, 1);
        for (auto isa : {vnnx::sim::isa_kind::scalar, vnnx::sim::isa_kind::avx2, vnnx::sim::isa_kind::avx512_vnni,
                          vnnx::sim::isa_kind::avx512_vbmi, vnnx::sim::isa_kind::avx512_amx}) {
            if (!vnnx::sim::isa_supported(isa)) {
                WARN("ISA " << vnnx::sim::isa_name(isa) << " not supported by this CPU: skipped");
                continue;
            }
            for (unsigned threads : {1u, 3u}) {
                INFO("ISA " << vnnx::sim::isa_name(isa) << ", " << threads << " threads, C=" << c.C << " K=" << c.K);
                CHECK(simulate(compiled.bytes, x, isa, threads) == want);
            }
        }
    }
}

TEST_CASE("conv sim: records that disagree with the multiplier array are rejected") {
    spec s;
    s.kh = s.kw = 1;
    auto bytes = compile(build(s)).bytes;
    const vnnx::format::model_view v(bytes, "x.vnnx");
    const auto om_at = v.node(0).output_multiplier.value;
    // Corrupt output_multiplier[0]: the simulator must name the node and the channel.
    vnnx::store_le<std::int32_t>(bytes.data() + om_at, 12345);
    std::vector<std::byte> in(static_cast<std::size_t>(s.C * s.H * s.W));
    try {
        (void)simulate(bytes, in);
        FAIL("a corrupted multiplier array was accepted");
    } catch (const vnnx::error& e) {
        const std::string m = e.what();
        CHECK(m.find("node 0") != std::string::npos);
        CHECK(m.find("output channel 0") != std::string::npos);
    }
}

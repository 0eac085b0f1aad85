#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/sim/kernels/conv.hpp>
#include <vnnx/sim/kernels/fc.hpp>

namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

namespace {
k::requant_params uniform_rq(int channels, std::uint16_t om, int o, std::int64_t c, int lo = -128, int hi = 127) {
    k::requant_params rq;
    rq.multiplier.assign(channels, om);
    rq.shift.assign(channels, static_cast<std::uint8_t>(o));
    rq.constant.assign(channels, c);
    rq.act_min = lo;
    rq.act_max = hi;
    return rq;
}
std::vector<std::uint8_t> bytes(std::initializer_list<int> v) {
    std::vector<std::uint8_t> out;
    for (int i : v) out.push_back(static_cast<std::uint8_t>(i & 0xFF));
    return out;
}
}  // namespace

TEST_CASE("requantize: int64 product, floor shift, clamp") {
    // (100*3 + 0) >> 8 = 300 >> 8 = 1
    CHECK(k::requantize(100, 3, 0, 8, -128, 127) == 1);
    // floor, not truncation: (-1*1) >> 8 = -1
    CHECK(k::requantize(-1, 1, 0, 8, -128, 127) == 0xFF);
    // rounding constant 2^(o-1): (383 + 128) >> 8 = 1, (384 + 128) >> 8 = 2
    CHECK(k::requantize(383, 1, 128, 8, -128, 127) == 1);
    CHECK(k::requantize(384, 1, 128, 8, -128, 127) == 2);
    // no overflow: acc*om = (2^31-1)*65535 = 2^47 - 2^31 - 65535 needs 47 bits; with c = -2^47
    // the sum is -2^31 - 65535, and >> 32 floors it to -1
    CHECK(k::requantize(2147483647, 65535, k::c_min, 32, -128, 127) == 0xFF);
    // c = 2^47 - 1: sum = 2^48 - 2^31 - 65536 -> >> 32 = 65535 -> clamped to 127; with a wide
    // uint8 bound it is 255
    CHECK(k::requantize(2147483647, 65535, k::c_max, 32, 0, 255) == 255);
    CHECK(k::requantize(-2147483647 - 1, 65535, k::c_max, 32, -128, 127) == 0);  // 2^31 - 1 >> 32
    CHECK(k::requantize(2147483647, 65535, 0, 32, -128, 127) == 127);            // clamped high
    CHECK(k::requantize(-2147483647 - 1, 65535, 0, 32, -128, 127) == 0x80);      // clamped low
    CHECK(k::requantize(5000, 65535, 0, 24, 0, 255) == 19);                      // 327675000 >> 24 = 19
    CHECK(k::requantize(5000, 65535, std::int64_t{200} << 24, 24, 0, 255) == 219);
    CHECK(k::requantize(5000, 65535, std::int64_t{300} << 24, 24, 0, 255) == 255);
    CHECK(k::requantize(10, 2, 0, 16, 5, 9) == 5);                               // activation floor
    CHECK(k::shift_from_index(0) == 8);
    CHECK(k::shift_from_index(3) == 32);
}

TEST_CASE("conv scalar: a hand-computed 1x1 convolution") {
    // C=2, 1x2 image, K=2. int8 x: c0 = [3, -4], c1 = [10, 2]; w0 = [1, 2], w1 = [-3, 5]
    // acc k0: [3+20, -4+4] = [23, 0]; k1: [-9+50, 12+10] = [41, 22]
    k::conv_shape s;
    s.channels = 2, s.height = 1, s.width = 2, s.kernels = 2;
    const std::vector<std::int8_t> w{1, 2, -3, 5};
    k::requant_params rq;
    rq.multiplier = {256, 512};
    rq.shift = {8, 16};
    rq.constant = {-5, std::int64_t{1} << 15};  // k1: (acc*512 + 32768) >> 16 = round(acc/128)
    const auto x = bytes({3, -4, 10, 2});
    for (isa_kind i : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi}) {
        if (!vnnx::sim::isa_supported(i)) continue;
        std::vector<std::uint8_t> y(4);
        k::conv2d(s, w, rq, i).run(x, y);
        // k0: (23*256 - 5) >> 8 = 22, (0 - 5) >> 8 = -1; k1: (41*512+32768)>>16 = 0, 22 -> 0
        CHECK(y == bytes({22, -1, 0, 0}));
    }
    // uint8 input: the same bytes read as 3, 252, 10, 2
    s.input_signed = false;
    std::vector<std::uint8_t> y(4);
    k::conv2d(s, w, rq, isa_kind::scalar).run(x, y);
    // k0: 3+20 = 23 -> 22; 252+4 = 256 -> (65536-5)>>8 = 255 -> clamp 127
    CHECK(y[0] == 22);
    CHECK(y[1] == 127);
}

TEST_CASE("conv scalar: strided, dilated 3x3 against a hand sum") {
    // one channel 5x5 ramp 0..24 (int8), kernel of ones with the centre 2, dilation 2, stride 1:
    // only output (0,0): taps at rows/cols 0,2,4.
    k::conv_shape s;
    s.height = s.width = 5, s.kernel_h = s.kernel_w = 3, s.dilation_h = s.dilation_w = 2;
    std::vector<std::uint8_t> x(25);
    for (int i = 0; i < 25; ++i) x[i] = static_cast<std::uint8_t>(i);
    std::vector<std::int8_t> w(9, 1);
    w[4] = 2;
    // sum of x at (0,0),(0,2),(0,4),(2,0),(2,2)*2,(2,4),(4,0),(4,2),(4,4) = 0+2+4+10+24+14+20+22+24 = 120
    const auto rq = uniform_rq(1, 1, 8, 120 << 8);  // (120 + 120*256) >> 8 = 120
    std::vector<std::uint8_t> y(1);
    k::conv2d(s, w, rq, isa_kind::scalar).run(x, y);
    CHECK(y[0] == 120);
    // stride 2, no dilation, 3x3 ones: outputs at (0,0),(0,2),(2,0),(2,2)
    s.dilation_h = s.dilation_w = 1, s.stride_h = s.stride_w = 2;
    w.assign(9, 1);
    const auto rq1 = uniform_rq(1, 256, 8, 0);
    y.assign(4, 0);
    k::conv2d(s, w, rq1, isa_kind::scalar).run(x, y);
    // window sums: 9*centre: centres 6, 8, 16, 18 -> 54, 72, 144 (clamped 127), 162 (127)
    CHECK(y == bytes({54, 72, 127, 127}));
}

TEST_CASE("conv scalar: depthwise uses each channel's own taps") {
    k::conv_shape s;
    s.channels = s.kernels = s.groups = 2, s.height = 1, s.width = 3, s.kernel_w = 2;
    const auto x = bytes({1, 2, 3, -1, -2, -3});
    const std::vector<std::int8_t> w{10, 1, -1, 100};
    std::vector<std::uint8_t> y(4);
    k::conv2d(s, w, uniform_rq(2, 256, 8, 0), isa_kind::scalar).run(x, y);
    // c0: 10*1+2 = 12, 10*2+3 = 23; c1: 1-200 = -199 -> -128, 2-300 -> -128
    CHECK(y == bytes({12, 23, -128, -128}));
}

TEST_CASE("fully connected: rows of a token-wise FC, hand-computed") {
    k::fc_shape s;
    s.in_features = 3, s.out_features = 2, s.rows = 2;
    const std::vector<std::int8_t> w{1, 2, 3, -1, 0, 1};
    const auto x = bytes({1, 1, 1, 5, -5, 2});
    for (isa_kind i : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi}) {
        if (!vnnx::sim::isa_supported(i)) continue;
        std::vector<std::uint8_t> y(4);
        k::fully_connected(s, w, uniform_rq(2, 256, 8, 0), i).run(x, y);
        // row0: 6, 0; row1: 5-10+6 = 1, -5+2 = -3
        CHECK(y == bytes({6, 0, 1, -3}));
    }
}

TEST_CASE("conv: bad shapes and parameters are clear errors") {
    k::conv_shape s;
    s.channels = 4, s.height = s.width = 3, s.kernels = 4, s.kernel_h = s.kernel_w = 3;
    const std::vector<std::int8_t> w(4 * 4 * 9);
    const auto rq = uniform_rq(4, 1, 8, 0);
    CHECK_NOTHROW(k::conv2d(s, w, rq, isa_kind::scalar, "node 3"));
    auto bad = s;
    bad.groups = 2;
    CHECK_THROWS_WITH(k::conv2d(bad, w, rq, isa_kind::scalar, "node 3"), Catch::Contains("node 3: groups 2"));
    bad = s;
    bad.dilation_h = 2;
    CHECK_THROWS_WITH(k::conv2d(bad, w, rq, isa_kind::scalar, "node 3"), Catch::Contains("does not fit"));
    {
        // A gap fill that is not a byte value: named, and nothing written.
        const k::conv2d c(s, w, rq, isa_kind::scalar, "node 3");
        const std::vector<std::uint8_t> in(36);
        std::vector<std::uint8_t> out(4, 0xA5);
        k::conv_workspace ws;
        CHECK_THROWS_WITH(c.run(in, out, k::conv_output_pitch{1, 1, 256}, ws), Catch::Contains("node 3: gap fill 256"));
        CHECK_THROWS_WITH(c.run(in, out, k::conv_output_pitch{1, 1, -2}, ws), Catch::Contains("node 3: gap fill -2"));
        CHECK(out == std::vector<std::uint8_t>(4, 0xA5));
        // One pixel per plane: no gaps, so a fill changes nothing.
        std::vector<std::uint8_t> plain(4, 0xA5);
        c.run(in, plain, k::conv_output_pitch{1, 1, -1}, ws);
        c.run(in, out, k::conv_output_pitch{1, 1, 7}, ws);
        CHECK(out == plain);
    }
    CHECK_THROWS_WITH(k::conv2d(s, std::vector<std::int8_t>(5), rq, isa_kind::scalar, "node 3"),
                      Catch::Contains("expected 144 weights"));
    auto rq2 = rq;
    rq2.shift[2] = 12;
    CHECK_THROWS_WITH(k::conv2d(s, w, rq2, isa_kind::scalar, "node 3"),
                      Catch::Contains("output channel 2: shift 12"));
    rq2 = rq;
    rq2.constant[1] = k::c_max + 1;
    CHECK_THROWS_WITH(k::conv2d(s, w, rq2, isa_kind::scalar), Catch::Contains("48-bit"));
    rq2 = rq;
    rq2.act_max = 200;
    CHECK_THROWS_WITH(k::conv2d(s, w, rq2, isa_kind::scalar), Catch::Contains("activation bounds"));
    rq2 = rq;
    rq2.multiplier.pop_back();
    CHECK_THROWS_WITH(k::conv2d(s, w, rq2, isa_kind::scalar), Catch::Contains("one multiplier"));
    bad = s;
    bad.channels = 65537 / 9 + 1;
    bad.kernels = 1;
    try {
        k::conv2d(bad, std::vector<std::int8_t>(bad.weight_size()), uniform_rq(1, 1, 8, 0), isa_kind::scalar);
        FAIL("no error");
    } catch (const vnnx::error& e) {
        CHECK(e.kind() == vnnx::error_kind::limit);
    }
    const k::conv2d ok(s, w, rq, isa_kind::scalar);
    std::vector<std::uint8_t> y(4), x(35);
    CHECK_THROWS_WITH(ok.run(x, y), Catch::Contains("input has 35 bytes, expected 36"));
    x.resize(36);
    y.resize(3);
    CHECK_THROWS_WITH(ok.run(x, y), Catch::Contains("output has 3 bytes, expected 4"));
}

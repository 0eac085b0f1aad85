// sim/io.hpp and report/compare.hpp in process: layout conversion, io checks, the SDK's
// pseudo-random input, the agreement rule.
#include <random>

#include <catch2/catch.hpp>

#include "vnnx/report/compare.hpp"
#include "vnnx/sim/io.hpp"

using vnnx::dtype;
using vnnx::ndarray;
namespace sim = vnnx::sim;

namespace {
ndarray counting(dtype t, std::vector<std::int64_t> shape) {
    ndarray a(t, std::move(shape));
    for (std::size_t i = 0; i < a.element_count(); ++i) a.set(i, static_cast<std::int64_t>(i));
    return a;
}
vnnx::format::io_tensor io_of(std::vector<std::int32_t> cf_shape, std::int32_t calc_type) {
    vnnx::format::io_tensor io;
    io.shape = std::move(cf_shape);
    io.type = calc_type;
    io.scale = 0.5f;
    io.zero_point = 3;
    io.length = 1;
    for (auto d : io.shape) io.length *= static_cast<std::uint64_t>(d);
    return io;
}
}  // namespace

TEST_CASE("io: NHWC to channels first moves C in front of H and W") {
    const ndarray a = counting(dtype::int16, {1, 2, 3, 4});  // value = ((h*3)+w)*4+c
    const ndarray cf = sim::to_channels_first(a);
    REQUIRE(cf.shape == std::vector<std::int64_t>{1, 4, 2, 3});
    for (int c = 0; c < 4; ++c)
        for (int h = 0; h < 2; ++h)
            for (int w = 0; w < 3; ++w)
                CHECK(cf.get<int>(static_cast<std::size_t>((c * 2 + h) * 3 + w)) == (h * 3 + w) * 4 + c);
    CHECK(sim::to_channels_last(cf) == a);
    // Rank 5: leading axes stay outside; rank 2 is unchanged.
    const ndarray r5 = counting(dtype::int8, {2, 1, 2, 2, 3});
    CHECK(sim::to_channels_first(r5).shape == std::vector<std::int64_t>{2, 1, 3, 2, 2});
    CHECK(sim::to_channels_last(sim::to_channels_first(r5)) == r5);
    const ndarray r2 = counting(dtype::int8, {3, 5});
    CHECK(sim::to_channels_first(r2) == r2);
}

TEST_CASE("io: io_bytes checks dtype and shape, accepts a missing batch, quantizes float") {
    const auto io = io_of({1, 3, 2, 2}, 1);  // int8, NCHW 1x3x2x2 = NHWC 1x2x2x3
    const ndarray nhwc = counting(dtype::int8, {1, 2, 2, 3});
    const auto bytes = sim::io_bytes(io, nhwc, sim::io_layout::tflite, "x.npy");
    REQUIRE(bytes.size() == 12);
    CHECK(static_cast<int>(bytes[1]) == 3);   // c=0, h=0, w=1 is NHWC element 3
    CHECK(static_cast<int>(bytes[4]) == 1);   // c=1, h=0, w=0 is NHWC element 1
    ndarray no_batch = nhwc;
    no_batch.shape = {2, 2, 3};
    CHECK(sim::io_bytes(io, no_batch, sim::io_layout::tflite, "x.npy") == bytes);
    // --layout vnnx: the array is already channels first.
    ndarray cf = nhwc;
    cf.shape = {1, 3, 2, 2};
    CHECK(sim::io_bytes(io, cf, sim::io_layout::vnnx, "x.npy") == cf.data);
    CHECK_THROWS_WITH(sim::io_bytes(io, cf, sim::io_layout::tflite, "x.npy"),
                      Catch::Contains("x.npy: shape (1, 3, 2, 2) does not match the model's (1, 2, 2, 3)"));
    CHECK_THROWS_WITH(sim::io_bytes(io, counting(dtype::int16, {1, 2, 2, 3}), sim::io_layout::tflite, "x.npy"),
                      Catch::Contains("x.npy: dtype int16 does not match the model's int8"));
    // A float array (model with float io folded away) is quantized: round(x / 0.5) + 3, clamped.
    ndarray f(dtype::float32, {1, 2, 2, 3});
    for (std::size_t i = 0; i < 12; ++i) f.set(i, static_cast<float>(i) * 0.75f - 70.0f);
    const auto q = sim::io_bytes(io, f, sim::io_layout::tflite, "f");
    CHECK(static_cast<std::int8_t>(q[0]) == -128);   // -140 + 3 clamps
    CHECK(static_cast<std::int8_t>(q[11]) == -121);  // NHWC 11 = (h1, w1, c2) = CF 11: -123.5 rounds away to -124, + 3
}

TEST_CASE("io: io_array turns channels-first bytes into the requested layout") {
    const auto io = io_of({1, 2, 1, 3}, 0);  // uint8
    std::vector<std::byte> bytes(6);
    for (std::size_t i = 0; i < 6; ++i) bytes[i] = static_cast<std::byte>(10 + i);
    const ndarray t = sim::io_array(io, bytes, sim::io_layout::tflite, "o");
    CHECK(t.type == dtype::uint8);
    CHECK(t.shape == std::vector<std::int64_t>{1, 1, 3, 2});
    CHECK(t.get<int>(0) == 10);  // w=0, c=0
    CHECK(t.get<int>(1) == 13);  // w=0, c=1
    CHECK(t.get<int>(2) == 11);  // w=1, c=0
    CHECK(sim::io_array(io, bytes, sim::io_layout::vnnx, "o").shape == std::vector<std::int64_t>{1, 2, 1, 3});
    CHECK_THROWS_WITH(sim::io_array(io, std::span<const std::byte>(bytes).first(5), sim::io_layout::vnnx, "o"),
                      Catch::Contains("o: 5 bytes for a tensor of 6 bytes"));
}

TEST_CASE("io: the default input is NumPy's seed-42 randint(0, 256), cast to the input type") {
    // np.random.seed(42); np.random.randint(0, 256, 6) == [102, 179, 92, 14, 106, 71]
    std::mt19937 gen(sim::default_input_seed);
    const ndarray u = sim::random_array(gen, dtype::uint8, {2, 3});
    const std::vector<int> want{102, 179, 92, 14, 106, 71};
    for (std::size_t i = 0; i < 6; ++i) CHECK(u.get<int>(i) == want[i]);
    std::mt19937 gen2(sim::default_input_seed);
    const ndarray s = sim::random_array(gen2, dtype::int8, {6});
    CHECK(s.get<int>(1) == 179 - 256);  // int8 wraps as NumPy's astype does
    CHECK(s.get<int>(0) == 102);
}

TEST_CASE("compare: exact, within-1 and max counts decide agreement") {
    ndarray a(dtype::int8, {1000}), b(dtype::int8, {1000});
    auto d = vnnx::report::compare_arrays(a, b, "t");
    CHECK(d.identical());
    CHECK(d.agree());
    for (std::size_t i = 0; i < 6; ++i) b.set(i * 100 + 5, 1);
    d = vnnx::report::compare_arrays(a, b, "t");
    CHECK(d.exact == 994);
    CHECK(d.within1 == 1000);
    CHECK(d.max_diff == 1);
    CHECK(d.first_diff == 5);
    CHECK(d.agree());
    b.set(999, -2);
    d = vnnx::report::compare_arrays(a, b, "t");
    CHECK(d.max_diff == 2);
    CHECK(d.within1 == 999);
    CHECK_FALSE(d.agree());
    // Different dtypes compare by value; different sizes are an error.
    ndarray w(dtype::int16, {1000});
    CHECK(vnnx::report::compare_arrays(a, w, "t").identical());
    CHECK_THROWS_WITH(vnnx::report::compare_arrays(a, ndarray(dtype::int8, {3}), "t"),
                      Catch::Contains("t: 1000 elements against 3 in the reference"));
}

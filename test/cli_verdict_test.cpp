// The per-node verdict of `vnnx compare`: the tolerance a lookup table gives each expected value,
// and the count of elements beyond it.
#include <array>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "../examples/vnnx/node_verdict.hpp"

using namespace vnnx::cli::verdict;

TEST_CASE("verdict: a table's step next to each expected value") {
    // int8 table: flat at -128 up to entry 99, then steps of 5 up to entry 149, flat at 122 after.
    std::array<std::int32_t, 256> T{};
    for (int j = 0; j < 256; ++j) T[static_cast<std::size_t>(j)] = j < 100 ? -128 : j < 150 ? std::min(122, -128 + 5 * (j - 99)) : 122;
    const auto t = from_tables({T});
    const auto at = [&](int v) { return t.at[static_cast<std::uint8_t>(static_cast<std::int8_t>(v))]; };
    CHECK(at(-128) == 5);  // entry 99 holds -128 and its next step is 5
    CHECK(at(-123) == 5);
    CHECK(at(122) == 5);   // the last step into the plateau
    CHECK(at(0) == 5);     // a value no entry holds: the table's largest step
    // A table of steps of 1 allows 1 everywhere.
    std::array<std::int32_t, 256> I{};
    for (int j = 0; j < 256; ++j) I[static_cast<std::size_t>(j)] = j - 128;
    const auto one = from_tables({I});
    for (int v = -128; v < 128; ++v) CHECK(one.at[static_cast<std::uint8_t>(static_cast<std::int8_t>(v))] == 1);
}

TEST_CASE("verdict: elements beyond their allowance are counted") {
    vnnx::ndarray want(vnnx::dtype::int8, {4}), got(vnnx::dtype::int8, {4});
    const std::int8_t w[4] = {-128, 0, 10, 122}, g[4] = {-124, 1, 13, 122};
    for (std::size_t i = 0; i < 4; ++i) {
        want.data[i] = static_cast<std::byte>(w[i]);
        got.data[i] = static_cast<std::byte>(g[i]);
    }
    tolerance plain;  // 1 LSB everywhere
    const auto j1 = judge(got, want, plain);
    CHECK(j1.beyond == 2);  // 4 off at -128, 3 off at 10
    CHECK(j1.worst_excess_diff == 4);
    CHECK(j1.worst_allowed == 1);
    tolerance wide;
    wide.at[static_cast<std::uint8_t>(-128)] = 5;
    const auto j2 = judge(got, want, wide);
    CHECK(j2.beyond == 1);  // only the 3 off at 10 remains
    CHECK(j2.worst_excess_diff == 3);
}

// Simulator vs reference interpreter on single-convolution models: every variant within 1 LSB,
// the exact-match rate reported.
#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"

using namespace conv_test;

namespace {
void check_case(const spec& s, const std::string& name) {
    const auto c = compare_with_reference(s);
    INFO(name << ": " << c.exact << "/" << c.total << " exact (" << 100.0 * c.exact_rate() << "%), max diff "
              << c.max_diff);
    WARN(name << ": exact-match rate " << 100.0 * c.exact_rate() << "% of " << c.total << ", max diff " << c.max_diff);
    CHECK(c.total > 0);
    CHECK(c.max_diff <= 1);
    CHECK(c.exact_rate() >= 0.95);
}
}  // namespace

TEST_CASE("conv sim: ordinary 3x3 stride 1, per-channel, NONE") {
    spec s;
    check_case(s, "conv3x3 s1");
}

// Built with single_include/ as the only project include path: proves the generated header
// stands alone and behaves like the split headers.
#include <vnnx.hpp>

#include <catch2/catch.hpp>

TEST_CASE("single header: little-endian helpers round trip") {
    std::byte buf[8]{};
    vnnx::store_le<std::uint32_t>(buf, 0x1ABE11EDu);
    CHECK(std::to_integer<int>(buf[0]) == 0xED);
    CHECK(vnnx::load_le<std::uint32_t>(buf) == 0x1ABE11EDu);
}

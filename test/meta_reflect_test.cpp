// meta/: fixed strings, compile-time sets, reflection (sizes, offsets, field lists), unions.
#include <array>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <catch2/catch.hpp>

#include <vnnx/meta/fixed_string.hpp>
#include <vnnx/meta/reflect.hpp>
#include <vnnx/meta/set.hpp>
#include <vnnx/meta/struct.hpp>
#include <vnnx/meta/union.hpp>

namespace {
using namespace vnnx::meta;

struct inner {
    VNNX_META_STRUCT(inner, (std::uint32_t, a), (std::uint32_t, b));
};
using i16x3 = std::array<std::int16_t, 3>;
struct sample {
    VNNX_META_STRUCT(sample, (std::uint8_t, tag), (i16x3, triple), (inner, nested), (double, d));
};
struct member_a {
    static constexpr std::string_view member_name = "member_a";
    VNNX_META_STRUCT(member_a, (std::int32_t, x));
};
struct member_b {
    static constexpr std::string_view member_name = "member_b";
    VNNX_META_STRUCT(member_b, (std::int64_t, y), (i16x3, z));
};
using ab = union_of<member_a, member_b>;

// Serialized sizes have no padding, unlike sizeof.
static_assert(serialized_size_v<inner> == 8);
static_assert(serialized_size_v<sample> == 1 + 6 + 8 + 8 && sizeof(sample) > serialized_size_v<sample>);
static_assert(offset_of_v<sample, "tag"> == 0 && offset_of_v<sample, "triple"> == 1);
static_assert(offset_of_v<sample, "nested"> == 7 && offset_of_v<sample, "d"> == 15);
static_assert(field_size_v<sample, "triple"> == 6 && field_size_v<sample, "nested"> == 8);
static_assert(field_count_v<sample> == 4 && fields_v<sample>[3].name == "d");

static_assert(ab::size == 14 && ab::member_count == 2 && ab::names[1] == "member_b");
static_assert(ab::index_of_name("member_b") == 1 && ab::index_of_name("nope") == 2);
static_assert(ab::holds<member_a> && !ab::holds<inner>);

static_assert(fixed_string("abc").size() == 3 && fixed_string("abc") == fixed_string("abc"));
static_assert(!(fixed_string("abc") == fixed_string("abd")));

using acts = value_set<0, 1, 3>;
static_assert(acts::size == 3 && acts::contains(3) && !acts::contains(2));
using types = set<int, float>;
static_assert(types::contains<float> && !types::contains<double>);
static_assert(types::index_of<int> == 0 && types::index_of<float> == 1 && types::index_of<char> == 2);
}  // namespace

TEST_CASE("meta: field lists give names, offsets and sizes in declaration order") {
    const auto& f = fields_v<sample>;
    REQUIRE(f.size() == 4);
    CHECK(f[0].name == "tag");
    CHECK(f[1].offset == 1);
    CHECK(f[1].size == 6);
    CHECK(f[2].name == "nested");
    CHECK(f[3].offset == 15);
    CHECK(f[3].size == 8);
}

TEST_CASE("meta: accessors read and write the real members") {
    sample s{};
    int visited = 0;
    for_each_field<sample>([&](std::string_view name, auto tag, auto get) {
        if constexpr (std::is_same_v<typename decltype(tag)::type, double>) {
            if (name == "d") get(s) = 2.5;
        }
        ++visited;
    });
    CHECK(visited == 4);
    CHECK(s.d == 2.5);
}

TEST_CASE("meta: value sets iterate their elements in order") {
    int sum = 0, count = 0;
    acts::for_each([&](int v) { sum = sum * 10 + v, ++count; });
    CHECK(count == 3);
    CHECK(sum == 13);
}

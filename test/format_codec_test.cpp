// format/codec: every record type and every union member written and read back, byte order
// and zero-filled union tails checked.
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/format/codec.hpp>
#include <vnnx/format/enums.hpp>
#include <vnnx/format/layout_asserts.hpp>
#include <vnnx/format/records.hpp>

namespace {
using namespace vnnx;
using namespace vnnx::format;

// Fills every scalar of v with a distinct non-zero value derived from `seed`.
template <class T>
void fill(T& v, std::uint32_t& seed) {
    if constexpr (std::is_same_v<T, obj_off_t>) {
        v.value = 0x0100000000ull * (seed % 7 + 1) + seed * 8;
        ++seed;
    } else if constexpr (std::is_floating_point_v<T>) {
        v = static_cast<T>(seed++) + 0.25f;
    } else if constexpr (std::is_arithmetic_v<T>) {
        v = static_cast<T>(seed++ * 37 + 1);
    } else if constexpr (meta::is_std_array<T>::value) {
        for (auto& e : v) fill(e, seed);
    } else if constexpr (meta::reflected<T>) {
        meta::for_each_field<T>([&](std::string_view, auto, auto get) { fill(get(v), seed); });
    }
    // union_storage is left alone here: union members are filled one by one below.
}

template <class T>
void check_round_trip(const T& v) {
    const auto bytes = to_bytes(v);
    CHECK(bytes.size() == meta::serialized_size_v<T>);
    const T back = decode<T>(bytes.data());
    CHECK(back == v);
    CHECK(to_bytes(back) == bytes);
}
}  // namespace

TEST_CASE("codec: each record type round-trips") {
    std::uint32_t seed = 1;
    vnnx_graph_t g{};
    fill(g, seed);
    check_round_trip(g);
    vnnx_subgraph_node_t n{};
    fill(n, seed);
    check_round_trip(n);
    vnnx_layer_t l{};
    fill(l, seed);
    check_round_trip(l);
    vnnx_tensor_t t{};
    fill(t, seed);
    check_round_trip(t);
    indirect_ptr_t p{};
    fill(p, seed);
    check_round_trip(p);
}

TEST_CASE("codec: every node and layer union member round-trips and zero-fills the tail") {
    std::uint32_t seed = 100;
    std::size_t members = 0;
    const auto one = [&](auto record_tag, auto member_tag) {
        using R = typename decltype(record_tag)::type;
        using M = typename decltype(member_tag)::type;
        INFO(R::record_name << " member " << M::member_name);
        M m{};
        fill(m, seed);
        R rec{};
        fill(rec, seed);
        rec.options.bytes.fill(std::byte{0xAB});  // stale bytes: set() must clear them
        rec.options.set(m);
        CHECK(rec.options.template get<M>() == m);
        const auto bytes = to_bytes(rec);
        constexpr std::size_t at = meta::offset_of_v<R, "options">;
        constexpr std::size_t msize = meta::serialized_size_v<M>;
        for (std::size_t i = at + msize; i < bytes.size(); ++i) REQUIRE(bytes[i] == std::byte{0});
        const R back = decode<R>(bytes.data());
        CHECK(back == rec);
        CHECK(back.options.template get<M>() == m);
        ++members;
    };
    node_union::for_each_member([&](auto m) { one(std::type_identity<vnnx_subgraph_node_t>{}, m); });
    layer_union::for_each_member([&](auto m) { one(std::type_identity<vnnx_layer_t>{}, m); });
    CHECK(members == 42);
}

TEST_CASE("codec: fields are little-endian at their firmware offsets") {
    vnnx_tensor_t t{};
    t.type = 1;
    t.shape = {1, 3, 8, 8, 0, 0};
    t.dims = 4;
    t.scale = 0.5f;
    t.scale_f16 = 32768;
    t.multiplier = -1;
    t.indirect.offset = 1352;
    t.direct = obj_off_t{0x0102030405060708ull};
    const auto b = to_bytes(t);
    CHECK(load_le<std::int32_t>(b.data() + 8) == 3);
    CHECK(load_le<std::uint32_t>(b.data() + 40) == 0x3F000000u);
    CHECK(load_le<std::int32_t>(b.data() + 52) == -1);
    CHECK(load_le<std::uint32_t>(b.data() + 64) == 1352);
    CHECK(std::to_integer<int>(b[68]) == 0x08);  // 64-bit field at an offset that is 4 mod 8
    CHECK(std::to_integer<int>(b[75]) == 0x01);

    vnnx_layer_t l{};  // default offsets are absent: all ones
    const auto lb = to_bytes(l);
    for (std::size_t i = 128; i < 136; ++i) CHECK(lb[i] == std::byte{0xFF});

    layer_options::Conv2DOptions c{};
    c.tile_count = 7;
    l.type = 4;
    l.options.set(c);
    CHECK(load_le<std::uint32_t>(to_bytes(l).data() + 296) == 7);  // vnnx-format.md §3.5: abs 296
}

TEST_CASE("codec: emit and read_record check their bounds") {
    std::vector<std::byte> buf(100);
    vnnx_graph_t g{};
    g.magic = magic;
    emit(buf, 16, g);
    CHECK(read_record<vnnx_graph_t>(buf, 16, "buf", "graph header").magic == magic);
    REQUIRE_THROWS_AS(emit(buf, 17, g), vnnx::error);
    REQUIRE_THROWS_WITH(read_record<vnnx_graph_t>(buf, 17, "x.vnnx", "graph header"),
                        Catch::Contains("x.vnnx: graph header at offset 17 needs 84 bytes"));
    std::vector<std::byte> grown;
    append(grown, g);
    append(grown, indirect_ptr_t{1, 2});
    CHECK(grown.size() == 92);
    CHECK(load_le<std::uint32_t>(grown.data() + 88) == 2);
}

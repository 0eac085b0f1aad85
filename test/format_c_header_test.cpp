// format/c_check against a whole firmware-style C header: every record, every field, all 42
// union members, with the one macro a firmware host would write. The checks are
// static_asserts: this unit compiling is the test; the cases below state the facts again at
// run time and show that a wrong layout is seen.
#include <cstddef>
#include <cstdint>

#include <catch2/catch.hpp>

extern "C" {
#include "firmware_types.h"
}

#include <vnnx/format.hpp>

VNNX_CHECK_C_ALL(vnnx_graph_t, vnnx_subgraph_node_t, vnnx_layer_t, vnnx_tensor_t, indirect_ptr_t);

// The finer-grained forms, one record or member at a time.
VNNX_CHECK_C_RECORD(vnnx_tensor_t, vnnx_tensor_t);
VNNX_CHECK_C_LAYER_OPTION(vnnx_layer_t, ResizeOptions);
VNNX_CHECK_C_NODE_OPTION(vnnx_subgraph_node_t, Conv2DOptions);
VNNX_CHECK_C_LAYER_OPTIONS(vnnx_layer_t);
VNNX_CHECK_C_NODE_OPTIONS(vnnx_subgraph_node_t);

namespace {
// A struct that differs in one field's place: the generated list must tell it apart.
extern "C" typedef struct VNNX_FW_PACKED {
    uint32_t offset;
    uint32_t base_ptr_offset_from_sp_start;
} swapped_indirect_t;

template <class C>
constexpr bool indirect_matches() {
    return offsetof(C, base_ptr_offset_from_sp_start) ==
               vnnx::meta::offset_of_v<vnnx::format::indirect_ptr_t, "base_ptr_offset_from_sp_start"> &&
           offsetof(C, offset) == vnnx::meta::offset_of_v<vnnx::format::indirect_ptr_t, "offset">;
}
}  // namespace

TEST_CASE("c_check: the firmware-style header has the VNNX sizes, unions at the VNNX offsets") {
    CHECK(sizeof(vnnx_graph_t) == 84);
    CHECK(sizeof(vnnx_subgraph_node_t) == 492);
    CHECK(sizeof(vnnx_layer_t) == 300);
    CHECK(sizeof(vnnx_tensor_t) == 76);
    CHECK(offsetof(vnnx_subgraph_node_t, Conv2DOptions) == 316);
    CHECK(offsetof(vnnx_layer_t, SliceOptions) == 136);
    CHECK(offsetof(vnnx_subgraph_node_t, TransposeOptions.out_rows_at_once) == 316 + 16);  // after permutation[3], out_maps_at_once
    CHECK(vnnx::format::layer_union::member_count == 28);
    CHECK(vnnx::format::node_union::member_count == 14);
}

TEST_CASE("c_check: a struct with two fields swapped does not match") {
    STATIC_REQUIRE(indirect_matches<indirect_ptr_t>());
    STATIC_REQUIRE_FALSE(indirect_matches<swapped_indirect_t>());
}

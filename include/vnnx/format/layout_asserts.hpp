#pragma once
// The derived layout checked against the numbers measured on the firmware header
// (vnnx-format.md §3: offsetof/sizeof with GCC and Clang on several targets). A change to a
// field list that moves anything fails to compile here. Every field offset is asserted in
// test/format_offsets_test.cpp.
#include "vnnx/format/records.hpp"

namespace vnnx::format {

template <class R>
inline constexpr std::size_t record_size_v = meta::serialized_size_v<R>;

static_assert(record_size_v<vnnx_graph_t> == 84);
static_assert(record_size_v<vnnx_subgraph_node_t> == 492);
static_assert(record_size_v<vnnx_layer_t> == 300);
static_assert(record_size_v<vnnx_tensor_t> == 76);
static_assert(record_size_v<indirect_ptr_t> == 8);

static_assert(meta::offset_of_v<vnnx_subgraph_node_t, "options"> == 316 && node_union::size == 176);
static_assert(meta::offset_of_v<vnnx_layer_t, "options"> == 136 && layer_union::size == 164);
static_assert(node_union::member_count == 14 && layer_union::member_count == 28);
static_assert(record_size_v<node_options::Conv2DOptions> == node_union::size);
static_assert(record_size_v<layer_options::Conv2DOptions> == layer_union::size);

// Fields the loader reads directly (vnnx-format.md §10.2).
static_assert(meta::offset_of_v<vnnx_graph_t, "magic"> == 76 && meta::offset_of_v<vnnx_graph_t, "sparsity"> == 80);
static_assert(meta::offset_of_v<vnnx_subgraph_node_t, "tensors"> == 260);
static_assert(meta::offset_of_v<vnnx_tensor_t, "indirect"> == 60 && meta::offset_of_v<vnnx_tensor_t, "direct"> == 68);

// Every record is a whole number of 4-byte words, so concatenated tables stay aligned.
static_assert(record_size_v<vnnx_graph_t> % 4 == 0 && record_size_v<vnnx_subgraph_node_t> % 4 == 0 &&
              record_size_v<vnnx_layer_t> % 4 == 0 && record_size_v<vnnx_tensor_t> % 4 == 0);

}  // namespace vnnx::format

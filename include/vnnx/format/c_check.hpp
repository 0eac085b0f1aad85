#pragma once
// Firmware-host check: a firmware build that has its own copy of vnnx-types.h proves, at
// compile time, that its structs have exactly our layout. One line checks everything:
//
//   VNNX_CHECK_C_ALL(vnnx_graph_t, vnnx_subgraph_node_t, vnnx_layer_t, vnnx_tensor_t, indirect_ptr_t);
//
// or one record or union member at a time:
//
//   VNNX_CHECK_C_RECORD(my_tensor_t, vnnx_tensor_t);
//   VNNX_CHECK_C_LAYER_OPTION(my_layer_t, SliceOptions);
//   VNNX_CHECK_C_NODE_OPTION(my_node_t, Conv2DOptions);
//
// Each field's offsetof and size must equal ours, and sizeof the whole struct our serialized
// size. The checked field names come from the field lists of records.hpp, so a field added
// there is checked here without an edit. VNNX_CHECK_C_STRUCT and VNNX_CHECK_C_UNION_MEMBER
// check a subset named by hand. Only the standard library is needed.
#include <cstddef>

#include "vnnx/meta/pp.hpp"
#include "vnnx/meta/reflect.hpp"
#include "vnnx/format/records.hpp"

#define VNNX_CHECK_C_UNPAREN_(...) __VA_ARGS__

// One field: (c_type, ours) and a field name.
#define VNNX_CHECK_C_FIELD_(args, field) VNNX_CHECK_C_FIELD_I_(VNNX_CHECK_C_UNPAREN_ args, field)
#define VNNX_CHECK_C_FIELD_I_(...) VNNX_CHECK_C_FIELD_J_(__VA_ARGS__)
#define VNNX_CHECK_C_FIELD_J_(c_type, ours, field)                                                  \
    static_assert(offsetof(c_type, field) == ::vnnx::meta::offset_of_v<ours, #field>,               \
                  "offsetof(" #c_type ", " #field ") differs from the VNNX layout");                \
    static_assert(sizeof(static_cast<c_type*>(nullptr)->field) == ::vnnx::meta::field_size_v<ours, #field>, \
                  "sizeof(" #c_type "::" #field ") differs from the VNNX layout");
// The same from a field-list entry `(type, field)`.
#define VNNX_CHECK_C_LISTED_FIELD_(args, pair) VNNX_CHECK_C_FIELD_(args, VNNX_PP_SECOND(pair))

#define VNNX_CHECK_C_SIZE_(c_type, ours)                                                            \
    static_assert(sizeof(c_type) == ::vnnx::meta::serialized_size_v<ours>,                          \
                  "sizeof(" #c_type ") differs from the VNNX layout");

/// Asserts sizeof(c_type) and the offset and size of every listed field against record `ours`.
#define VNNX_CHECK_C_STRUCT(c_type, ours, ...)                                                      \
    VNNX_CHECK_C_SIZE_(c_type, ours)                                                                \
    VNNX_PP_FOR_EACH(VNNX_CHECK_C_FIELD_, (c_type, ours), __VA_ARGS__)                               \
    static_assert(true)

// One field of a union member: (c_type, member, ours_member) and a field name.
#define VNNX_CHECK_C_MEMBER_FIELD_(args, field) VNNX_CHECK_C_MEMBER_FIELD_I_(VNNX_CHECK_C_UNPAREN_ args, field)
#define VNNX_CHECK_C_MEMBER_FIELD_I_(...) VNNX_CHECK_C_MEMBER_FIELD_J_(__VA_ARGS__)
#define VNNX_CHECK_C_MEMBER_FIELD_J_(c_type, member, ours_member, field)                            \
    static_assert(offsetof(c_type, member.field) - offsetof(c_type, member) ==                      \
                      ::vnnx::meta::offset_of_v<ours_member, #field>,                               \
                  "offset of " #c_type "::" #member "." #field " differs from the VNNX layout");     \
    static_assert(sizeof(static_cast<c_type*>(nullptr)->member.field) ==                            \
                      ::vnnx::meta::field_size_v<ours_member, #field>,                              \
                  "sizeof(" #c_type "::" #member "." #field ") differs from the VNNX layout");
#define VNNX_CHECK_C_LISTED_MEMBER_FIELD_(args, pair) VNNX_CHECK_C_MEMBER_FIELD_(args, VNNX_PP_SECOND(pair))

#define VNNX_CHECK_C_MEMBER_PLACE_(c_type, ours, member, ours_member)                               \
    static_assert(offsetof(c_type, member) == ::vnnx::meta::offset_of_v<ours, "options">,           \
                  "offsetof(" #c_type ", " #member ") differs from the VNNX union offset");         \
    static_assert(sizeof(static_cast<c_type*>(nullptr)->member) == ::vnnx::meta::serialized_size_v<ours_member>, \
                  "sizeof(" #c_type "::" #member ") differs from the VNNX layout");

/// Asserts that union member `member` of c_type sits where record `ours` keeps its union
/// (field `options`), has the size of `ours_member`, and that every listed field matches.
#define VNNX_CHECK_C_UNION_MEMBER(c_type, ours, member, ours_member, ...)                           \
    VNNX_CHECK_C_MEMBER_PLACE_(c_type, ours, member, ours_member)                                   \
    VNNX_PP_FOR_EACH(VNNX_CHECK_C_MEMBER_FIELD_, (c_type, member, ours_member), __VA_ARGS__)        \
    static_assert(true)

// ---- Generated from the field lists of records.hpp ----

#define VNNX_CHECK_C_RECORD_(c_type, NAME)                                                          \
    VNNX_CHECK_C_RECORD_I_(c_type, ::vnnx::format::NAME, VNNX_FIELDS_##NAME)
#define VNNX_CHECK_C_RECORD_I_(c_type, ours, ...)                                                   \
    VNNX_CHECK_C_SIZE_(c_type, ours)                                                                \
    VNNX_PP_FOR_EACH(VNNX_CHECK_C_LISTED_FIELD_, (c_type, ours), __VA_ARGS__)

/// Every field of record NAME (vnnx_tensor_t, vnnx_layer_t, ...) and its size, against c_type.
#define VNNX_CHECK_C_RECORD(c_type, NAME) VNNX_CHECK_C_RECORD_(c_type, NAME) static_assert(true)

#define VNNX_CHECK_C_OPTION_I_(c_type, ours, member, ours_member, ...)                              \
    VNNX_CHECK_C_MEMBER_PLACE_(c_type, ours, member, ours_member)                                   \
    VNNX_PP_FOR_EACH(VNNX_CHECK_C_LISTED_MEMBER_FIELD_, (c_type, member, ours_member), __VA_ARGS__)
#define VNNX_CHECK_C_LAYER_OPTION_(c_type, member)                                                  \
    VNNX_CHECK_C_OPTION_I_(c_type, ::vnnx::format::vnnx_layer_t, member,                            \
                           ::vnnx::format::layer_options::member, VNNX_LAYER_OPTION_FIELDS_##member)
#define VNNX_CHECK_C_NODE_OPTION_(c_type, member)                                                   \
    VNNX_CHECK_C_OPTION_I_(c_type, ::vnnx::format::vnnx_subgraph_node_t, member,                    \
                           ::vnnx::format::node_options::member, VNNX_NODE_OPTION_FIELDS_##member)

/// Union member `member` of the layer union, every field, against c_type (the C layer struct).
#define VNNX_CHECK_C_LAYER_OPTION(c_type, member) VNNX_CHECK_C_LAYER_OPTION_(c_type, member) static_assert(true)
/// Union member `member` of the node union, every field, against c_type (the C node struct).
#define VNNX_CHECK_C_NODE_OPTION(c_type, member) VNNX_CHECK_C_NODE_OPTION_(c_type, member) static_assert(true)

/// All 28 layer-union members, all 14 node-union members.
#define VNNX_CHECK_C_LAYER_OPTIONS(c_type)                                                          \
    VNNX_PP_FOR_EACH_OUTER(VNNX_CHECK_C_LAYER_OPTION_, c_type, VNNX_LAYER_OPTION_MEMBERS) static_assert(true)
#define VNNX_CHECK_C_NODE_OPTIONS(c_type)                                                           \
    VNNX_PP_FOR_EACH_OUTER(VNNX_CHECK_C_NODE_OPTION_, c_type, VNNX_NODE_OPTION_MEMBERS) static_assert(true)

/// Every record, every field, every union member: the whole layout, against a firmware header.
#define VNNX_CHECK_C_ALL(c_graph, c_node, c_layer, c_tensor, c_indirect)                            \
    VNNX_CHECK_C_RECORD_(c_graph, vnnx_graph_t)                                                     \
    VNNX_CHECK_C_RECORD_(c_node, vnnx_subgraph_node_t)                                              \
    VNNX_CHECK_C_RECORD_(c_layer, vnnx_layer_t)                                                     \
    VNNX_CHECK_C_RECORD_(c_tensor, vnnx_tensor_t)                                                   \
    VNNX_CHECK_C_RECORD_(c_indirect, indirect_ptr_t)                                                \
    VNNX_PP_FOR_EACH_OUTER(VNNX_CHECK_C_LAYER_OPTION_, c_layer, VNNX_LAYER_OPTION_MEMBERS)           \
    VNNX_PP_FOR_EACH_OUTER(VNNX_CHECK_C_NODE_OPTION_, c_node, VNNX_NODE_OPTION_MEMBERS)              \
    static_assert(true)

#pragma once
// Firmware-host check: a firmware build that has its own copy of vnnx-types.h can prove,
// at compile time, that its structs have exactly our layout:
//
//   VNNX_CHECK_C_STRUCT(vnnx_tensor_t, vnnx::format::vnnx_tensor_t, type, shape, dims, ...);
//   VNNX_CHECK_C_UNION_MEMBER(vnnx_layer_t, vnnx::format::vnnx_layer_t, Conv2DOptions,
//                             vnnx::format::layer_options::Conv2DOptions, kernels, ...);
//
// Each named field's offsetof and size must equal ours, and sizeof the whole struct must equal
// our serialized size. Only the standard library and Boost.Hana are needed.
#include <cstddef>

#include "vnnx/meta/pp.hpp"
#include "vnnx/meta/reflect.hpp"

#define VNNX_CHECK_C_FIELD_(args, field) VNNX_CHECK_C_FIELD_I_(VNNX_CHECK_C_UNPAREN_ args, field)
#define VNNX_CHECK_C_UNPAREN_(...) __VA_ARGS__
#define VNNX_CHECK_C_FIELD_I_(...) VNNX_CHECK_C_FIELD_J_(__VA_ARGS__)
#define VNNX_CHECK_C_FIELD_J_(c_type, ours, field)                                                  \
    static_assert(offsetof(c_type, field) == ::vnnx::meta::offset_of_v<ours, #field>,               \
                  "offsetof(" #c_type ", " #field ") differs from the VNNX layout");                \
    static_assert(sizeof(static_cast<c_type*>(nullptr)->field) == ::vnnx::meta::field_size_v<ours, #field>, \
                  "sizeof(" #c_type "::" #field ") differs from the VNNX layout");

/// Asserts sizeof(c_type) and the offset and size of every listed field against record `ours`.
#define VNNX_CHECK_C_STRUCT(c_type, ours, ...)                                                      \
    static_assert(sizeof(c_type) == ::vnnx::meta::serialized_size_v<ours>,                          \
                  "sizeof(" #c_type ") differs from the VNNX layout");                              \
    VNNX_PP_FOR_EACH(VNNX_CHECK_C_FIELD_, (c_type, ours), __VA_ARGS__)                               \
    static_assert(true)

#define VNNX_CHECK_C_MEMBER_FIELD_(args, field) VNNX_CHECK_C_MEMBER_FIELD_I_(VNNX_CHECK_C_UNPAREN_ args, field)
#define VNNX_CHECK_C_MEMBER_FIELD_I_(...) VNNX_CHECK_C_MEMBER_FIELD_J_(__VA_ARGS__)
#define VNNX_CHECK_C_MEMBER_FIELD_J_(c_type, member, ours_member, field)                            \
    static_assert(offsetof(c_type, member.field) - offsetof(c_type, member) ==                      \
                      ::vnnx::meta::offset_of_v<ours_member, #field>,                               \
                  "offset of " #c_type "::" #member "." #field " differs from the VNNX layout");     \
    static_assert(sizeof(static_cast<c_type*>(nullptr)->member.field) ==                            \
                      ::vnnx::meta::field_size_v<ours_member, #field>,                              \
                  "sizeof(" #c_type "::" #member "." #field ") differs from the VNNX layout");

/// Asserts that union member `member` of c_type sits where record `ours` keeps its union
/// (field `options`), has the size of `ours_member`, and that every listed field matches.
#define VNNX_CHECK_C_UNION_MEMBER(c_type, ours, member, ours_member, ...)                           \
    static_assert(offsetof(c_type, member) == ::vnnx::meta::offset_of_v<ours, "options">,           \
                  "offsetof(" #c_type ", " #member ") differs from the VNNX union offset");         \
    static_assert(sizeof(static_cast<c_type*>(nullptr)->member) == ::vnnx::meta::serialized_size_v<ours_member>, \
                  "sizeof(" #c_type "::" #member ") differs from the VNNX layout");                 \
    VNNX_PP_FOR_EACH(VNNX_CHECK_C_MEMBER_FIELD_, (c_type, member, ours_member), __VA_ARGS__)        \
    static_assert(true)

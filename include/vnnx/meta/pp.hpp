#pragma once
// Preprocessor iteration without a fixed argument limit (C++20 __VA_OPT__): the VNNX node
// record has 49 fields, more than BOOST_HANA_DEFINE_STRUCT's 40.

#define VNNX_PP_PARENS ()
// 4^4 = 256 rescans: enough for 256 list items.
#define VNNX_PP_EXPAND(...) VNNX_PP_EXPAND3(VNNX_PP_EXPAND3(VNNX_PP_EXPAND3(VNNX_PP_EXPAND3(__VA_ARGS__))))
#define VNNX_PP_EXPAND3(...) VNNX_PP_EXPAND2(VNNX_PP_EXPAND2(VNNX_PP_EXPAND2(VNNX_PP_EXPAND2(__VA_ARGS__))))
#define VNNX_PP_EXPAND2(...) VNNX_PP_EXPAND1(VNNX_PP_EXPAND1(VNNX_PP_EXPAND1(VNNX_PP_EXPAND1(__VA_ARGS__))))
#define VNNX_PP_EXPAND1(...) __VA_ARGS__

/// VNNX_PP_FOR_EACH(m, data, a, b, c) -> m(data, a) m(data, b) m(data, c)
#define VNNX_PP_FOR_EACH(macro, data, ...) \
    __VA_OPT__(VNNX_PP_EXPAND(VNNX_PP_FOR_EACH_STEP(macro, data, __VA_ARGS__)))
#define VNNX_PP_FOR_EACH_STEP(macro, data, first, ...) \
    macro(data, first) __VA_OPT__(VNNX_PP_FOR_EACH_AGAIN VNNX_PP_PARENS(macro, data, __VA_ARGS__))
#define VNNX_PP_FOR_EACH_AGAIN() VNNX_PP_FOR_EACH_STEP

// A second, independent iteration, for a list whose items are themselves expanded with
// VNNX_PP_FOR_EACH (a macro cannot re-enter its own expansion).
#define VNNX_PP_OUTER_EXPAND(...) VNNX_PP_OUTER_EXPAND3(VNNX_PP_OUTER_EXPAND3(VNNX_PP_OUTER_EXPAND3(VNNX_PP_OUTER_EXPAND3(__VA_ARGS__))))
#define VNNX_PP_OUTER_EXPAND3(...) VNNX_PP_OUTER_EXPAND2(VNNX_PP_OUTER_EXPAND2(VNNX_PP_OUTER_EXPAND2(VNNX_PP_OUTER_EXPAND2(__VA_ARGS__))))
#define VNNX_PP_OUTER_EXPAND2(...) VNNX_PP_OUTER_EXPAND1(VNNX_PP_OUTER_EXPAND1(VNNX_PP_OUTER_EXPAND1(VNNX_PP_OUTER_EXPAND1(__VA_ARGS__))))
#define VNNX_PP_OUTER_EXPAND1(...) __VA_ARGS__

/// VNNX_PP_FOR_EACH_OUTER(m, data, a, b) -> m(data, a) m(data, b); m may use VNNX_PP_FOR_EACH.
#define VNNX_PP_FOR_EACH_OUTER(macro, data, ...) \
    __VA_OPT__(VNNX_PP_OUTER_EXPAND(VNNX_PP_FOR_EACH_OUTER_STEP(macro, data, __VA_ARGS__)))
#define VNNX_PP_FOR_EACH_OUTER_STEP(macro, data, first, ...) \
    macro(data, first) __VA_OPT__(VNNX_PP_FOR_EACH_OUTER_AGAIN VNNX_PP_PARENS(macro, data, __VA_ARGS__))
#define VNNX_PP_FOR_EACH_OUTER_AGAIN() VNNX_PP_FOR_EACH_OUTER_STEP

/// The second element of a pair `(a, b)`.
#define VNNX_PP_SECOND(pair) VNNX_PP_SECOND_I pair
#define VNNX_PP_SECOND_I(a, b) b

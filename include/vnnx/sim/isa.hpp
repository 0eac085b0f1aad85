#pragma once
// Instruction-set tags for the simulator's kernels and their run-time choice.
// Kernels are templates over a tag; SIMD bodies carry function-level target attributes so the
// build needs no -m flags and the binary still runs (scalar) on CPUs without AVX2/AVX-512.
#include <array>
#include <string>
#include <string_view>
#include <utility>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "vnnx/support/error.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VNNX_SIM_X86 1
#define VNNX_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define VNNX_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))
#define VNNX_TARGET_AMX __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni,amx-tile,amx-int8")))
#else
#define VNNX_SIM_X86 0
#define VNNX_TARGET_AVX2
#define VNNX_TARGET_AVX512
#define VNNX_TARGET_AMX
#endif

#if VNNX_SIM_X86
// The intrinsics every SIMD kernel uses, included once here.
// GCC 12's AVX-512 headers self-initialise "undefined" vectors (__m512i __Y = __Y), which
// -Wuninitialized reports at -O2+ (GCC PR 105593); the warning is about the header, not us.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // a GCC-only warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace vnnx::sim {

// avx512_vbmi is avx512_vnni whose byte-permute paths (VBMI: table lookups, resize taps; VBMI2:
// byte compress of depthwise tiles) are taken; avx512_amx is avx512_vbmi whose ordinary
// (groups = 1) convolutions run on the AMX-INT8 tile unit. The kernels templated on a tag see
// the AVX-512 tag for all three (dispatch); the paths of the extensions are chosen by
// uses_vbmi / the convolution's AMX check on the kind, so `--isa avx512` runs the AVX-512
// paths without VBMI on a CPU that has it, and tests reach every path.
enum class isa_kind { scalar, avx2, avx512_vnni, avx512_vbmi, avx512_amx };

namespace isa {
struct scalar {
    static constexpr isa_kind kind = isa_kind::scalar;
    static constexpr std::string_view name = "scalar";
};
struct avx2 {
    static constexpr isa_kind kind = isa_kind::avx2;
    static constexpr std::string_view name = "avx2";
};
struct avx512_vnni {
    static constexpr isa_kind kind = isa_kind::avx512_vnni;
    static constexpr std::string_view name = "avx512";
};
inline constexpr std::string_view vbmi_name = "vbmi";
inline constexpr std::string_view amx_name = "amx";
}  // namespace isa

/// Every SIMD kind, for tests and benchmarks that compare each with scalar.
inline constexpr std::array<isa_kind, 4> simd_isa_kinds{isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi,
                                                        isa_kind::avx512_amx};

// Every AVX-512 kind runs the AVX-512 kernels.
[[nodiscard]] constexpr bool uses_avx512(isa_kind k) noexcept {
    return k == isa_kind::avx512_vnni || k == isa_kind::avx512_vbmi || k == isa_kind::avx512_amx;
}
// The byte-permute and byte-compress paths (AVX512_VBMI, AVX512_VBMI2) are taken.
[[nodiscard]] constexpr bool uses_vbmi(isa_kind k) noexcept {
    return k == isa_kind::avx512_vbmi || k == isa_kind::avx512_amx;
}

[[nodiscard]] constexpr std::string_view isa_name(isa_kind k) noexcept {
    switch (k) {
        case isa_kind::avx2: return isa::avx2::name;
        case isa_kind::avx512_vnni: return isa::avx512_vnni::name;
        case isa_kind::avx512_vbmi: return isa::vbmi_name;
        case isa_kind::avx512_amx: return isa::amx_name;
        default: return isa::scalar::name;
    }
}

namespace detail {
// AMX-TILE and AMX-INT8 in CPUID, the tile state enabled in XCR0, and Linux's permission for
// this process to use the 8 KiB tile data (arch_prctl ARCH_REQ_XCOMP_PERM, Linux 5.16+),
// asked for once; without it the first tile instruction would kill the process.
[[nodiscard]] inline bool amx_usable() noexcept {
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
    static const bool usable = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
        constexpr unsigned amx_tile = 1u << 24, amx_int8 = 1u << 25;
        if ((d & (amx_tile | amx_int8)) != (amx_tile | amx_int8)) return false;
        if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE
        unsigned lo = 0, hi = 0;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        constexpr unsigned tile_state = (1u << 17) | (1u << 18);  // XTILECFG, XTILEDATA
        if ((lo & tile_state) != tile_state) return false;
        constexpr long req_xcomp_perm = 0x1023, xfeature_xtiledata = 18;
        return syscall(SYS_arch_prctl, req_xcomp_perm, xfeature_xtiledata) == 0;
    }();
    return usable;
#else
    return false;
#endif
}
}  // namespace detail

// True when this CPU (and this build) can run kernels of that ISA.
[[nodiscard]] inline bool isa_supported(isa_kind k) noexcept {
#if VNNX_SIM_X86
    switch (k) {
        case isa_kind::scalar: return true;
        case isa_kind::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case isa_kind::avx512_vnni:
            // vpdpbusd on zmm needs F; byte/word ops need BW; the 256-bit forms need VL.
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512vnni");
        case isa_kind::avx512_vbmi:
            return isa_supported(isa_kind::avx512_vnni) && __builtin_cpu_supports("avx512vbmi") &&
                   __builtin_cpu_supports("avx512vbmi2");
        case isa_kind::avx512_amx: return isa_supported(isa_kind::avx512_vbmi) && detail::amx_usable();
    }
    return false;
#else
    return k == isa_kind::scalar;
#endif
}

// The fastest ISA this CPU supports.
[[nodiscard]] inline isa_kind best_isa() noexcept {
    if (isa_supported(isa_kind::avx512_amx)) return isa_kind::avx512_amx;
    if (isa_supported(isa_kind::avx512_vbmi)) return isa_kind::avx512_vbmi;
    if (isa_supported(isa_kind::avx512_vnni)) return isa_kind::avx512_vnni;
    if (isa_supported(isa_kind::avx2)) return isa_kind::avx2;
    return isa_kind::scalar;
}

// Parses an `--isa` value. Unknown names are usage errors; known names this CPU cannot run
// are `unsupported` errors, so a forced ISA never crashes with an illegal instruction.
[[nodiscard]] inline isa_kind isa_from_name(std::string_view name) {
    isa_kind k{};
    if (name == "scalar") k = isa_kind::scalar;
    else if (name == "avx2") k = isa_kind::avx2;
    else if (name == "avx512" || name == "avx512_vnni") k = isa_kind::avx512_vnni;
    else if (name == "vbmi" || name == "avx512_vbmi") k = isa_kind::avx512_vbmi;
    else if (name == "amx" || name == "avx512_amx") k = isa_kind::avx512_amx;
    else
        fail(error_kind::usage, "--isa: unknown instruction set '" + std::string(name) +
                                    "' (expected scalar, avx2, avx512, vbmi or amx)");
    if (!isa_supported(k))
        fail(error_kind::unsupported, "--isa: instruction set '" + std::string(name) +
                                          "' is not supported by this CPU (it has " +
                                          std::string(isa_name(best_isa())) + " at best)");
    return k;
}

// Calls f(tag) with the tag type of k; every branch is instantiated, so the SIMD simulator is a
// set of template instantiations chosen here.
template <class F>
decltype(auto) dispatch(isa_kind k, F&& f) {
    switch (k) {
        case isa_kind::avx2: return std::forward<F>(f)(isa::avx2{});
        case isa_kind::avx512_vnni:
        case isa_kind::avx512_vbmi:
        case isa_kind::avx512_amx: return std::forward<F>(f)(isa::avx512_vnni{});
        default: return std::forward<F>(f)(isa::scalar{});
    }
}

}  // namespace vnnx::sim

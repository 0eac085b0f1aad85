// libFuzzer target: vnnx::fuzz::vnnx_sim (fuzz/targets.hpp).
#include "targets.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    vnnx::fuzz::use_fuzz_limits();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return vnnx::fuzz::one_input<&vnnx::fuzz::vnnx_sim>(data, size);
}

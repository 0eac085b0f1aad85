// libFuzzer target: vnnx::fuzz::tflite_info (fuzz/targets.hpp).
#include "targets.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    vnnx::fuzz::use_fuzz_limits();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return vnnx::fuzz::one_input<&vnnx::fuzz::tflite_info>(data, size);
}

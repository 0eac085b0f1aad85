// Compiles a TFLite model to VNNX inside a program, without the vnnx tool:
//   compile_in_process [MODEL.tflite [OUT.vnnx]]
// Without arguments it compiles the built-in demo model and writes nothing. The result is read
// back through the bounds-checked reader, as a loader would.
#include <cstdio>
#include <string>
#include <vector>

#include <vnnx/compiler/compile.hpp>
#include <vnnx/format/model_view.hpp>
#include <vnnx/support/atomic_file.hpp>
#include <vnnx/tflite/builder.hpp>

int main(int argc, char** argv) {
    try {
        const std::string source = argc > 1 ? argv[1] : "demo.tflite";
        const std::vector<std::byte> model = argc > 1 ? vnnx::read_file(source) : vnnx::tflite::demo_model();

        vnnx::compile_options options;
        options.preset = vnnx::format::preset::V1000;
        const vnnx::compile_result result = vnnx::compile(model, options, source);

        for (const auto& node : result.nodes)
            std::printf("node %zu: %-10s %-40s %lld MACs\n", node.index, node.type.c_str(), node.ops.c_str(),
                        static_cast<long long>(node.macs));

        const vnnx::format::model_view view(result.bytes, "compiled.vnnx");
        std::printf("%zu bytes, %zu nodes, %zu layers, %u bytes of memory, %lld MACs\n", result.bytes.size(),
                    view.num_nodes(), view.num_layers(), view.header().allocate_bytes,
                    static_cast<long long>(result.macs));
        if (view.num_nodes() != result.nodes.size() || view.num_nodes() == 0) {
            std::fputs("compile_in_process: the file does not hold the nodes the compiler reported\n", stderr);
            return 1;
        }
        if (argc > 2) vnnx::write_file_atomic(argv[2], result.bytes);
        return 0;
    } catch (const vnnx::error& e) {
        std::fprintf(stderr, "compile_in_process: error: %s\n", e.what());
        return e.exit_code();
    }
}

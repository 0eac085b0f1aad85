// The heavy half of ops_eltwise_harness_test.hpp (compile, simulate, reference), compiled once
// for the ten test units that share it.
#include "ops_eltwise_harness_test.hpp"

namespace eltwise_test {

/// The compiler pipeline without the LUT pass, to reach the fallback layers (§7.6).
std::vector<std::byte> compile_without_luts(std::span<const std::byte> bytes, const std::string& source) {
    using namespace vnnx;
    const auto model = tflite::model_view::parse(bytes, source);
    compiler::graph g = compiler::import_graph(model);
    if (auto problems = compiler::find_problems(g); !problems.empty())
        fail(error_kind::unsupported, compiler::format_problems(source, problems));
    g = compiler::transform(std::move(g), {});
    compiler::program prog;
    const auto& preset = compiler::info(prog.preset);
    auto splits = compiler::split_graph(g, &ops::starts_own_node);
    for (const auto& s : splits) {
        auto tile = compiler::tile_split(g, s, preset);
        REQUIRE(tile.fits);
        auto node = compiler::build_node(g, prog, preset, s, {static_cast<std::int32_t>(tile.maps), static_cast<std::int32_t>(tile.imaps)});
        compiler::apply_tile(node, tile);
        prog.nodes.push_back(std::move(node));
    }
    for (auto i : g.inputs) prog.inputs.push_back({g.t(i).name, {}});
    for (auto o : g.outputs) prog.outputs.push_back({g.t(o).name, {}});
    return compiler::emit(prog).bytes;
}

/// Simulates VNNX bytes on TFLite-order inputs; outputs come back in TFLite order with the
/// model's output shapes and types.
std::vector<ndarray> simulate(const std::vector<std::byte>& vnnx_bytes, const std::vector<ndarray>& inputs,
                              const std::vector<ndarray>& like) {
    vnnx::sim::machine m(vnnx_bytes, "test.vnnx", {vnnx::sim::isa_kind::scalar, 1});
    for (std::size_t i = 0; i < inputs.size(); ++i) m.set_input(i, to_cf(inputs[i]));
    m.run();
    // Every SIMD path of this CPU, on one and two threads, gives the scalar path's bytes.
    for (auto isa : vnnx::sim::simd_isa_kinds) {
        if (!vnnx::sim::isa_supported(isa)) continue;
        for (unsigned threads : {1u, 2u}) {
            vnnx::sim::machine s(vnnx_bytes, "test.vnnx", {isa, threads});
            for (std::size_t i = 0; i < inputs.size(); ++i) s.set_input(i, to_cf(inputs[i]));
            s.run();
            s.run();  // the second run takes what the first prepared (tables in the layers' caches)
            for (std::size_t o = 0; o < like.size(); ++o) {
                INFO("isa " << vnnx::sim::isa_name(isa) << ", " << threads << " thread(s), output " << o);
                const auto a = m.output(o), b = s.output(o);
                REQUIRE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
            }
        }
    }
    std::vector<ndarray> out;
    for (std::size_t o = 0; o < like.size(); ++o) out.push_back(from_cf(m.output(o), like[o].type, like[o].shape));
    return out;
}

/// Compile (default flow, or without LUTs), simulate and run the reference.
outcome run_both(const std::vector<std::byte>& tfl, const std::vector<ndarray>& inputs, bool luts) {
    outcome r;
    const auto model = vnnx::tflite::model_view::parse(tfl, "test.tflite");
    r.ref = vnnx::ref::run(model, inputs);
    r.vnnx = luts ? vnnx::compile(tfl, {}, "test.tflite").bytes : compile_without_luts(tfl, "test.tflite");
    r.sim = simulate(r.vnnx, inputs, r.ref);
    return r;
}

}  // namespace eltwise_test

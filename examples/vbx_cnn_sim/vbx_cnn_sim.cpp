// libvbx_cnn_sim.so: the firmware API of <vnnx/capi/vbx_cnn_sim.h> over vnnx::capi::sim_core.
// Every function is a thin, noexcept wrapper: no exception and no C++ type crosses the
// interface, and the linker script beside this file exports these functions and nothing else.
#include <cstdio>
#include <cstring>
#include <new>

#include <vnnx/capi/model_access.hpp>
#include <vnnx/capi/sim_core.hpp>
#include <vnnx/capi/vbx_cnn_sim.h>

namespace {

using vnnx::capi::model_access;
using vnnx::capi::sim_core;

sim_core* core_of(const vbx_cnn_t* v) noexcept {
    return v == nullptr ? nullptr : static_cast<sim_core*>(v->vnnx_sim_state);
}

// An io tensor's record, or nothing (the accessors' "not found" values then apply).
std::optional<vnnx::capi::io_record> io_of(const model_t* model, bool is_input, int index) noexcept {
    return model_access(model).io(is_input, index);
}

constexpr std::size_t not_found = static_cast<std::size_t>(-1);

size_t length_of(const model_t* model, bool is_input, int index) noexcept {
    const auto r = io_of(model, is_input, index);
    return r ? static_cast<size_t>(model_access::length(r->tensor)) : not_found;
}
int* shape_of(const model_t* model, bool is_input, int index) noexcept {
    const auto r = io_of(model, is_input, index);
    if (!r) return nullptr;
    // Into the model's own record, as the firmware hands it out.
    auto* base = const_cast<std::byte*>(static_cast<const std::byte*>(static_cast<const void*>(model)));
    return reinterpret_cast<int*>(base + r->offset + model_access::shape_offset);
}
size_t dims_of(const model_t* model, bool is_input, int index) noexcept {
    const auto r = io_of(model, is_input, index);
    return r ? static_cast<size_t>(r->tensor.dims) : not_found;
}
vbx_cnn_calc_type_e type_of(const model_t* model, bool is_input, int index) noexcept {
    const auto r = io_of(model, is_input, index);
    if (!r || r->tensor.type < 0 || r->tensor.type > 3) return VBX_CNN_CALC_TYPE_UNKNOWN;
    return static_cast<vbx_cnn_calc_type_e>(r->tensor.type);
}
void* test_vector_of(const model_t* model, bool is_input, int index) noexcept {
    const model_access m(model);
    const auto r = m.io(is_input, index);
    return r ? const_cast<std::byte*>(m.test_vector(*r)) : nullptr;
}
float scale_of(const model_t* model, bool is_input, int index) noexcept {
    const auto r = io_of(model, is_input, index);
    return r ? r->tensor.scale : 0.0f;
}
int scale_f16_of(const model_t* model, bool is_input, int index) noexcept {
    const auto r = io_of(model, is_input, index);
    return r ? r->tensor.scale_f16 : 0;
}
int zero_of(const model_t* model, bool is_input, int index) noexcept {
    const auto r = io_of(model, is_input, index);
    return r ? r->tensor.zero : 0;
}
size_t offset_of(const model_t* model, bool is_input, int index) noexcept {
    const auto r = io_of(model, is_input, index);
    return r ? static_cast<size_t>(r->tensor.indirect.offset) : not_found;
}

}  // namespace

extern "C" {

vbx_cnn_t* vbx_cnn_init(void* /*ctrl_reg_addr*/) {
    try {
        auto* core = new sim_core(vnnx::capi::config_from_environment());
        auto* v = new (std::nothrow) vbx_cnn_t{};
        if (v == nullptr) {
            delete core;
            return nullptr;
        }
        v->initialized = 1;
        v->version = 0;
        v->size_config = core->config().size_conf ? *core->config().size_conf : 0xFFFFFFFFu;
        v->comp_config = VBX_CNN_CONF_NO_COMPRESSION;
        v->vnnx_sim_state = core;
        return v;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "libvbx_cnn_sim: vbx_cnn_init: %s\n", e.what());
        return nullptr;
    }
}

void vnnx_sim_free(vbx_cnn_t* vbx_cnn) {
    if (vbx_cnn == nullptr) return;
    delete core_of(vbx_cnn);
    delete vbx_cnn;
}

const char* vnnx_sim_error_message(const vbx_cnn_t* vbx_cnn) {
    const sim_core* c = core_of(vbx_cnn);
    return c == nullptr ? "" : c->message();
}

vbx_cnn_err_e vbx_cnn_get_error_val(vbx_cnn_t* vbx_cnn) {
    const sim_core* c = core_of(vbx_cnn);
    return static_cast<vbx_cnn_err_e>(c == nullptr ? 0 : static_cast<int>(c->error_value()));
}

int vbx_cnn_model_start(vbx_cnn_t* vbx_cnn, model_t* model, vbx_cnn_io_ptr_t io_buffers[]) {
    sim_core* c = core_of(vbx_cnn);
    return c == nullptr ? -1 : c->start(model, io_buffers);
}

vbx_cnn_state_e vbx_cnn_get_state(vbx_cnn_t* vbx_cnn) {
    const sim_core* c = core_of(vbx_cnn);
    return c == nullptr ? ERROR : static_cast<vbx_cnn_state_e>(static_cast<int>(c->state()));
}

int vbx_cnn_model_poll(vbx_cnn_t* vbx_cnn) {
    sim_core* c = core_of(vbx_cnn);
    return c == nullptr ? -2 : c->poll();
}

int vbx_cnn_model_wfi(vbx_cnn_t* vbx_cnn) {
    sim_core* c = core_of(vbx_cnn);
    if (c == nullptr) return -2;
    vbx_cnn->output_valid = 0;
    return c->wait();
}

void vbx_cnn_model_isr(vbx_cnn_t* vbx_cnn) {
    sim_core* c = core_of(vbx_cnn);
    if (c != nullptr && c->take_output_valid()) vbx_cnn->output_valid = 1;
}

int model_check_sanity(const model_t* model) {
    return model_access(model).sane() ? 0 : -1;
}

int model_check_configuration(const model_t* model, vbx_cnn_t* vbx_cnn) {
    const model_access m(model);
    if (!m.sane()) return -1;
    const sim_core* c = core_of(vbx_cnn);
    return c == nullptr ? 0 : c->check_configuration(m.header());
}

size_t model_get_num_inputs(const model_t* model) {
    const model_access m(model);
    return m.sane() ? m.header().num_inputs : 0;
}
size_t model_get_num_outputs(const model_t* model) {
    const model_access m(model);
    return m.sane() ? m.header().num_outputs : 0;
}
size_t model_get_input_length(const model_t* model, int i) { return length_of(model, true, i); }
size_t model_get_output_length(const model_t* model, int o) { return length_of(model, false, o); }
int* model_get_input_shape(const model_t* model, int i) { return shape_of(model, true, i); }
int* model_get_output_shape(const model_t* model, int o) { return shape_of(model, false, o); }
size_t model_get_input_dims(const model_t* model, int i) { return dims_of(model, true, i); }
size_t model_get_output_dims(const model_t* model, int o) { return dims_of(model, false, o); }
vbx_cnn_calc_type_e model_get_input_datatype(const model_t* model, int i) { return type_of(model, true, i); }
vbx_cnn_calc_type_e model_get_output_datatype(const model_t* model, int o) { return type_of(model, false, o); }

vbx_cnn_size_conf_e model_get_size_conf(const model_t* model) {
    const model_access m(model);
    if (!m.sane() || m.header().vbx_nn_preset > VBX_CNN_SIZE_CONF_V4000) return VBX_CNN_SIZE_CONF_UNKNOWN;
    return static_cast<vbx_cnn_size_conf_e>(m.header().vbx_nn_preset);
}
vbx_cnn_comp_conf_e model_get_comp_conf(const model_t* model) {
    const model_access m(model);
    if (!m.sane() || m.header().sparsity < 0 || m.header().sparsity > VBX_CNN_CONF_UNSTRUCTURED_COMPRESSION)
        return VBX_CNN_CONF_UNKNOWN;
    return static_cast<vbx_cnn_comp_conf_e>(m.header().sparsity);
}
size_t model_get_data_bytes(const model_t* model) {
    const model_access m(model);
    return m.sane() ? m.header().data_bytes : not_found;
}
size_t model_get_allocate_bytes(const model_t* model) {
    const model_access m(model);
    return m.sane() ? m.header().allocate_bytes : not_found;
}

void* model_get_test_input(const model_t* model, int i) { return test_vector_of(model, true, i); }
void* model_get_test_output(const model_t* model, int o) { return test_vector_of(model, false, o); }
float model_get_input_scale_value(const model_t* model, int i) { return scale_of(model, true, i); }
float model_get_output_scale_value(const model_t* model, int o) { return scale_of(model, false, o); }
int model_get_input_scale_fix16_value(const model_t* model, int i) { return scale_f16_of(model, true, i); }
int model_get_output_scale_fix16_value(const model_t* model, int o) { return scale_f16_of(model, false, o); }
int model_get_input_zeropoint(const model_t* model, int i) { return zero_of(model, true, i); }
int model_get_output_zeropoint(const model_t* model, int o) { return zero_of(model, false, o); }
size_t model_get_input_offset(const model_t* model, int i) { return offset_of(model, true, i); }
size_t model_get_output_offset(const model_t* model, int o) { return offset_of(model, false, o); }

vbxsim_stats_t vbxsim_get_stats(void) {
    vbxsim_stats_t s;
    std::memset(&s, 0, sizeof s);
    s.dma_bytes = vnnx::capi::global_stats().tensor_bytes.load();
    s.dma_calls = vnnx::capi::global_stats().nodes.load();
    return s;
}

void vbxsim_reset_stats(void) {
    vnnx::capi::global_stats().tensor_bytes = 0;
    vnnx::capi::global_stats().nodes = 0;
}

uint64_t vbxsim_get_instructions(void) { return 0; }

}  // extern "C"

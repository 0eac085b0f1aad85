/* The C interface of libvbx_cnn_sim.so: the VectorBlox firmware API (the SDK's
 * drivers/vectorblox/vbx_cnn_api.h) implemented on the vnnx simulator, so that programs built
 * for the SDK's closed simulation library run unchanged on open code.
 *
 * This header declares exactly the functions the library exports. Names, argument types, enum
 * values and the public prefix of vbx_cnn_t follow the firmware API, so a program compiled
 * against the SDK's own header links and runs against this library too. Plain C; nothing of
 * C++ crosses the interface.
 *
 * The simulated core runs a model to completion inside vbx_cnn_model_start (the caller's
 * thread): the next vbx_cnn_model_poll returns 0 and the outputs are in the caller's buffers.
 * The core holds no queue: a start while another thread's run is still in progress returns -1.
 * A model's prepared state (unpacked weights, tables) is kept per model address while its bytes
 * stay the same: at every start its first and last 4 KiB are compared in full and the rest in
 * samples (VNNX_SIM_CHECK_MODEL=full compares every byte, at the cost of reading the whole
 * model each run). A program that changes a few weights in place between runs sets it, or
 * makes a new core.
 */
#ifndef VNNX_CAPI_VBX_CNN_SIM_H
#define VNNX_CAPI_VBX_CNN_SIM_H

#include <stddef.h>
#include <stdint.h>

#if defined(VNNX_SIM_BUILDING_LIBRARY) && (defined(__GNUC__) || defined(__clang__))
#define VNNX_SIM_API __attribute__((visibility("default")))
#else
#define VNNX_SIM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A VNNX model as it lies in memory: the file's bytes, padded by the caller to
 * model_get_allocate_bytes(). Opaque: read it through the model_get_* functions. */
struct model_struct;
typedef struct model_struct model_t;

/* An input or output buffer's address, as the core takes it. */
typedef uint64_t vbx_cnn_io_ptr_t;

/* Element types of inputs and outputs (a tensor record's calc type). */
typedef enum {
    VBX_CNN_CALC_TYPE_UINT8 = 0,
    VBX_CNN_CALC_TYPE_INT8 = 1,
    VBX_CNN_CALC_TYPE_INT16 = 2,
    VBX_CNN_CALC_TYPE_INT32 = 3,
    VBX_CNN_CALC_TYPE_UNKNOWN = 4
} vbx_cnn_calc_type_e;

/* Core sizes a model is compiled for (the header's vbx_nn_preset). */
typedef enum {
    VBX_CNN_SIZE_CONF_V250 = 0,
    VBX_CNN_SIZE_CONF_V500 = 1,
    VBX_CNN_SIZE_CONF_V1000 = 2,
    VBX_CNN_SIZE_CONF_V2000 = 3,
    VBX_CNN_SIZE_CONF_V4000 = 4,
    VBX_CNN_SIZE_CONF_UNKNOWN = -1 /* this library's: a model that is not sane */
} vbx_cnn_size_conf_e;

/* Weight compression a model is compiled for (the header's sparsity). */
typedef enum {
    VBX_CNN_CONF_NO_COMPRESSION = 0,
    VBX_CNN_CONF_COMPRESSION = 1,
    VBX_CNN_CONF_UNSTRUCTURED_COMPRESSION = 2,
    VBX_CNN_CONF_UNKNOWN = -1 /* this library's: a model that is not sane */
} vbx_cnn_comp_conf_e;

/* The error register (vbx_cnn_get_error_val); 0 while there is no error. */
typedef enum {
    INVALID_FIRMWARE_ADDRESS = 1,
    FIRMWARE_ADDRESS_NOT_READY = 2,
    START_NOT_CLEAR = 3,
    OUTPUT_VALID_NOT_SET = 4,
    FIRMWARE_BLOB_VERSION_MISMATCH = 5,
    INVALID_NETWORK_ADDRESS = 6,
    MODEL_BLOB_INVALID = 7,
    MODEL_BLOB_VERSION_MISMATCH = 8,
    MODEL_BLOB_SIZE_CONFIGURATION_MISMATCH = 9,
    FIRMWARE_BLOB_STALE = 10
} vbx_cnn_err_e;

/* vbx_cnn_get_state. */
typedef enum {
    READY = 1,         /* can accept a model now */
    RUNNING = 2,       /* a model is running (in another thread) */
    RUNNING_READY = 3, /* never reported: the simulated core has no queue */
    FULL = 6,          /* never reported: see RUNNING_READY */
    ERROR = 8          /* stopped on an error; vbx_cnn_init makes a fresh core */
} vbx_cnn_state_e;

/* The core. The fields up to dma_phys_trans_offset are the firmware API's public ones, in its
 * order (programs built against the SDK's header may read them); the library's own state
 * follows and is not part of the interface. size_config is 0xFFFFFFFF for a core that takes
 * models of every size (see vbx_cnn_init). */
typedef struct vbx_cnn_struct {
    int32_t initialized;
    uint32_t version;
    uint32_t size_config;
    uint32_t comp_config;
    volatile uint32_t output_valid;
    void* instruction_blob;
    volatile uint32_t* ctrl_reg;
    int debug_print_ptr;
    size_t dma_phys_trans_offset;
    void* vnnx_sim_state; /* the library's own; do not touch */
} vbx_cnn_t;

/* vbxsim_get_stats: the SDK simulator's statistics block, same layout. The vnnx simulator
 * does not model the vector processor's instruction stream: the instruction and cycle
 * counters stay 0. dma_bytes counts the bytes of every node's input and output tensors and
 * dma_calls the nodes run, summed over the runs since vbxsim_reset_stats. */
#define VBXSIM_MAX_INSTR_VAL 47
#define VBXSIM_NUM_OP_SIZE 3
#define VBXSIM_LOG2_MAX_DMA_LANES 9
typedef struct {
    uint64_t instruction_cycles[VBXSIM_MAX_INSTR_VAL + 1][VBXSIM_NUM_OP_SIZE];
    uint64_t instruction_count[VBXSIM_MAX_INSTR_VAL + 1];
    uint64_t accumulate_cycles[VBXSIM_NUM_OP_SIZE];
    uint64_t set_vl;
    uint64_t set_2D;
    uint64_t set_3D;
    uint64_t dma_bytes;
    uint64_t dma_calls;
    uint64_t dma_cycles[VBXSIM_LOG2_MAX_DMA_LANES];
} vbxsim_stats_t;

/* ---- the core ---- */

/* A new core. ctrl_reg_addr is ignored (there are no registers to map). The core takes models
 * of every size unless the environment names one: VBX_CNN_SIM_SIZE=V250|V500|V1000|V2000|V4000
 * (then a model of another size stops it with MODEL_BLOB_SIZE_CONFIGURATION_MISMATCH).
 * VNNX_SIM_THREADS (default 1) and VNNX_SIM_ISA (scalar, avx2, avx512, vbmi, amx; default the best
 * this CPU has) choose how the simulator runs; VNNX_SIM_CHECK_MODEL (sample, the default, or
 * full) how a model is checked for changes. NULL when out of memory or when one of these
 * variables is invalid (the reason is printed to stderr). */
VNNX_SIM_API vbx_cnn_t* vbx_cnn_init(void* ctrl_reg_addr);

/* The error register: 0, or why the core stopped (vbx_cnn_err_e). */
VNNX_SIM_API vbx_cnn_err_e vbx_cnn_get_error_val(vbx_cnn_t* vbx_cnn);

/* Runs `model` on io_buffers: the model's inputs first, then its outputs, each the address of
 * a buffer of model_get_{input,output}_length() elements of its datatype, channels-first as
 * the model's tensors are laid out. The hardware needs model_get_allocate_bytes() bytes of
 * model memory; the simulator reads only the first model_get_data_bytes() and works in memory
 * of its own.
 * Returns 0 when the model ran, -1 when it did not: the core is in ERROR, another thread's run
 * is in progress, vbx_cnn is NULL, or the run found a fault that now stops the core. A NULL
 * model or io pointer stops the core with INVALID_NETWORK_ADDRESS; a model that fails
 * model_check_sanity with MODEL_BLOB_INVALID or MODEL_BLOB_VERSION_MISMATCH; one of another
 * size than the core's with MODEL_BLOB_SIZE_CONFIGURATION_MISMATCH; one the simulator rejects
 * with MODEL_BLOB_INVALID (vnnx_sim_error_message says why). */
VNNX_SIM_API int vbx_cnn_model_start(vbx_cnn_t* vbx_cnn, model_t* model, vbx_cnn_io_ptr_t io_buffers[]);

/* READY, RUNNING or ERROR. */
VNNX_SIM_API vbx_cnn_state_e vbx_cnn_get_state(vbx_cnn_t* vbx_cnn);

/* 1 while a run is in progress (another thread's), 0 once when a run has finished (the output
 * valid flag is cleared), -1 when the core stopped on an error, -2 when nothing ran. */
VNNX_SIM_API int vbx_cnn_model_poll(vbx_cnn_t* vbx_cnn);

/* As vbx_cnn_model_poll, but waits for a run in progress to finish; 0 when nothing ran. */
VNNX_SIM_API int vbx_cnn_model_wfi(vbx_cnn_t* vbx_cnn);

/* The interrupt handler: moves a finished run's output valid flag to vbx_cnn->output_valid. */
VNNX_SIM_API void vbx_cnn_model_isr(vbx_cnn_t* vbx_cnn);

/* ---- models ---- */

/* 0 when `model` starts with the VNNX magic and this library's format version, else -1. */
VNNX_SIM_API int model_check_sanity(const model_t* model);

/* As model_check_sanity, then -2 when the compression, -3 when the size differs from the
 * core's (a core that takes every size accepts every size). */
VNNX_SIM_API int model_check_configuration(const model_t* model, vbx_cnn_t* vbx_cnn);

/* The accessors read the model's header and records, bounds-checked against its own
 * data_bytes. An index out of range, or a model that fails model_check_sanity or whose records
 * are inconsistent, gives 0 for counts, (size_t)-1 for lengths, dims, sizes and offsets, NULL
 * for pointers, the UNKNOWN value for types and configurations, and 0 for scales and zero
 * points. */
VNNX_SIM_API size_t model_get_num_inputs(const model_t* model);
VNNX_SIM_API size_t model_get_num_outputs(const model_t* model);
VNNX_SIM_API size_t model_get_input_length(const model_t* model, int input_index);
VNNX_SIM_API size_t model_get_output_length(const model_t* model, int output_index);
/* Shapes point into the model's own tensor record (model_get_*_dims entries). */
VNNX_SIM_API int* model_get_input_shape(const model_t* model, int input_index);
VNNX_SIM_API int* model_get_output_shape(const model_t* model, int output_index);
VNNX_SIM_API size_t model_get_input_dims(const model_t* model, int input_index);
VNNX_SIM_API size_t model_get_output_dims(const model_t* model, int output_index);
VNNX_SIM_API vbx_cnn_calc_type_e model_get_input_datatype(const model_t* model, int input_index);
VNNX_SIM_API vbx_cnn_calc_type_e model_get_output_datatype(const model_t* model, int output_index);
VNNX_SIM_API vbx_cnn_size_conf_e model_get_size_conf(const model_t* model);
VNNX_SIM_API vbx_cnn_comp_conf_e model_get_comp_conf(const model_t* model);
VNNX_SIM_API size_t model_get_data_bytes(const model_t* model);
VNNX_SIM_API size_t model_get_allocate_bytes(const model_t* model);
/* The test vectors the compiler embedded, inside the model (its tensor's direct offset). */
VNNX_SIM_API void* model_get_test_input(const model_t* model, int input_index);
VNNX_SIM_API void* model_get_test_output(const model_t* model, int output_index);
VNNX_SIM_API float model_get_input_scale_value(const model_t* model, int input_index);
VNNX_SIM_API float model_get_output_scale_value(const model_t* model, int output_index);
VNNX_SIM_API int model_get_input_scale_fix16_value(const model_t* model, int input_index);
VNNX_SIM_API int model_get_output_scale_fix16_value(const model_t* model, int output_index);
VNNX_SIM_API int model_get_input_zeropoint(const model_t* model, int input_index);
VNNX_SIM_API int model_get_output_zeropoint(const model_t* model, int output_index);
VNNX_SIM_API size_t model_get_input_offset(const model_t* model, int input_index);
VNNX_SIM_API size_t model_get_output_offset(const model_t* model, int output_index);

/* ---- the SDK simulator's statistics ---- */
VNNX_SIM_API vbxsim_stats_t vbxsim_get_stats(void);
VNNX_SIM_API void vbxsim_reset_stats(void);
/* The instruction count of the runs since vbxsim_reset_stats: 0, see vbxsim_stats_t. */
VNNX_SIM_API uint64_t vbxsim_get_instructions(void);

/* ---- this library's own ---- */

/* Why the core stopped: the file (model address), node or tensor and rule, as text; "" while
 * there is no error. Valid until the next call on this core. */
VNNX_SIM_API const char* vnnx_sim_error_message(const vbx_cnn_t* vbx_cnn);

/* Frees a core made by vbx_cnn_init (the firmware API has no such call; the SDK's programs
 * leave the core to the end of the process). Must not run while the core runs. */
VNNX_SIM_API void vnnx_sim_free(vbx_cnn_t* vbx_cnn);

#ifdef __cplusplus
}
#endif

#endif /* VNNX_CAPI_VBX_CNN_SIM_H */

/* A client of libvbx_cnn_sim.so written the way the SDK's example/sim-c/sim-run-model is, in
 * its test-vector mode: read the model, check it, pad it to its allocate size, run the input the
 * compiler embedded, then print a Fletcher-32 checksum of the outputs ("CHECKSUM = 0x%08x") and
 * how far each output is from the output embedded beside the input.
 *
 *   sim_run_model MODEL.vnnx [--dump DIR] [--max-diff N]
 *
 * --dump DIR writes each output's bytes to DIR/output_<o>.bin; --max-diff N exits 3 when an
 * element differs from the embedded output by more than N. Exit 1 when the run fails (with
 * the core's error value and message), 2 on a usage or file error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vnnx/capi/vbx_cnn_sim.h>

/* Fletcher-32 over 16-bit little-endian words, sums reduced every 360 words as the SDK's
 * checksum does; an odd byte count reads one zero byte more. */
static uint32_t fletcher32(const uint8_t* bytes, size_t n) {
    uint32_t c0 = 0, c1 = 0;
    size_t words = (n + 1) / 2;
    size_t i = 0;
    while (words > 0) {
        size_t block = words < 360 ? words : 360;
        words -= block;
        for (; block > 0; --block, ++i) {
            uint32_t lo = bytes[2 * i];
            uint32_t hi = 2 * i + 1 < n ? bytes[2 * i + 1] : 0;
            c0 += lo | (hi << 8);
            c1 += c0;
        }
        c0 %= 65535;
        c1 %= 65535;
    }
    return (c1 << 16) | c0;
}

static int element_bytes(vbx_cnn_calc_type_e t) {
    switch (t) {
        case VBX_CNN_CALC_TYPE_UINT8:
        case VBX_CNN_CALC_TYPE_INT8: return 1;
        case VBX_CNN_CALC_TYPE_INT16: return 2;
        case VBX_CNN_CALC_TYPE_INT32: return 4;
        default: return 0;
    }
}

static long element_at(const void* p, vbx_cnn_calc_type_e t, size_t i) {
    switch (t) {
        case VBX_CNN_CALC_TYPE_UINT8: return ((const uint8_t*)p)[i];
        case VBX_CNN_CALC_TYPE_INT8: return ((const int8_t*)p)[i];
        case VBX_CNN_CALC_TYPE_INT16: return ((const int16_t*)p)[i];
        default: return ((const int32_t*)p)[i];
    }
}

int main(int argc, char** argv) {
    const char* path = NULL;
    const char* dump = NULL;
    long max_diff = -1;
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--dump") == 0 && a + 1 < argc) dump = argv[++a];
        else if (strcmp(argv[a], "--max-diff") == 0 && a + 1 < argc) max_diff = strtol(argv[++a], NULL, 10);
        else if (path == NULL && argv[a][0] != '-') path = argv[a];
        else {
            fprintf(stderr, "usage: %s MODEL.vnnx [--dump DIR] [--max-diff N]\n", argv[0]);
            return 2;
        }
    }
    if (path == NULL) {
        fprintf(stderr, "usage: %s MODEL.vnnx [--dump DIR] [--max-diff N]\n", argv[0]);
        return 2;
    }

    vbx_cnn_t* vbx_cnn = vbx_cnn_init(NULL);
    if (vbx_cnn == NULL) {
        fprintf(stderr, "%s: vbx_cnn_init failed\n", path);
        return 2;
    }

    FILE* f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "Unable to open file %s\n", path);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long file_size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (file_size < 84) {
        fprintf(stderr, "%s: %ld bytes is too short for a VNNX model\n", path, file_size);
        fclose(f);
        return 2;
    }
    model_t* model = (model_t*)malloc((size_t)file_size);
    size_t got = fread(model, 1, (size_t)file_size, f);
    fclose(f);
    if (got != (size_t)file_size) {
        fprintf(stderr, "Error reading full model file %s\n", path);
        return 2;
    }
    if (model_check_sanity(model) != 0) {
        printf("Model %s is not sane\n", path);
        return 1;
    }
    if (model_get_data_bytes(model) != (size_t)file_size) {
        fprintf(stderr, "Error model file is not correct size %s\n", path);
        return 2;
    }
    size_t allocate = model_get_allocate_bytes(model);
    model = (model_t*)realloc(model, allocate);

    size_t n_in = model_get_num_inputs(model), n_out = model_get_num_outputs(model);
    vbx_cnn_io_ptr_t* io = (vbx_cnn_io_ptr_t*)calloc(n_in + n_out, sizeof(vbx_cnn_io_ptr_t));
    for (size_t o = 0; o < n_out; ++o) {
        size_t length = model_get_output_length(model, (int)o);
        void* buf = calloc(length, sizeof(uint32_t));
        io[n_in + o] = (vbx_cnn_io_ptr_t)(uintptr_t)buf;
    }
    for (size_t i = 0; i < n_in; ++i) io[i] = (vbx_cnn_io_ptr_t)(uintptr_t)model_get_test_input(model, (int)i);

    vbx_cnn_model_start(vbx_cnn, model, io);
    int err = 1;
    while (err > 0) err = vbx_cnn_model_poll(vbx_cnn);
    if (err < 0) {
        printf("Model Run failed with error code: %d (error register %d: %s)\n", err,
               (int)vbx_cnn_get_error_val(vbx_cnn), vnnx_sim_error_message(vbx_cnn));
        return 1;
    }

    uint32_t checksum = 0;
    int worst_all = 0;
    for (size_t o = 0; o < n_out; ++o) {
        vbx_cnn_calc_type_e t = model_get_output_datatype(model, (int)o);
        size_t length = model_get_output_length(model, (int)o);
        size_t bytes = length * (size_t)element_bytes(t);
        const uint8_t* out = (const uint8_t*)(uintptr_t)io[n_in + o];
        uint32_t c = fletcher32(out, bytes);
        checksum = o == 0 ? c : checksum ^ c;

        const void* expected = model_get_test_output(model, (int)o);
        long worst = 0;
        size_t differ = 0;
        if (expected != NULL) {
            for (size_t k = 0; k < length; ++k) {
                long d = labs(element_at(out, t, k) - element_at(expected, t, k));
                if (d > 0) ++differ;
                if (d > worst) worst = d;
            }
            printf("output %zu: %zu elements, %zu differ from the embedded output, largest difference %ld\n", o, length,
                   differ, worst);
            if (max_diff >= 0 && worst > max_diff) worst_all = 1;
        } else {
            printf("output %zu: %zu elements, no embedded output\n", o, length);
        }
        if (dump != NULL) {
            char name[4096];
            snprintf(name, sizeof name, "%s/output_%zu.bin", dump, o);
            FILE* w = fopen(name, "wb");
            if (w == NULL || fwrite(out, 1, bytes, w) != bytes) {
                fprintf(stderr, "cannot write %s\n", name);
                return 2;
            }
            fclose(w);
        }
    }
    printf("CHECKSUM = 0x%08x\n", checksum);

    for (size_t o = 0; o < n_out; ++o) free((void*)(uintptr_t)io[n_in + o]);
    free(io);
    free(model);
    vnnx_sim_free(vbx_cnn);
    return worst_all ? 3 : 0;
}

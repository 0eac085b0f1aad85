#!/usr/bin/python3
"""libvbx_cnn_sim.so through the two kinds of client the VectorBlox SDK has: a C program in
the manner of its sim-run-model (sim_run_model.c) and a ctypes client in the manner of its
vbx.sim package (sdk_style_client.py). For the demo model and, where the shared models are
present, a few real ones, both must give the bytes `vnnx infer` gives on the same file and
input, and the checksum of those bytes; bad use must give the firmware API's error values.

    capi_clients_test.py --tool VNNX --lib-dir DIR --client SIM_RUN_MODEL --work DIR [--models DIR]
"""
import argparse
import ctypes
import os
import shutil
import subprocess
import sys
from ctypes import c_char_p, c_int, c_void_p

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdk_style_client as sdk  # noqa: E402

# The SDK's c.py refuses a library file smaller than this (its guard against a Git LFS pointer).
SDK_MIN_LIBRARY_BYTES = 2114408

# Shared models run when present: small ones of several shapes (one and two inputs, int8 and
# uint8 inputs, a residual network, an audio model).
SHARED_MODELS = [
    "mlcommons-tiny__kws_ref_model.tflite",
    "mlcommons-tiny__vww_96_int8.tflite",
    "mlcommons-tiny__pretrainedResnet_quant.tflite",
    "coral-test-data__split_concat.tflite",
    "coral-test-data__mobilenet_v1_0.25_128_quant.tflite",
]

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAILED: " + what, flush=True)


def run(cmd, python=False):
    """A child process. Under a sanitized build the test runs with the sanitizer's runtime
    preloaded into Python; the C programs carry their own, with leak checks on."""
    env = dict(os.environ)
    if not python:
        env.pop("LD_PRELOAD", None)
        env.pop("ASAN_OPTIONS", None)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print("command failed ({}): {}\n{}{}".format(r.returncode, " ".join(cmd), r.stdout, r.stderr))
    return r


def infer_outputs(tool, vnnx, out_dir, inputs=()):
    # The library takes and gives the VNNX layout (channels first): so must vnnx infer here.
    args = [tool, "infer", vnnx, "-o", out_dir, "--layout", "vnnx"]
    for p in inputs:
        args += ["-i", p]
    r = run(args)
    if r.returncode != 0:
        return None
    outs = []
    k = 0
    while os.path.exists(os.path.join(out_dir, "output_{}.npy".format(k))):
        outs.append(np.load(os.path.join(out_dir, "output_{}.npy".format(k))))
        k += 1
    return outs


def checksum_of(arrays):
    c = sdk.fletcher32(arrays[0])
    for a in arrays[1:]:
        c ^= sdk.fletcher32(a)
    return c


def model_case(a, so, name, vnnx):
    """Both clients on one model's embedded test input and on a second input."""
    work = os.path.join(a.work, name)
    ref = infer_outputs(a.tool, vnnx, os.path.join(work, "infer"))
    check(ref is not None and len(ref) > 0, name + ": vnnx infer ran")
    if not ref:
        return
    want = checksum_of(ref)

    # The C client: its dumped bytes and its printed checksum.
    dump = os.path.join(work, "c")
    os.makedirs(dump, exist_ok=True)
    r = run([a.client, vnnx, "--dump", dump])
    check(r.returncode == 0, name + ": sim_run_model exits 0")
    for k, o in enumerate(ref):
        path = os.path.join(dump, "output_{}.bin".format(k))
        got = open(path, "rb").read() if os.path.exists(path) else b""
        check(got == o.tobytes(), "{}: C client output {} equals vnnx infer's bytes".format(name, k))
    check("CHECKSUM = 0x{:08x}".format(want) in r.stdout,
          "{}: C client prints the checksum of vnnx infer's outputs (0x{:08x}); it printed: {}".format(
              name, want, r.stdout.strip().splitlines()[-1:] if r.stdout else ""))

    # The ctypes client, as vbx.sim.Model runs a model.
    vbx_cnn = so.vbx_cnn_init(None)
    model = sdk.Model(so, vbx_cnn, open(vnnx, "rb").read())
    check(model.num_inputs >= 1 and model.num_outputs == len(ref), name + ": input and output counts")
    for k, o in enumerate(ref):
        check(model.output_lengths[k] == o.size, "{}: output {} length".format(name, k))
        check(model.output_dtypes[k] == o.dtype, "{}: output {} dtype".format(name, k))
        shape = [d for d in model.output_shape[k] if d > 0]
        check(int(np.prod(shape)) == o.size, "{}: output {} shape {} holds {} elements".format(
            name, k, model.output_shape[k], o.size))
    so.vbxsim_reset_stats()
    outs = model.run(model.test_input)
    for k, o in enumerate(ref):
        check(outs[k].tobytes() == o.tobytes(), "{}: ctypes client output {} equals vnnx infer's bytes".format(name, k))
    check(model.stats.dma_calls > 0 and model.stats.dma_bytes > 0, name + ": statistics count the run")
    calls = model.stats.dma_calls

    # A second input, then the first again on the same core and model: each must match.
    rng = np.random.default_rng(7)
    paths, second = [], []
    for i in range(model.num_inputs):
        info = np.iinfo(model.input_dtypes[i])
        x = rng.integers(info.min, info.max + 1, size=model.input_lengths[i], dtype=np.int64).astype(model.input_dtypes[i])
        shape = [d for d in model.input_shape[i] if d > 0]
        p = os.path.join(work, "input_{}.npy".format(i))
        np.save(p, x.reshape(shape))
        paths.append(p)
        second.append(x)
    ref2 = infer_outputs(a.tool, vnnx, os.path.join(work, "infer2"), paths)
    outs2 = model.run(second)
    for k, o in enumerate(ref2 or []):
        check(outs2[k].tobytes() == o.tobytes(), "{}: second input, output {} equals vnnx infer's".format(name, k))
    check(model.stats.dma_calls == 2 * calls, name + ": statistics add up over runs")
    outs3 = model.run(model.test_input)
    for k, o in enumerate(ref):
        check(outs3[k].tobytes() == o.tobytes(), "{}: first input again, output {}".format(name, k))
    so.vnnx_sim_free(c_void_p(vbx_cnn))


def bad_use(a, so, vnnx):
    """The firmware API's error values for a model that is not sane, a size that does not match,
    null io pointers, indices out of range; never a crash."""
    good = open(vnnx, "rb").read()
    model = sdk.Model(so, so.vbx_cnn_init(None), good)
    padded = model.model_bytes
    n_io = model.num_inputs + model.num_outputs

    def fresh():
        return so.vbx_cnn_init(None)

    def start(core, model_bytes, buffers):
        arr = (c_void_p * max(1, len(buffers)))(*buffers)
        return so.vbx_cnn_model_start(c_void_p(core), model_bytes, arr)

    outs = [np.zeros(n, dtype=t) for n, t in zip(model.output_lengths, model.output_dtypes)]
    io = [ctypes.cast(np.ctypeslib.as_ctypes(b), c_void_p) for b in list(model.test_input) + outs]

    # Not a VNNX model: magic broken (MODEL_BLOB_INVALID), version changed (MODEL_BLOB_VERSION_MISMATCH).
    for offset, err, what in ((76, 7, "magic"), (0, 8, "version")):
        bad = bytearray(padded)
        bad[offset] ^= 0xFF
        bad = bytes(bad)
        check(so.model_check_sanity(bad) != 0, "model_check_sanity rejects a broken " + what)
        core = fresh()
        check(start(core, bad, io) == -1, "start refuses a model with a broken " + what)
        check(so.vbx_cnn_get_error_val(c_void_p(core)) == err, "broken {}: error value {}".format(what, err))
        check(so.vbx_cnn_get_state(c_void_p(core)) == 8, "broken {}: state ERROR".format(what))
        check(so.vbx_cnn_model_poll(c_void_p(core)) == -1, "broken {}: poll -1".format(what))
        check(what in so.vnnx_sim_error_message(core).decode(), "broken {}: the message says so".format(what))
        check(start(core, padded, io) == -1, "a core in ERROR refuses the next start")
        check(so.model_get_num_inputs(bad) == 0 and not so.model_get_input_shape(c_char_p(bad), c_int(0)),
              "broken {}: accessors give nothing".format(what))
        so.vnnx_sim_free(c_void_p(core))

    # A core of another size than the model's (the model is V1000).
    os.environ["VBX_CNN_SIM_SIZE"] = "V250"
    core = fresh()
    del os.environ["VBX_CNN_SIM_SIZE"]
    check(so.model_check_configuration(padded, c_void_p(core)) == -3, "model_check_configuration: -3 for another size")
    check(start(core, padded, io) == -1, "a V250 core refuses a V1000 model")
    check(so.vbx_cnn_get_error_val(c_void_p(core)) == 9, "size mismatch: MODEL_BLOB_SIZE_CONFIGURATION_MISMATCH")
    check("V1000" in so.vnnx_sim_error_message(core).decode(), "size mismatch: the message names the sizes")
    so.vnnx_sim_free(c_void_p(core))
    os.environ["VBX_CNN_SIM_SIZE"] = "V1000"
    core = fresh()
    del os.environ["VBX_CNN_SIM_SIZE"]
    check(so.model_check_configuration(padded, c_void_p(core)) == 0, "model_check_configuration: 0 for the same size")
    check(start(core, padded, io) == 0, "a V1000 core runs the V1000 model")
    check(so.vbx_cnn_model_poll(c_void_p(core)) == 0, "poll: 0 once the run is done")
    check(so.vbx_cnn_model_poll(c_void_p(core)) == -2, "poll: -2 after that (nothing running)")
    so.vnnx_sim_free(c_void_p(core))
    os.environ["VBX_CNN_SIM_SIZE"] = "V9"
    check(so.vbx_cnn_init(None) is None, "vbx_cnn_init: NULL for an invalid VBX_CNN_SIM_SIZE")
    del os.environ["VBX_CNN_SIM_SIZE"]

    # Null io pointers: the array, one buffer, the model.
    for what, call in (("a null io array", lambda c: so.vbx_cnn_model_start(c_void_p(c), padded, None)),
                       ("a null output buffer", lambda c: start(c, padded, io[:-1] + [None])),
                       ("a null model", lambda c: start(c, None, io))):
        core = fresh()
        check(call(core) == -1, "start refuses " + what)
        check(so.vbx_cnn_get_error_val(c_void_p(core)) == 6, what + ": INVALID_NETWORK_ADDRESS")
        check(so.vbx_cnn_get_state(c_void_p(core)) == 8, what + ": state ERROR")
        so.vnnx_sim_free(c_void_p(core))
    check(so.vbx_cnn_model_start(None, padded, None) == -1, "start on a null core: -1")
    check(so.vbx_cnn_model_poll(None) == -2, "poll on a null core: -2")

    # Indices out of range.
    m = c_char_p(padded)
    check(so.model_get_input_length(m, c_int(n_io)) == ctypes.c_size_t(-1).value, "input length: index out of range")
    check(so.model_get_output_dims(m, c_int(-1)) == ctypes.c_size_t(-1).value, "output dims: negative index")
    check(not so.model_get_output_shape(m, c_int(model.num_outputs)), "output shape: NULL out of range")
    check(so.model_get_test_input(m, c_int(model.num_inputs)) is None, "test input: NULL out of range")
    check(so.model_get_input_datatype(m, c_int(99)) == 4, "datatype: UNKNOWN out of range")
    # A header whose data_bytes is short of the records: the accessors find nothing, start refuses.
    short = bytearray(padded)
    short[36:40] = (100).to_bytes(4, "little")
    short = bytes(short)
    check(so.model_get_input_length(short, c_int(0)) == ctypes.c_size_t(-1).value, "data_bytes short: no input length")
    core = fresh()
    check(start(core, short, io) == -1 and so.vbx_cnn_get_error_val(c_void_p(core)) == 7,
          "data_bytes short: start refuses with MODEL_BLOB_INVALID")
    so.vnnx_sim_free(c_void_p(core))


def mutants(a, so, vnnx):
    """Damaged models through the accessors and a start: each start returns 0 or -1 with an error
    value the API defines, and nothing crashes (the ASan build runs this too)."""
    good = bytearray(open(vnnx, "rb").read())
    allocate = int.from_bytes(good[40:44], "little")
    rng = np.random.default_rng(11)
    records_end = min(len(good), 4096)  # the header, node, layer and tensor records of the demo
    outcomes = {0: 0, -1: 0}
    for k in range(150):
        bad = bytearray(good)
        for _ in range(1 + k % 4):
            at = int(rng.integers(0, records_end))
            bad[at] = int(rng.integers(0, 256))
        m = bytes(bad) + bytes(max(0, allocate - len(bad)))
        for i in range(2):
            so.model_get_input_length(m, c_int(i))
            so.model_get_output_shape(c_char_p(m), c_int(i))
            so.model_get_test_input(c_char_p(m), c_int(i))
            so.model_get_output_datatype(c_char_p(m), c_int(i))
        # More io buffers than the damaged header may declare, each larger than the demo's io.
        bufs = [np.zeros(65536, dtype=np.int8) for _ in range(64)]
        io = (c_void_p * 64)(*[ctypes.cast(np.ctypeslib.as_ctypes(b), c_void_p) for b in bufs])
        # The core reads and writes as many bytes as the model declares (the firmware's contract):
        # a mutant whose io would not fit the buffers is only read through the accessors.
        n_in, n_out = so.model_get_num_inputs(m), so.model_get_num_outputs(m)
        elem = {0: 1, 1: 1, 2: 2, 3: 4}
        sizes = [so.model_get_input_length(m, c_int(i)) * elem.get(so.model_get_input_datatype(m, c_int(i)), 1 << 20)
                 for i in range(min(n_in, 65))] + \
                [so.model_get_output_length(m, c_int(o)) * elem.get(so.model_get_output_datatype(m, c_int(o)), 1 << 20)
                 for o in range(min(n_out, 65))]
        if n_in + n_out > 64 or any(n > 65536 for n in sizes):
            outcomes["too large to run"] = outcomes.get("too large to run", 0) + 1
            continue
        core = so.vbx_cnn_init(None)
        r = so.vbx_cnn_model_start(c_void_p(core), m, io)
        err = so.vbx_cnn_get_error_val(c_void_p(core))
        ok = (r == 0 and err == 0) or (r == -1 and err in (6, 7, 8, 9))
        check(ok, "mutant {}: start {} with error value {}".format(k, r, err))
        outcomes[r] = outcomes.get(r, 0) + 1
        so.vnnx_sim_free(c_void_p(core))
    print("mutants: {} ran, {} refused, {} with io too large to run".format(
        outcomes.get(0, 0), outcomes.get(-1, 0), outcomes.get("too large to run", 0)))
    check(outcomes.get(0, 0) > 0 and outcomes.get(-1, 0) > 0, "mutants both ran and were refused")


def padded_library(a, demo):
    """The SDK's c.py loads only a file of at least 2114408 bytes; examples/vbx_cnn_sim pads a
    copy with a section that is never loaded. The padded copy must still load and run."""
    lib = os.path.join(a.lib_dir, "libvbx_cnn_sim.so")
    out_dir = os.path.join(a.work, "padded")
    os.makedirs(out_dir, exist_ok=True)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "vbx_cnn_sim",
                          "pad_for_sdk.sh")
    r = run(["bash", script, lib, os.path.join(out_dir, "libvbx_cnn_sim.so")])
    check(r.returncode == 0, "pad_for_sdk.sh ran")
    size = os.path.getsize(os.path.join(out_dir, "libvbx_cnn_sim.so"))
    check(size >= SDK_MIN_LIBRARY_BYTES, "the padded library has {} bytes, at least the SDK's {}".format(
        size, SDK_MIN_LIBRARY_BYTES))
    r = run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sdk_style_client.py"),
             out_dir, demo], python=True)
    check(r.returncode == 0 and "CHECKSUM" in r.stdout, "the padded library runs the demo")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--models")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    so = sdk.load(a.lib_dir)
    so.vnnx_sim_free.argtypes = [c_void_p]

    demo_tfl = os.path.join(a.work, "demo.tflite")
    demo = os.path.join(a.work, "demo.vnnx")
    check(run([a.tool, "demo", "--save", demo_tfl]).returncode == 0, "vnnx demo --save")
    check(run([a.tool, "compile", "-t", demo_tfl, "-s", "V1000", "-o", demo]).returncode == 0, "compile the demo")
    model_case(a, so, "demo", demo)
    bad_use(a, so, demo)
    mutants(a, so, demo)
    padded_library(a, demo)

    if a.models and os.path.isdir(a.models):
        for f in SHARED_MODELS:
            path = os.path.join(a.models, f)
            if not os.path.exists(path):
                print("skipped (absent): " + f)
                continue
            name = f.rsplit(".", 1)[0]
            vnnx = os.path.join(a.work, name + ".vnnx")
            ok = run([a.tool, "compile", "-t", path, "-s", "V1000", "-o", vnnx]).returncode == 0
            check(ok, "compile " + f)
            if ok:
                model_case(a, so, name, vnnx)
    else:
        print("WARNING: shared models absent; only the demo model ran")

    print("{} passed, {} failed".format(passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A ctypes client of libvbx_cnn_sim.so that makes the calls the VectorBlox SDK's Python
package makes (vbx/sim/c.py, through vbx.sim.Model): the library loaded with numpy's
load_library, the same restypes, the model passed as Python bytes padded to its allocate size,
numpy arrays as io buffers, start then poll, and the simulator statistics after every run.

    sdk_style_client.py LIB_DIR MODEL.vnnx [--input X.npy ...] [--out DIR]

Runs the model's embedded test input (or the given .npy inputs, channels-first as the model's
tensors are), prints a Fletcher-32 checksum of the outputs and, with --out, writes each output
as DIR/output_<o>.npy (flat, as the SDK returns it)."""
import argparse
import ctypes
import os
import sys
from ctypes import c_char_p, c_float, c_int, c_size_t, c_uint64, c_void_p

import numpy as np


def load(lib_dir):
    """The library, loaded as the SDK loads it."""
    so = np.ctypeslib.load_library("libvbx_cnn_sim.so", lib_dir)
    so.vbx_cnn_init.restype = c_void_p
    so.vbx_cnn_get_error_val.restype = c_int
    for name in ("output_length", "input_length", "input_dims", "output_dims", "num_inputs", "num_outputs",
                 "data_bytes", "allocate_bytes"):
        getattr(so, "model_get_" + name).restype = c_size_t
    so.model_get_output_shape.restype = ctypes.POINTER(c_int)
    so.model_get_input_shape.restype = ctypes.POINTER(c_int)
    so.model_get_test_input.restype = c_void_p
    so.model_get_test_output.restype = c_void_p
    so.model_get_input_scale_value.restype = c_float
    so.model_get_output_scale_value.restype = c_float
    so.model_get_output_zeropoint.restype = c_int
    so.model_get_input_zeropoint.restype = c_int
    so.model_get_input_offset.restype = c_int
    so.model_get_output_offset.restype = c_int
    so.vbxsim_get_instructions.restype = c_uint64
    so.vbxsim_get_stats.restype = SimulatorStats
    so.vnnx_sim_error_message.restype = c_char_p
    so.vnnx_sim_error_message.argtypes = [c_void_p]
    return so


class SimulatorStats(ctypes.Structure):
    """The SDK simulator's statistics block (vbxsim_stats_t)."""
    _fields_ = [
        ("instruction_cycles", ctypes.c_uint64 * 3 * 48),
        ("instruction_count", ctypes.c_uint64 * 48),
        ("accumulate_cycles", ctypes.c_uint64 * 3),
        ("set_vl", ctypes.c_uint64),
        ("set_2D", ctypes.c_uint64),
        ("set_3D", ctypes.c_uint64),
        ("dma_bytes", ctypes.c_uint64),
        ("dma_calls", ctypes.c_uint64),
        ("dma_cycles", ctypes.c_uint64 * 9),
    ]


def dtype_of(e):
    """A calc type as c.py maps it (3 and 4 both read as int32)."""
    if e == 0:
        return np.dtype(np.uint8)
    if e == 1:
        return np.dtype(np.int8)
    if e == 2:
        return np.dtype(np.int16)
    if e in (3, 4):
        return np.dtype(np.int32)
    raise NotImplementedError("Unknown type enum ({})".format(e))


def fletcher32(data):
    """The checksum the SDK prints (16-bit words, sums mod 65535)."""
    raw = data.tobytes()
    if len(raw) % 2:
        raw += b"\x00"
    words = np.frombuffer(raw, dtype=np.uint16).astype(np.uint64)
    c0 = c1 = 0
    for i in range(0, len(words), 360):
        block = words[i:i + 360]
        sums = np.cumsum(block) + c0
        c1 = int((c1 + int(sums.sum())) % 65535)
        c0 = int(sums[-1] % 65535)
    return (c1 << 16) | c0


class Model:
    """vbx.sim.Model's sequence of calls."""

    def __init__(self, so, vbx_cnn, model_bytes):
        self.so, self.vbx_cnn = so, vbx_cnn
        if type(model_bytes) is not bytes:
            raise TypeError("Model parameter must be bytes")
        if so.model_check_sanity(model_bytes) != 0:
            raise ValueError("Does not appear to be a valid model")
        allocate = so.model_get_allocate_bytes(model_bytes)
        if allocate > len(model_bytes):
            model_bytes = model_bytes + bytes(allocate - len(model_bytes))
        self.model_bytes = m = model_bytes
        self.size_conf = so.model_get_size_conf(c_char_p(m))
        self.num_inputs = so.model_get_num_inputs(c_char_p(m))
        self.num_outputs = so.model_get_num_outputs(c_char_p(m))
        ins, outs = range(self.num_inputs), range(self.num_outputs)
        self.input_lengths = [so.model_get_input_length(c_char_p(m), c_int(i)) for i in ins]
        self.output_lengths = [so.model_get_output_length(c_char_p(m), c_int(o)) for o in outs]
        self.input_dims = [so.model_get_input_dims(c_char_p(m), c_int(i)) for i in ins]
        self.output_dims = [so.model_get_output_dims(c_char_p(m), c_int(o)) for o in outs]
        self.input_shape = [self._shape(so.model_get_input_shape, i, self.input_dims[i]) for i in ins]
        self.output_shape = [self._shape(so.model_get_output_shape, o, self.output_dims[o]) for o in outs]
        self.input_dtypes = [dtype_of(so.model_get_input_datatype(c_char_p(m), c_int(i))) for i in ins]
        self.output_dtypes = [dtype_of(so.model_get_output_datatype(c_char_p(m), c_int(o))) for o in outs]
        self.input_scale_factor = [so.model_get_input_scale_value(m, i) for i in ins]
        self.output_scale_factor = [so.model_get_output_scale_value(m, o) for o in outs]
        self.input_zeropoint = [so.model_get_input_zeropoint(m, i) for i in ins]
        self.output_zeropoint = [so.model_get_output_zeropoint(m, o) for o in outs]
        self.input_offsets = [so.model_get_input_offset(m, i) for i in ins]
        self.output_offsets = [so.model_get_output_offset(m, o) for o in outs]
        self.test_input = [self._vector(so.model_get_test_input, i, self.input_dtypes[i], self.input_lengths[i])
                           for i in ins]
        self.test_output = [self._vector(so.model_get_test_output, o, self.output_dtypes[o], self.output_lengths[o])
                            for o in outs]

    def _shape(self, fn, index, dims):
        ret = fn(c_char_p(self.model_bytes), c_int(index))
        return [ret[d] for d in range(dims)]

    def _vector(self, fn, index, dtype, length):
        ptr = fn(c_char_p(self.model_bytes), c_int(index))
        if ptr is None:
            return None
        cptr = ctypes.cast(ptr, ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype)))
        return np.ctypeslib.as_array(cptr, shape=(length,)).copy()

    def start(self, io_buffers):
        for k, b in enumerate(io_buffers):
            want = self.input_dtypes[k] if k < self.num_inputs else self.output_dtypes[k - self.num_inputs]
            if want != b.dtype:
                raise TypeError("io buffer {} expected {} got {}".format(k, want, b.dtype))
        pointers = [ctypes.cast(np.ctypeslib.as_ctypes(b), c_void_p) for b in io_buffers]
        array = (c_void_p * len(io_buffers))(*pointers)
        return self.so.vbx_cnn_model_start(c_void_p(self.vbx_cnn), self.model_bytes, array)

    def run(self, inputs):
        outputs = [np.zeros(n, dtype=t) for n, t in zip(self.output_lengths, self.output_dtypes)]
        self.start(list(inputs) + outputs)
        while True:
            status = self.so.vbx_cnn_model_poll(c_void_p(self.vbx_cnn))
            if status <= 0:
                break
        if status < 0:
            raise RuntimeError("error register {}: {}".format(
                self.so.vbx_cnn_get_error_val(c_void_p(self.vbx_cnn)),
                self.so.vnnx_sim_error_message(self.vbx_cnn).decode()))
        self.stats = self.so.vbxsim_get_stats()
        return outputs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lib_dir")
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--out")
    a = ap.parse_args()
    so = load(a.lib_dir)
    vbx_cnn = so.vbx_cnn_init(None)
    with open(a.model, "rb") as f:
        model = Model(so, vbx_cnn, f.read())
    if a.input:
        inputs = [np.load(p).reshape(-1) for p in a.input]
    else:
        inputs = model.test_input
        if any(v is None for v in inputs):
            sys.exit("{}: the model embeds no test input; pass --input".format(a.model))
    outputs = model.run(inputs)
    checksum = fletcher32(outputs[0])
    for o in outputs[1:]:
        checksum ^= fletcher32(o)
    print("CHECKSUM = 0x{:08x}".format(checksum))
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        for k, o in enumerate(outputs):
            np.save(os.path.join(a.out, "output_{}.npy".format(k)), o)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Task-level agreement of the simulator with TensorFlow Lite on real photographs.

For each model: every photo is resized (centre crop, bilinear) to the model's input, mapped to the
real range its input quantization implies ([0, 1], [-1, 1] or [0, 255]) and quantized with it; TFLite
(tflite_ref.js, its own interpreter) and the simulator (`vnnx infer` on the compiled file, one
batch) run on the same integer input. Printed per model, as a Markdown table row:

  classifiers  top-1 agreement, TFLite's top-1 within the simulator's top-5, near-ties among the
               flips (TFLite's top two within 2 LSB), largest output difference in LSB, share of
               output elements within 1 LSB
  segmentation share of pixels with the same label (ARG_MAX output, or argmax of the scores)
  other        the LSB statistics only

  scripts/photo_agreement.py --photos DIR [--models DIR] [--vnnx PATH] [--tflite-ref PATH]
                             [--work DIR] [--keep N] [--calibrate-folds K] [--isolate N]
                             [MODEL.tflite ...]

--isolate N also runs `vnnx compare --isolate` on the first N photos (each node alone on
TFLite's tensors) and prints, per model, how many node output elements differ from TFLite and the
largest difference, with the fold's calibration when --calibrate-folds is given.

--calibrate-folds K (K >= 2) measures records fitted to calibration data (`vnnx compile
--calibrate`) without judging a photo by records fitted to it: the photos are split into K folds
(near-duplicates such as cat.bmp and resized_cat.bmp in the same fold), and each fold runs on a
file compiled with the other folds' photos as calibration inputs.

--keep N writes, for the first N photos of each model, the quantized input and both outputs into
--work/<model>/case_<k>/ (the small stored cases of the tests come from there).
Needs numpy and Pillow (Debian: python3-numpy, python3-pil) and Node.js for tflite_ref.js.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

DEFAULT_MODELS = [
    "coral-test-data__mobilenet_v1_0.25_128_quant.tflite",
    "coral-test-data__tf2_mobilenet_v2_1.0_224_ptq.tflite",
    "mlcommons-tiny__vww_96_int8.tflite",
    "tflite-micro__person_detect.tflite",
    "mlcommons-tiny__pretrainedResnet_quant.tflite",
    "coral-test-data__deeplabv3_mnv2_dm05_pascal_quant.tflite",
]

RANGE = {"int8": (-128, 127), "uint8": (0, 255)}


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def photos_in(folder):
    names = sorted(f for f in os.listdir(folder) if f.lower().endswith((".bmp", ".jpg", ".jpeg", ".png")))
    if not names:
        sys.exit(f"{folder}: no .bmp, .jpg or .png photos")
    return [os.path.join(folder, n) for n in names]


def fold_of(photos, k):
    """Fold index per photo (all 0 when k is 0); photos of one subject share a fold."""
    if not k:
        return [0] * len(photos)
    def subject(p):
        n = os.path.basename(p).lower().removeprefix("resized_")
        return n.split("_")[0].split(".")[0]
    subjects = sorted({subject(p) for p in photos})
    return [subjects.index(subject(p)) % k for p in photos]


def real_range(scale, zero, dtype):
    lo, hi = RANGE[dtype]
    return scale * (lo - zero), scale * (hi - zero)


def preprocess(path, shape, dtype, scale, zero):
    """The photo as the model's integer input: centre crop, bilinear resize, the standard mapping."""
    _, h, w, c = shape
    img = Image.open(path).convert("L" if c == 1 else "RGB")
    side = min(img.size)
    left, top = (img.size[0] - side) // 2, (img.size[1] - side) // 2
    img = img.crop((left, top, left + side, top + side)).resize((w, h), Image.BILINEAR)
    px = np.asarray(img, dtype=np.float64).reshape(h, w, c)
    lo, hi = real_range(scale, zero, dtype)
    # The preprocessing the quantization was calibrated for: the real range it covers.
    if lo > -0.1 and 0.9 < hi < 1.1:
        real = px / 255.0
    elif -1.1 < lo < -0.9 and 0.9 < hi < 1.1:
        real = px / 127.5 - 1.0
    elif lo > -1 and 200 < hi < 300:
        real = px
    else:  # an unusual range: spread the pixels over it
        real = lo + (hi - lo) * px / 255.0
    q = np.clip(np.round(real / scale) + zero, *RANGE[dtype])
    return q.astype(dtype).reshape(shape)


def info(vnnx, model):
    return json.loads(run([vnnx, "info", model, "--json"]))


def topk(v, k):
    return list(np.argsort(-v.astype(np.int64), kind="stable")[:k])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--photos", required=True)
    ap.add_argument("--models", dest="models_dir", default=os.path.join(REPO, "..", "shared", "models"))
    ap.add_argument("--vnnx", default=os.path.join(REPO, "build", "examples", "vnnx"))
    ap.add_argument("--tflite-ref", default=os.path.join(REPO, "..", "shared", "tools", "tflite_ref.js"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--keep", type=int, default=0)
    ap.add_argument("--calibrate-folds", type=int, default=0)
    ap.add_argument("--isolate", type=int, default=0)
    a = ap.parse_args()
    if a.calibrate_folds == 1 or a.calibrate_folds < 0:
        sys.exit("--calibrate-folds needs at least 2 folds")
    models = a.models or [os.path.join(a.models_dir, m) for m in DEFAULT_MODELS]
    photos = photos_in(a.photos)
    work = a.work or tempfile.mkdtemp(prefix="photo_agreement_")
    print(f"{len(photos)} photos from {a.photos}; work folder {work}\n")
    print("| model | photos | top-1 same | TFLite top-1 in top-5 | flips that are near-ties | pixels same | max LSB | within 1 LSB |")
    print("|---|---|---|---|---|---|---|---|")
    for model in models:
        name = os.path.basename(model).removesuffix(".tflite")
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        j = info(a.vnnx, model)
        if len(j["inputs"]) != 1:
            print(f"| {name} | one image input needed, it has {len(j['inputs'])} |")
            continue
        inp = j["inputs"][0]
        shape, dtype = inp["shape"], inp["dtype"]
        xs = np.stack([preprocess(p, shape, dtype, inp["scale"], inp["zero_point"]) for p in photos])
        # the simulator: one compile and one batch per fold (one fold without calibration)
        folds = fold_of(photos, a.calibrate_folds)
        sim = None
        for f in sorted(set(folds)):
            here = [k for k, x in enumerate(folds) if x == f]
            vn = os.path.join(d, f"m{f}.vnnx")
            cmd = [a.vnnx, "compile", "-t", model, "-s", "V1000", "--no-vectors", "-o", vn]
            if a.calibrate_folds:
                cal = xs[[k for k, x in enumerate(folds) if x != f]]
                np.save(os.path.join(d, f"calibration{f}.npy"), cal.reshape((len(cal),) + tuple(shape[1:])))
                cmd += ["--calibrate", os.path.join(d, f"calibration{f}.npy")]
            run(cmd)
            np.save(os.path.join(d, f"batch{f}.npy"), xs[here])
            out_dir = os.path.join(d, f"sim{f}")
            run([a.vnnx, "infer", vn, "-i", os.path.join(d, f"batch{f}.npy"), "-o", out_dir])
            n_out = len([x for x in os.listdir(out_dir) if x.startswith("output_")])
            part = [np.load(os.path.join(out_dir, f"output_{o}.npy")) for o in range(n_out)]
            if sim is None:
                sim = [np.zeros((len(photos),) + p.shape[1:], p.dtype) for p in part]
            for o in range(n_out):
                sim[o][here] = part[o].reshape((len(here),) + sim[o].shape[1:])
        # TFLite, photo by photo
        ref = [[] for _ in range(n_out)]
        for k, x in enumerate(xs):
            pk = os.path.join(d, f"photo_{k}")
            os.makedirs(pk, exist_ok=True)
            np.save(os.path.join(pk, "input_0.npy"), x)
            run(["node", a.tflite_ref, model, "-i", os.path.join(pk, "input_0.npy"), "-o", pk])
            for o in range(n_out):
                ref[o].append(np.load(os.path.join(pk, f"output_{o}.npy")))
        ref = [np.stack(r) for r in ref]
        for o in range(n_out):
            if sim[o].size == ref[o].size:  # the batch may replace a leading axis of 1
                sim[o] = sim[o].reshape(ref[o].shape)
            if sim[o].shape != ref[o].shape:
                sys.exit(f"{name}: output {o}: simulator shape {sim[o].shape}, TFLite {ref[o].shape}")
        # statistics over every output element
        diffs = np.concatenate([np.abs(s.astype(np.int64) - r.astype(np.int64)).ravel() for s, r in zip(sim, ref)])
        max_lsb, within1 = int(diffs.max()), float(np.mean(diffs <= 1))
        out0 = ref[0]
        n = len(photos)
        cells = ["—"] * 4
        per_photo = np.squeeze(out0[0])
        if out0.dtype in (np.int64, np.int32) or per_photo.ndim >= 2:
            # segmentation: labels, or scores over the last axis
            lab_r = out0 if out0.dtype in (np.int64, np.int32) else np.argmax(out0, axis=-1)
            lab_s = sim[0] if sim[0].dtype in (np.int64, np.int32) else np.argmax(sim[0], axis=-1)
            cells[3] = f"{100.0 * np.mean(lab_r == lab_s):.2f}%"
        else:
            same1 = in5 = ties = 0
            for k in range(n):
                r, s = out0[k].ravel(), sim[0][k].ravel()
                t1 = topk(r, 2)
                if topk(s, 1)[0] == t1[0]:
                    same1 += 1
                else:
                    ties += int(abs(int(r[t1[0]]) - int(r[t1[1]])) <= 2) if r.size > 1 else 0
                in5 += int(t1[0] in topk(s, min(5, s.size)))
            cells[:3] = [f"{same1}/{n}", f"{in5}/{n}", f"{ties} of {n - same1}"]
        print(f"| {name} | {n} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} | {max_lsb} | {100.0 * within1:.1f}% |",
              flush=True)
        if a.isolate:
            differ = elements = worst = 0
            for k in range(min(a.isolate, n)):
                cmd = [a.vnnx, "compare", model, "-i", os.path.join(d, f"photo_{k}", "input_0.npy"), "--isolate"]
                if a.calibrate_folds:
                    cmd += ["--calibrate", os.path.join(d, f"calibration{folds[k]}.npy")]
                r = subprocess.run(cmd, capture_output=True, text=True)
                text = r.stdout.split("per node, each run alone", 1)[-1]
                for m in re.finditer(r"^\s*\d+\s+\S+\s+\S+\s+(\d+)\s+(\d+)\s+(\d+)\s", text, re.M):
                    elements += int(m.group(1))
                    differ += int(m.group(1)) - int(m.group(2))
                    worst = max(worst, int(m.group(3)))
            print(f"|   isolated nodes, {min(a.isolate, n)} photos | {differ} of {elements} node output elements differ "
                  f"({100.0 * differ / max(elements, 1):.3f}%), largest {worst} LSB |", flush=True)
        for k in range(min(a.keep, n)):
            ck = os.path.join(d, f"case_{k}")
            os.makedirs(ck, exist_ok=True)
            np.save(os.path.join(ck, "input_0.npy"), xs[k])
            for o in range(n_out):
                np.save(os.path.join(ck, f"tflite_output_{o}.npy"), ref[o][k])
                np.save(os.path.join(ck, f"sim_output_{o}.npy"), sim[o][k])


if __name__ == "__main__":
    main()

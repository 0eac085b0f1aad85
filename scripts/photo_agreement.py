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
  detectors    a YOLOv8-style output [1, 4 + classes, anchors] (boxes cx, cy, w, h, then class
               scores; letterboxed RGB / 255 input) or RetinaFace's three outputs (landmarks,
               scores, boxes against its priors; BGR minus (104, 117, 123), channels first):
               detections decoded on both sides (score threshold, non-maximum suppression), and
               how many of TFLite's are matched by the simulator's (same class, IoU > 0.5, each
               used once), in a second table
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


def detector_kind(j):
    """'yolo', 'retinaface' or None, from the model's inputs and outputs."""
    outs = j["outputs"]
    if len(outs) == 1 and len(outs[0]["shape"]) == 3 and outs[0]["shape"][1] > 4 and outs[0]["shape"][2] >= 1000:
        return "yolo"
    if len(outs) == 3 and sorted(o["shape"][-1] for o in outs) == [2, 4, 10] and len({o["shape"][1] for o in outs}) == 1:
        return "retinaface"
    return None


def detector_input(path, kind, inp):
    """The photo as a detector's input, and the float TFLite is given when its input is float."""
    shape = inp["shape"]
    if kind == "yolo":
        _, h, w, _ = shape
        img = Image.open(path).convert("RGB")
        r = min(w / img.size[0], h / img.size[1])  # letterbox: aspect kept, grey (114) borders
        nw, nh = max(1, round(img.size[0] * r)), max(1, round(img.size[1] * r))
        canvas = Image.new("RGB", (w, h), (114, 114, 114))
        canvas.paste(img.resize((nw, nh), Image.BILINEAR), ((w - nw) // 2, (h - nh) // 2))
        real = np.asarray(canvas, dtype=np.float64) / 255.0
    else:  # RetinaFace: [1, 3, H, W], BGR minus the training means
        _, _, h, w = shape
        img = Image.open(path).convert("RGB").resize((w, h), Image.BILINEAR)
        bgr = np.asarray(img, dtype=np.float64)[:, :, ::-1] - np.array([104.0, 117.0, 123.0])
        real = bgr.transpose(2, 0, 1)
    return real.reshape(shape)


def quantize(real, scale, zero, dtype):
    return np.clip(np.round(real / scale) + zero, *RANGE[dtype]).astype(dtype)


def iou(a, b):
    """IoU of boxes [x1, y1, x2, y2]: a (n, 4) against b (m, 4)."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), axis=2)
    area = lambda x: np.prod(np.clip(x[:, 2:] - x[:, :2], 0, None), axis=1)
    return inter / np.maximum(area(a)[:, None] + area(b)[None, :] - inter, 1e-12)


def nms(boxes, scores, classes, thresh):
    keep = []
    for c in np.unique(classes):
        idx = np.where(classes == c)[0]
        idx = idx[np.argsort(-scores[idx], kind="stable")]
        while idx.size:
            keep.append(idx[0])
            if idx.size == 1:
                break
            idx = idx[1:][iou(boxes[idx[:1]], boxes[idx[1:]])[0] <= thresh]
    keep = np.array(sorted(keep, key=lambda i: -scores[i]), dtype=np.int64)
    return boxes[keep], scores[keep], classes[keep]


def retinaface_priors(h, w):
    """Pytorch_Retinaface's priors (cx, cy, w, h), normalised: steps 8, 16, 32, two sizes each."""
    out = []
    for step, sizes in ((8, (16, 32)), (16, (64, 128)), (32, (256, 512))):
        fh, fw = -(-h // step), -(-w // step)
        for i in range(fh):
            for j in range(fw):
                for s in sizes:
                    out.append(((j + 0.5) * step / w, (i + 0.5) * step / h, s / w, s / h))
    return np.array(out)


def detections(kind, outs, priors=None):
    """Boxes [x1, y1, x2, y2], scores and classes of one photo's real-valued outputs."""
    if kind == "yolo":
        y = outs[0].reshape(outs[0].shape[-2:])
        cls = y[4:]
        c, s = np.argmax(cls, axis=0), np.max(cls, axis=0)
        m = s > 0.25
        cx, cy, w, h = y[0, m], y[1, m], y[2, m], y[3, m]
        boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
        return nms(boxes, s[m], c[m], 0.7)
    by_width = {o.shape[-1]: o.reshape(o.shape[-2:]) for o in outs}
    conf, loc = by_width[2], by_width[4]  # (10: the landmarks, not matched)
    s = conf[:, 1]
    m = s > 0.5
    p, l = priors[m], loc[m]
    ctr = p[:, :2] + l[:, :2] * 0.1 * p[:, 2:]
    wh = p[:, 2:] * np.exp(l[:, 2:] * 0.2)
    boxes = np.concatenate([ctr - wh / 2, ctr + wh / 2], axis=1)
    return nms(boxes, s[m], np.zeros(int(m.sum()), np.int64), 0.4)


def match(ref, sim):
    """How many of TFLite's detections one of the simulator's matches (same class, IoU > 0.5)."""
    (rb, _, rc), (sb, _, sc) = ref, sim
    used = np.zeros(len(sb), bool)
    hit = 0
    if len(rb) and len(sb):
        ov = iou(rb, sb)
        for i in range(len(rb)):  # in TFLite's score order
            cand = [j for j in np.argsort(-ov[i]) if not used[j] and sc[j] == rc[i] and ov[i, j] > 0.5]
            if cand:
                used[cand[0]] = True
                hit += 1
    return hit, int((~used).sum())


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
    detector_rows = []
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
        kind = detector_kind(j)
        if kind:
            detector_rows.append(detector_row(a, model, name, d, kind, j, photos))
            continue
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
    if detector_rows:
        print("\n| model | photos | TFLite detections | matched (same class, IoU > 0.5) | simulator's unmatched | max LSB | within 1 LSB |")
        print("|---|---|---|---|---|---|---|")
        for r in detector_rows:
            print(r)


def detector_row(a, model, name, d, kind, j, photos):
    """Detections of TFLite and of the simulator on every photo, matched; one table row."""
    inp = j["inputs"][0]
    vn = os.path.join(d, "m.vnnx")
    run([a.vnnx, "compile", "-t", model, "-s", "V1000", "--no-vectors", "-o", vn])
    v = info(a.vnnx, vn)  # the VNNX io: integer, with the quantization of the folded QUANTIZE/DEQUANTIZE
    vin = v["inputs"][0]
    reals = [detector_input(p, kind, inp) for p in photos]
    xs = np.stack([quantize(r, vin["scale"], vin["zero_point"], vin["dtype"]) for r in reals])
    np.save(os.path.join(d, "batch.npy"), xs)
    out_dir = os.path.join(d, "sim")
    run([a.vnnx, "infer", vn, "-i", os.path.join(d, "batch.npy"), "-o", out_dir])
    outs_q = [(o, np.load(os.path.join(out_dir, f"output_{k}.npy"))) for k, o in enumerate(v["outputs"])]
    priors = retinaface_priors(inp["shape"][2], inp["shape"][3]) if kind == "retinaface" else None
    total = hit = extra = max_lsb = 0
    close = elements = 0
    for k, x in enumerate(xs):
        pk = os.path.join(d, f"photo_{k}")
        os.makedirs(pk, exist_ok=True)
        # TFLite takes the float input its QUANTIZE turns into exactly x, or x itself.
        feed = x if inp["dtype"] == vin["dtype"] else ((x.astype(np.float64) - vin["zero_point"]) * vin["scale"]).astype(np.float32)
        np.save(os.path.join(pk, "input_0.npy"), feed.reshape(inp["shape"]))
        run(["node", a.tflite_ref, model, "-i", os.path.join(pk, "input_0.npy"), "-o", pk])
        ref_real, sim_real = [], []
        for o, (vo, q) in enumerate(outs_q):
            r = np.load(os.path.join(pk, f"output_{o}.npy"))
            s = q[k].reshape(r.shape).astype(np.int64)
            rq = r.astype(np.int64) if r.dtype != np.float32 else np.round(r / vo["scale"]).astype(np.int64) + vo["zero_point"]
            diff = np.abs(s - rq)
            max_lsb, close, elements = max(max_lsb, int(diff.max())), close + int((diff <= 1).sum()), elements + diff.size
            ref_real.append((rq - vo["zero_point"]) * vo["scale"])
            sim_real.append((s - vo["zero_point"]) * vo["scale"])
        rd, sd = detections(kind, ref_real, priors), detections(kind, sim_real, priors)
        h, e = match(rd, sd)
        total, hit, extra = total + len(rd[0]), hit + h, extra + e
    share = f"{hit}/{total} ({100.0 * hit / total:.1f}%)" if total else "0/0"
    return f"| {name} | {len(photos)} | {total} | {share} | {extra} | {max_lsb} | {100.0 * close / max(elements, 1):.1f}% |"


if __name__ == "__main__":
    main()

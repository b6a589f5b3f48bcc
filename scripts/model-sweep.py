#!/usr/bin/python3
"""Try tsaot on models nobody on the team wrote: a measurement, not a test.

    /usr/bin/python3 scripts/model-sweep.py [--build build] [--baseline OTHER_BUILD]
        [--only resnet,regnet] [--timeout 600] [--threads 1] [--jobs 1]
        [--total-time S] [--keep DIR] [--json FILE] [--list]

For torchvision 0.14's classification, segmentation, detection, video and
optical-flow models and torchaudio 0.13's wav2vec2/HuBERT, Conformer,
ConvTasNet, DeepSpeech, WaveRNN, Tacotron2 (inference) and HDemucs (random
weights, eval mode, small configurations where the constructors allow, small
inputs), each in a temporary folder:

  1. made by PyTorch in a child process: torch.jit.script where PyTorch can
     script the model, else torch.jit.trace on the example inputs; saved,
     loaded back, and run twice (seeds 0 and 1) for the reference outputs,
     flattened as tsaot-run writes them (a model whose two runs differ is
     random: its reference is a third run from PyTorch's default seed, where
     each tsaot run starts, since tsaot draws as PyTorch's CPU generator does);
  2. loads?    `tsaot-dump model.pt --inlined` (the frontend);
  3. interp    `tsaot-run model.pt ARGS -o OUT` against PyTorch's outputs;
  4. compiled  `tsaot model.pt --example ARGS -o m.so`, then
               `tsaot-run m.so ARGS -o OUT`, against them.

It prints one row per model (model, how made, loads?, interpreter matches?,
compiled matches?, reason: the first thing that went wrong), a summary per
family (models, how many PyTorch made in the time limit, loaded, matched in
the interpreter, compiled and matched), and the operators that block models,
with how many models each blocks: the operators the frontend does not know
(a model that does not load), the operators without a kernel that tsaot's
warning lists as still reached after the passes, and the one a failed run
names ("Could not run 'aten::x'"), counted for models that do not run both
ways. --only takes substrings of model names; --timeout bounds each model
(making it, then loading, running and compiling together, for each build).
--baseline runs a second build (before a change) on the same models, made
once: both tables and summaries, then the models that moved. --jobs sweeps
models side by side (rows print as they finish); --total-time bounds the
whole sweep (the models not done by then are named and left out of the
summaries, and no step runs past it). Outputs compare with numpy.isclose at
rtol 1e-3 and atol 1e-4 times the largest reference magnitude (at least 1);
torchvision's detections may come out permuted among tied scores (within 8
float32 ulps: sorting orders ties arbitrarily; PyTorch's own order moves with
its thread count) and the row says how many moved. Where outputs still
differ, PyTorch runs the model once more in float64 (weights and inputs
made float64) and tsaot's outputs count as matching when each is at most
twice as far from that run as PyTorch's float32 output is (the project's
accuracy rule; detections aligned to the float64 run's order first); the
row says so, with both errors.
--json writes the rows (with --baseline: {"before": [...], "after": [...]}).
Needs Debian's python3-torch, python3-torchvision, python3-torchaudio and
python3-numpy; the build's tools are found in --build (default: build).
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# ------------------------------------------------------------------ models
# name -> (family, builder); a builder returns (module, [inputs]) where an
# input is a tensor or a list of tensors.


def _tv():
    import torchvision.models as m
    return m


def _img(n=64, c=3, b=1):
    import torch
    return torch.rand(b, c, n, n)


def classification(name, size=64, **kw):
    def build():
        mod = getattr(_tv(), name)(weights=None, num_classes=10, **kw)
        return mod, [_img(size)]
    return ("classification", build)


def segmentation(name, **kw):
    def build():
        mod = getattr(_tv().segmentation, name)(weights=None, weights_backbone=None, num_classes=5, **kw)
        return mod, [_img(64)]
    return ("segmentation", build)


def detection(name, size=128, **kw):
    def build():
        import torch
        mod = getattr(_tv().detection, name)(weights=None, weights_backbone=None, num_classes=3, **kw)
        return mod, [[torch.rand(3, size, size)]]
    return ("detection", build)


def video(name, t=4, size=32, **kw):
    def build():
        import torch
        mod = getattr(_tv().video, name)(weights=None, num_classes=5, **kw)
        return mod, [torch.rand(1, 3, t, size, size)]
    return ("video", build)


def flow(name):
    def build():
        import torch

        class Flow(torch.nn.Module):
            # num_flow_updates is forward's argument (default 12), not the
            # constructor's
            def __init__(self):
                super().__init__()
                self.m = getattr(_tv().optical_flow, name)(weights=None)

            def forward(self, a, b):
                return self.m(a, b, num_flow_updates=2)
        return Flow(), [_img(64), _img(64)]
    return ("optical flow", build)


def _wav2vec2_small():
    import torch
    import torchaudio
    mod = torchaudio.models.wav2vec2_model(
        extractor_mode="group_norm", extractor_conv_layer_config=[(16, 10, 5), (16, 3, 2), (16, 2, 2)],
        extractor_conv_bias=False, encoder_embed_dim=32, encoder_projection_dropout=0.0,
        encoder_pos_conv_kernel=16, encoder_pos_conv_groups=4, encoder_num_layers=2, encoder_num_heads=4,
        encoder_attention_dropout=0.0, encoder_ff_interm_features=64, encoder_ff_interm_dropout=0.0,
        encoder_dropout=0.0, encoder_layer_norm_first=False, encoder_layer_drop=0.0, aux_num_out=10)
    return mod, [torch.rand(1, 1600) * 2 - 1]


def _audio_base(fn):
    def build():
        import torch
        import torchaudio
        return getattr(torchaudio.models, fn)(), [torch.rand(1, 4000) * 2 - 1]
    return build


def _conformer():
    import torch
    import torchaudio

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = torchaudio.models.Conformer(input_dim=16, num_heads=2, ffn_dim=32, num_layers=2,
                                                 depthwise_conv_kernel_size=3)

        def forward(self, x, lengths):
            return self.m(x, lengths)
    return M(), [torch.rand(1, 20, 16), torch.tensor([20])]


def _convtasnet():
    import torch
    import torchaudio
    mod = torchaudio.models.ConvTasNet(num_sources=2, enc_kernel_size=16, enc_num_feats=32, msk_kernel_size=3,
                                       msk_num_feats=16, msk_num_hidden_feats=32, msk_num_layers=2,
                                       msk_num_stacks=2)
    return mod, [torch.rand(1, 1, 800) * 2 - 1]


def _deepspeech():
    import torch
    import torchaudio
    return torchaudio.models.DeepSpeech(n_feature=16, n_hidden=32, n_class=10), [torch.rand(1, 1, 20, 16)]


def _wavernn():
    import torch
    import torchaudio
    mod = torchaudio.models.WaveRNN(upsample_scales=[2, 2], n_classes=16, hop_length=4, n_res_block=1, n_rnn=16,
                                    n_fc=16, kernel_size=5, n_freq=8, n_hidden=8, n_output=8)
    n_time = 10
    return mod, [torch.rand(1, 1, (n_time - 5 + 1) * 4) * 2 - 1, torch.rand(1, 1, 8, n_time)]


def _tacotron2():
    import torch
    import torchaudio

    class Infer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = torchaudio.models.Tacotron2(
                mask_padding=False, n_mels=8, n_symbol=20, n_frames_per_step=1, symbol_embedding_dim=16,
                encoder_embedding_dim=16, encoder_n_convolution=1, encoder_kernel_size=3, decoder_rnn_dim=16,
                decoder_max_step=20, decoder_dropout=0.0, decoder_early_stopping=True, attention_rnn_dim=16,
                attention_hidden_dim=16, attention_location_n_filter=4, attention_location_kernel_size=3,
                attention_dropout=0.0, prenet_dim=16, postnet_n_convolution=1, postnet_kernel_size=3,
                postnet_embedding_dim=16, gate_threshold=0.5)

        def forward(self, tokens, lengths):
            return self.m.infer(tokens, lengths)
    return Infer(), [torch.randint(0, 20, (1, 6)), torch.tensor([6])]


def _hdemucs():
    import torch
    import torchaudio
    mod = torchaudio.models.HDemucs(sources=["a", "b"], audio_channels=1, channels=8, growth=2, nfft=64, depth=2,
                                    freq_emb=0.0)
    return mod, [torch.rand(1, 1, 512) * 2 - 1]


MODELS = collections.OrderedDict()
for _n in ["alexnet", "convnext_tiny", "densenet121", "efficientnet_b0", "efficientnet_v2_s", "mnasnet0_5",
           "mobilenet_v2", "mobilenet_v3_large", "mobilenet_v3_small", "regnet_x_400mf", "regnet_y_400mf",
           "resnet18", "resnet50", "resnext50_32x4d", "shufflenet_v2_x0_5", "squeezenet1_0", "squeezenet1_1",
           "swin_t", "swin_v2_t", "vgg11", "vgg11_bn", "wide_resnet50_2"]:
    MODELS[_n] = classification(_n)
MODELS["googlenet"] = classification("googlenet", aux_logits=False, init_weights=True)
MODELS["inception_v3"] = classification("inception_v3", size=80, aux_logits=False, init_weights=True)
MODELS["maxvit_t"] = classification("maxvit_t", size=224)
MODELS["vit_b_16"] = classification("vit_b_16", image_size=64)
MODELS["vit_b_32"] = classification("vit_b_32", image_size=64)
for _n in ["deeplabv3_mobilenet_v3_large", "deeplabv3_resnet50", "fcn_resnet50", "lraspp_mobilenet_v3_large"]:
    MODELS[_n] = segmentation(_n)
for _n in ["fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn_v2", "fasterrcnn_mobilenet_v3_large_fpn",
           "fasterrcnn_mobilenet_v3_large_320_fpn", "fcos_resnet50_fpn", "retinanet_resnet50_fpn",
           "retinanet_resnet50_fpn_v2", "maskrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn_v2",
           "keypointrcnn_resnet50_fpn"]:
    MODELS[_n] = detection(_n, min_size=128, max_size=128)
MODELS["ssd300_vgg16"] = detection("ssd300_vgg16", size=300)
MODELS["ssdlite320_mobilenet_v3_large"] = detection("ssdlite320_mobilenet_v3_large", size=320)
for _n in ["r3d_18", "mc3_18", "r2plus1d_18"]:
    MODELS[_n] = video(_n)
# s3d ends in a fixed AvgPool3d((2, 7, 7)): its input must reach 2x7x7
# after the stem and pools (T/8, H/32), so 16 frames of 224x224
MODELS["s3d"] = video("s3d", t=16, size=224)
MODELS["mvit_v1_b"] = video("mvit_v1_b", t=16, size=224)
MODELS["mvit_v2_s"] = video("mvit_v2_s", t=16, size=224)
MODELS["raft_small"] = flow("raft_small")
MODELS["raft_large"] = flow("raft_large")
MODELS["wav2vec2_small"] = ("audio", _wav2vec2_small)
MODELS["wav2vec2_base"] = ("audio", _audio_base("wav2vec2_base"))
MODELS["hubert_base"] = ("audio", _audio_base("hubert_base"))
MODELS["conformer"] = ("audio", _conformer)
MODELS["conv_tasnet"] = ("audio", _convtasnet)
MODELS["deepspeech"] = ("audio", _deepspeech)
MODELS["wavernn"] = ("audio", _wavernn)
MODELS["tacotron2"] = ("audio", _tacotron2)
MODELS["hdemucs"] = ("audio", _hdemucs)


# ------------------------------------------------------ the PyTorch side


def flatten(v, out):
    """A return value flattened depth-first, as tsaot-run writes it."""
    import numpy as np
    import torch
    if isinstance(v, torch.Tensor):
        out.append(v.detach().contiguous().numpy())
    elif isinstance(v, bool):
        out.append(np.array(v, dtype=np.bool_))
    elif isinstance(v, int):
        out.append(np.array(v, dtype=np.int64))
    elif isinstance(v, float):
        out.append(np.array(v, dtype=np.float64))
    elif isinstance(v, list) and v and all(type(e) is bool for e in v):
        out.append(np.array(v, dtype=np.bool_))
    elif isinstance(v, list) and all(type(e) is int for e in v):
        out.append(np.array(v, dtype=np.int64))
    elif isinstance(v, list) and v and all(type(e) is float for e in v):
        out.append(np.array(v, dtype=np.float64))
    elif isinstance(v, (list, tuple)):
        for e in v:
            flatten(e, out)
    elif isinstance(v, dict):
        for k in v:
            flatten(v[k], out)
    elif v is None or isinstance(v, str):
        pass
    else:
        raise TypeError("unsupported output %r" % type(v))
    return out


def make(name, d):
    """Child process: the model, its inputs and PyTorch's outputs in d."""
    import io
    import warnings
    import numpy as np
    import torch
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    mod, inputs = MODELS[name][1]()
    mod.eval()
    how = "scripted"
    try:
        sm = torch.jit.script(mod)
    except Exception as e:
        why = str(e).strip().splitlines()[0][:120] if str(e).strip() else type(e).__name__
        how = "traced (script: %s)" % why
        with torch.no_grad():
            sm = torch.jit.trace(mod, tuple(inputs), check_trace=False)
    buf = io.BytesIO()
    torch.jit.save(sm, buf)
    with open(os.path.join(d, "model.pt"), "wb") as f:
        f.write(buf.getvalue())
    loaded = torch.jit.load(io.BytesIO(buf.getvalue()))
    words = []
    for i, x in enumerate(inputs):
        if isinstance(x, list):
            names = []
            for j, t in enumerate(x):
                names.append("in%d_%d.npy" % (i, j))
                np.save(os.path.join(d, names[-1]), t.numpy())
            words += ["["] + names + ["]"]
        else:
            words.append("in%d.npy" % i)
            np.save(os.path.join(d, words[-1]), x.numpy())
    def outputs(seed):
        torch.manual_seed(seed)
        with torch.no_grad():
            return flatten(loaded(*inputs), [])
    outs = [outputs(0), outputs(1)]
    same = len(outs[0]) == len(outs[1]) and all(
        a.shape == b.shape and np.array_equal(a, b, equal_nan=True) for a, b in zip(*outs))
    # tsaot starts every run at PyTorch's default seed: a random model's
    # reference is PyTorch's run from there
    for i, a in enumerate(outs[0] if same else outputs(DEFAULT_SEED)):
        np.save(os.path.join(d, "ref%d.npy" % i), a)
    with open(os.path.join(d, "made.json"), "w") as f:
        json.dump({"how": how, "args": words, "nout": len(outs[0]), "random": not same}, f)


def make64(d):
    """Child process: PyTorch's float64 run of d's model (weights and
    floating inputs made float64) as ref64_N.npy, the yardstick when
    tsaot's float32 outputs and PyTorch's differ: both are judged by their
    distance from it."""
    import warnings
    import numpy as np
    import torch
    import torchvision  # noqa: F401  (registers torchvision::nms and friends)
    try:
        import torchaudio  # noqa: F401
    except ImportError:
        pass
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    with open(os.path.join(d, "made.json")) as f:
        made = json.load(f)

    def arg(name):
        t = torch.from_numpy(np.load(os.path.join(d, name)))
        return t.double() if t.is_floating_point() else t
    inputs, stack = [], None
    for w in made["args"]:
        if w == "[":
            stack = []
        elif w == "]":
            inputs.append(stack)
            stack = None
        elif stack is not None:
            stack.append(arg(w))
        else:
            inputs.append(arg(w))
    m = torch.jit.load(os.path.join(d, "model.pt"))
    m.double()
    torch.manual_seed(DEFAULT_SEED if made["random"] else 0)
    with torch.no_grad():
        outs = flatten(m(*inputs), [])
    for i, a in enumerate(outs):
        np.save(os.path.join(d, "ref64_%d.npy" % i), a)


# ------------------------------------------------------------- tsaot side


SWEEP_END = float("inf")  # --total-time: no step runs past it


def run(cmd, cwd, deadline):
    """(exit status or None on time out, stderr+stdout text)."""
    left = min(deadline, SWEEP_END) - time.monotonic()
    if left <= 1:
        return None, "time limit"
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=left)
    except subprocess.TimeoutExpired:
        return None, "time limit"
    return p.returncode, p.stdout.decode("utf-8", "replace")


DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed (runtime/kernels/random.c)


def _close(g, w, scale):
    """Elementwise: g matches w (numpy.isclose at the sweep's tolerances)."""
    import numpy as np
    return np.isclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-3, atol=1e-4 * scale, equal_nan=True)


def detection_groups(refs):
    """Index lists [boxes, labels, scores, per-box extras...], one per image
    of torchvision's detection outputs (flattened dicts: SSD's put scores
    before labels), or [] when the outputs are not of that form."""
    groups, k = [], 0
    while k < len(refs):
        b = refs[k]
        if not (b.ndim == 2 and b.shape[1] == 4 and b.dtype.kind == "f" and k + 2 < len(refs)):
            return []
        n = b.shape[0]
        il, isc = (k + 1, k + 2) if refs[k + 1].dtype.kind in "iu" else (k + 2, k + 1)  # SSD: scores first
        lab, sc = refs[il], refs[isc]
        if not (lab.shape == (n,) and lab.dtype.kind in "iu" and sc.shape == (n,) and sc.dtype.kind == "f"):
            return []
        g, k = [k, il, isc], k + 3
        while k < len(refs) and refs[k].ndim >= 2 and refs[k].shape[0] == n and refs[k].shape[1:] != (4,):
            g.append(k)
            k += 1
        groups.append(g)
    return groups


def match_tied_rows(got, ref, group, scales):
    """How many detections of one image sit at other positions than
    PyTorch's, when every detection matches one of PyTorch's whose score
    ties with it (within 8 float32 ulps); None when they do not all match.
    Sorting by score orders tied detections arbitrarily (PyTorch's own
    order moves with the thread count), so ties may come out permuted."""
    import numpy as np
    s_ref = ref[group[2]].astype(np.float64)
    s_got = got[group[2]].astype(np.float64)
    n = s_ref.shape[0]
    used = np.zeros(n, dtype=bool)
    moved = 0
    for i in range(n):
        tol = 8 * np.finfo(np.float32).eps * max(1.0, abs(s_ref[i]))
        cands = [j for j in ([i] + list(range(n))) if not used[j] and abs(s_got[j] - s_ref[i]) <= tol]
        for j in cands:
            if all(_close(got[k][j], ref[k][i], scales[k]).all() if ref[k].dtype.kind == "f"
                   else np.array_equal(got[k][j], ref[k][i]) for k in group):
                used[j] = True
                moved += j != i
                break
        else:
            return None
    return moved


def compare(d, outdir, made, notes=None):
    """None when outdir's outputs match the reference, else why not (a
    match up to the order of tied detections is noted in notes)."""
    import numpy as np
    n = made["nout"]
    got = []
    i = 0
    while os.path.exists(os.path.join(outdir, "out%d.npy" % i)):
        got.append(os.path.join(outdir, "out%d.npy" % i))
        i += 1
    if len(got) != n:
        return "%d outputs, PyTorch gave %d" % (len(got), n)
    refs, gots, scales, bad = [], [], [], {}
    for k in range(n):
        w = np.load(os.path.join(d, "ref%d.npy" % k))
        g = np.load(got[k])
        if g.shape != w.shape and g.size == w.size == 1:
            g = g.reshape(w.shape)
        if g.shape != w.shape:
            return "output %d: shape %s, PyTorch %s" % (k, g.shape, w.shape)
        refs.append(w)
        gots.append(g)
        if w.dtype.kind in "biu":
            scales.append(1.0)
            nbad = int(np.count_nonzero(g.astype(np.int64) != w.astype(np.int64)))
            if nbad:
                bad[k] = "output %d: %d of %d elements differ" % (k, nbad, w.size)
            continue
        wf = w.astype(np.float64)
        scales.append(max(1.0, float(np.nanmax(np.abs(wf)))) if wf.size and not np.isnan(wf).all() else 1.0)
        ok = _close(g, w, scales[-1])
        if not ok.all():
            err = np.abs(g.astype(np.float64) - wf)
            bad[k] = "output %d: %d of %d elements off (max abs err %.3g)" % (k, ok.size - int(ok.sum()), ok.size,
                                                                             float(np.nanmax(err)))
    if not bad:
        return None
    rnd = " (PyTorch's output is random: compared with its run at the default seed)" if made["random"] else ""
    first = bad[min(bad)] + rnd
    groups = detection_groups(refs)
    if not groups or not set(bad) <= {k for g in groups for k in g}:
        return first
    moved = 0
    for g in groups:
        if not set(g) & set(bad):
            continue
        m = match_tied_rows(gots, refs, g, scales)
        if m is None:
            return first
        moved += m
    if notes is not None:
        notes.append("%d detections in another order among tied scores" % moved)
    return None


def f64_refs(d, n, deadline):
    """PyTorch's float64 outputs of d's model (made once), or None."""
    import numpy as np
    with F64_LOCK:
        if not os.path.exists(os.path.join(d, "made64.txt")):
            rc, text = run([sys.executable, os.path.abspath(__file__), "--make64", d], d, deadline)
            with open(os.path.join(d, "made64.txt"), "w") as f:
                f.write("ok\n" if rc == 0 else "failed: %s\n" % text.strip()[-300:])
    names = [os.path.join(d, "ref64_%d.npy" % k) for k in range(n)]
    if not all(os.path.exists(p) for p in names) or os.path.exists(os.path.join(d, "ref64_%d.npy" % n)):
        return None
    return [np.load(p) for p in names]


F64_LOCK = threading.Lock()


def align_rows(outs, r64, groups):
    """outs with each image's detections reordered to r64's (nearest box
    and score, greedily): detections sorted by score come in any order
    among near ties, in each of the three runs."""
    import numpy as np
    outs = list(outs)
    for g in groups:
        b, s, b64, s64 = outs[g[0]], outs[g[2]], r64[g[0]], r64[g[2]]
        if b.shape != b64.shape:
            return None
        n = b.shape[0]
        free = list(range(n))
        perm = []
        for i in range(n):
            cost = [float(np.abs(b[j].astype(np.float64) - b64[i]).max() + 1e3 * abs(float(s[j]) - float(s64[i])))
                    for j in free]
            perm.append(free.pop(int(np.argmin(cost))))
        for k in g:
            outs[k] = outs[k][perm]
    return outs


def closer_than_pytorch(d, outdir, made, deadline):
    """When tsaot's float32 outputs and PyTorch's differ: a note when
    tsaot's are, output by output, at most twice as far from PyTorch's
    float64 run as PyTorch's float32 ones are (the project's accuracy
    rule), else None."""
    import numpy as np
    n = made["nout"]
    r64 = f64_refs(d, n, deadline)
    if r64 is None:
        return None
    refs = [np.load(os.path.join(d, "ref%d.npy" % k)) for k in range(n)]
    gots = [np.load(os.path.join(outdir, "out%d.npy" % k)).reshape(refs[k].shape) for k in range(n)]
    if any(r.shape != q.shape for r, q in zip(refs, r64)):
        return None
    groups = detection_groups(refs)
    refs, gots = align_rows(refs, r64, groups), align_rows(gots, r64, groups)
    if refs is None or gots is None:
        return None
    worst_t, worst_p = 0.0, 0.0
    for k in range(n):
        q = r64[k].astype(np.float64)
        if refs[k].dtype.kind in "biu":
            if not np.array_equal(gots[k].astype(np.int64), q.astype(np.int64)):
                return None
            continue
        e_t = float(np.nanmax(np.abs(gots[k].astype(np.float64) - q))) if q.size else 0.0
        e_p = float(np.nanmax(np.abs(refs[k].astype(np.float64) - q))) if q.size else 0.0
        if not e_t <= 2 * e_p + 1e-6 * max(1.0, float(np.nanmax(np.abs(q))) if q.size else 1.0):
            return None
        worst_t, worst_p = max(worst_t, e_t), max(worst_p, e_p)
    return ("differs from PyTorch's float32 but is closer to PyTorch's float64 run than it "
            "(max abs err %.3g, PyTorch's %.3g)" % (worst_t, worst_p))


UNKNOWN_RE = re.compile(r"unknown operator ([\w:]+)")
COULD_RE = re.compile(r"Could not run '([\w:]+?)(?:\.\w+)?' with arguments")
WARN_HEAD_RE = re.compile(r"warning: forward reaches \d+ operators? that tsaot has no kernel for")
WARN_OP_RE = re.compile(r"^  ([\w:]+): \d+ places?$")


def first_error(text):
    for line in text.splitlines():
        if "error" in line or "Error" in line:
            return line.strip()
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[0] if lines else "?"


def reached_ops(text):
    """The ops tsaot's warning lists as reached by the specialised graph."""
    ops, inside = [], False
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if WARN_HEAD_RE.search(line):
            inside = True
            continue
        if inside:
            m = WARN_OP_RE.match(line)
            if m:
                # the op counts when some place of it is not fallback-only
                j, spec = i + 1, False
                while j < len(lines) and lines[j].startswith("    "):
                    spec = spec or "only inputs off the specialisation" not in lines[j]
                    j += 1
                if spec:
                    ops.append(m.group(1))
            elif not line.startswith("    "):
                inside = False
    return ops


def make_one(name, work, timeout):
    """(folder, made.json's content or None, the row's fields when not made)."""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    deadline = time.monotonic() + timeout
    rc, text = run([sys.executable, os.path.abspath(__file__), "--make", name, d], d, deadline)
    if rc == 0 and not os.path.exists(os.path.join(d, "made.json")):
        rc, text = 1, text + "\nno made.json written"
    if rc != 0:
        why = "PyTorch: " + ("time limit" if rc is None else (text.strip().splitlines() or ["?"])[-1][:150])
        return d, None, {"how": "not made", "reason": why}
    with open(os.path.join(d, "made.json")) as f:
        return d, json.load(f), None


def sweep_one(name, d, made, not_made, build, tag, args):
    """One model through one build's tools (outputs named by tag)."""
    family = MODELS[name][0]
    row = {"model": name, "family": family, "how": "-", "loads": "-", "interp": "-", "compiled": "-",
           "reason": "", "blockers": []}
    if made is None:
        row.update(not_made)
        return row
    deadline = time.monotonic() + args.timeout
    row["how"] = "scripted" if made["how"] == "scripted" else "traced"
    if made["how"] != "scripted":
        row["script_error"] = made["how"]
    row["random"] = made["random"]
    b = build
    out_i, out_c, so = "out_i_" + tag, "out_c_" + tag, "m_%s.so" % tag
    rc, text = run([os.path.join(b, "tsaot-dump"), "model.pt", "--inlined"], d, deadline)
    if rc != 0:
        row["loads"] = "no"
        row["reason"] = "load: " + ("time limit" if rc is None else first_error(text))[:160]
        row["blockers"] = sorted(set(UNKNOWN_RE.findall(text or "")))
        return row
    row["loads"] = "yes"
    blockers = set()
    reasons = []
    notes = []
    rc, text = run([os.path.join(b, "tsaot-run"), "model.pt"] + made["args"] +
                   ["-o", out_i, "--threads", str(args.threads)], d, deadline)
    if rc == 0:
        tied = []
        why = compare(d, os.path.join(d, out_i), made, tied)
        near = why and closer_than_pytorch(d, os.path.join(d, out_i), made, deadline)
        if near:
            why, tied = None, [near]
        notes += ["interp: " + t for t in tied]
        row["interp"] = "yes" if why is None else "no"
        if why:
            reasons.append("interp: " + why)
    else:
        row["interp"] = "no"
        reasons.append("interp: " + ("time limit" if rc is None else first_error(text))[:160])
        blockers.update(COULD_RE.findall(text or ""))
    rc, text = run([os.path.join(b, "tsaot"), "model.pt", "--example"] + made["args"] + ["-o", so], d, deadline)
    reached = reached_ops(text or "")
    if rc != 0:
        row["compiled"] = "no"
        reasons.append("tsaot: " + ("time limit" if rc is None else first_error(text))[:160])
    else:
        rc, text = run([os.path.join(b, "tsaot-run"), so] + made["args"] +
                       ["-o", out_c, "--threads", str(args.threads)], d, deadline)
        if rc == 0:
            tied = []
            why = compare(d, os.path.join(d, out_c), made, tied)
            near = why and closer_than_pytorch(d, os.path.join(d, out_c), made, deadline)
            if near:
                why, tied = None, [near]
            notes += ["compiled: " + t for t in tied]
            row["compiled"] = "yes" if why is None else "no"
            if why:
                reasons.append("compiled: " + why)
        else:
            row["compiled"] = "no"
            reasons.append("compiled: " + ("time limit" if rc is None else first_error(text))[:160])
            blockers.update(COULD_RE.findall(text or ""))
    if row["interp"] != "yes" or row["compiled"] != "yes":
        blockers.update(reached)
    if made["random"] and row["interp"] == "yes" and row["compiled"] == "yes":
        reasons.append("PyTorch's output is random: matched its run at the default seed")
    reasons += notes
    row["reason"] = "; ".join(reasons)
    row["blockers"] = sorted(blockers)
    return row


def summarize(rows):
    out = []
    fams = collections.OrderedDict()
    for r in rows:
        fams.setdefault(r["family"], []).append(r)
    tot = collections.Counter()
    for fam, rs in fams.items():
        c = collections.Counter()
        for r in rs:
            c["models"] += 1
            c["made"] += r["how"] != "not made"
            c["loads"] += r["loads"] == "yes"
            c["interp"] += r["interp"] == "yes"
            c["compiled"] += r["compiled"] == "yes"
        tot.update(c)
        out.append("%-15s %2d models (%2d made by PyTorch): %2d load, %2d match in the interpreter, %2d compiled" %
                   (fam, c["models"], c["made"], c["loads"], c["interp"], c["compiled"]))
    out.append("%-15s %2d models (%2d made by PyTorch): %2d load, %2d match in the interpreter, %2d compiled" %
               ("all", tot["models"], tot["made"], tot["loads"], tot["interp"], tot["compiled"]))
    return out


def report(title, rows):
    print()
    if title:
        print(title)
    for line in summarize(rows):
        print(line)
    block = collections.Counter()
    for r in rows:
        if r["interp"] != "yes" or r["compiled"] != "yes":
            block.update(set(r["blockers"]))
    print()
    print("operators that block models (models in this sweep of %d that each blocks):" % len(rows))
    for op, k in sorted(block.items(), key=lambda t: (-t[1], t[0])):
        print("  %-40s %d" % (op, k))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", nargs=2, metavar=("NAME", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--make64", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the folder with tsaot, tsaot-run, tsaot-dump")
    ap.add_argument("--baseline", help="another build folder (before a change) run on the same models")
    ap.add_argument("--only", default="", help="comma-separated substrings of model names")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds per model: for making it, and for each build's steps together")
    ap.add_argument("--threads", type=int, default=1, help="tsaot-run --threads")
    ap.add_argument("--jobs", type=int, default=1, help="models swept side by side")
    ap.add_argument("--total-time", type=float, default=0,
                    help="seconds for the whole sweep: models not started by then are left out (0: no limit)")
    ap.add_argument("--keep", help="work in this folder and keep it (default: a temporary folder)")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    args = ap.parse_args()
    if args.make:
        make(*args.make)
        return 0
    if args.make64:
        make64(args.make64)
        return 0
    names = list(MODELS)
    if args.list:
        for n in names:
            print("%-40s %s" % (n, MODELS[n][0]))
        return 0
    if args.only:
        subs = [s for s in args.only.split(",") if s]
        names = [n for n in names if any(s in n for s in subs)]
    builds = [("after", os.path.abspath(args.build))]
    if args.baseline:
        builds.insert(0, ("before", os.path.abspath(args.baseline)))
    for _, b in builds:
        for tool in ("tsaot", "tsaot-run", "tsaot-dump"):
            if not os.access(os.path.join(b, tool), os.X_OK):
                sys.exit("model-sweep.py: %s not found in %s (build first, or give --build)" % (tool, b))
    work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="tsaot-sweep-")
    os.makedirs(work, exist_ok=True)
    rows = {tag: [] for tag, _ in builds}
    fmt = "%-38s %-9s %-6s %-7s %-9s %s"
    if args.baseline:
        fmt = "%-7s " + fmt
        print(fmt % ("build", "model", "made", "loads", "interp", "compiled", "reason"))
    else:
        print(fmt % ("model", "made", "loads", "interp", "compiled", "reason"))
    lock = threading.Lock()
    skipped = []
    if args.total_time:
        global SWEEP_END
        SWEEP_END = time.monotonic() + args.total_time

    def one(n):
        t0 = time.monotonic()
        if t0 >= SWEEP_END:
            return None
        d, made, not_made = make_one(n, work, args.timeout)
        got = {}
        for tag, b in builds:
            t1 = time.monotonic()
            r = sweep_one(n, d, made, not_made, b, tag, args)
            r["seconds"] = round(time.monotonic() - t1 + (t1 - t0 if tag == builds[0][0] else 0), 1)
            got[tag] = r
        if time.monotonic() >= SWEEP_END and any("time limit" in r["reason"] for r in got.values()):
            return None  # cut short by --total-time: left out, not a result
        with lock:
            for tag, _ in builds:
                r = got[tag]
                cells = (n, r["how"], r["loads"], r["interp"], r["compiled"], r["reason"])
                print(fmt % (((tag,) if args.baseline else ()) + cells), flush=True)
        if not args.keep:
            shutil.rmtree(d, ignore_errors=True)
        return got

    try:
        # models side by side (--jobs), rows printed as they finish, the
        # summaries in the list's order
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for n, got in zip(names, list(pool.map(one, names))):
                if got is None:
                    skipped.append(n)
                    continue
                for tag, _ in builds:
                    rows[tag].append(got[tag])
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if skipped:
        print()
        print("not swept (--total-time %g s ran out; left out of the summaries): %s" %
              (args.total_time, ", ".join(skipped)))
    for tag, b in builds:
        report("%s (%s):" % (tag, b) if args.baseline else None, rows[tag])
    if args.baseline:
        print()
        print("models that moved (loads/interp/compiled, before -> after):")
        moved = 0
        for rb, ra in zip(rows["before"], rows["after"]):
            kb = "/".join((rb["loads"], rb["interp"], rb["compiled"]))
            ka = "/".join((ra["loads"], ra["interp"], ra["compiled"]))
            if kb != ka:
                moved += 1
                print("  %-38s %-12s -> %-12s %s" % (ra["model"], kb, ka, ra["reason"][:100]))
        if not moved:
            print("  none")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({tag: rows[tag] for tag, _ in builds} if args.baseline else rows["after"], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

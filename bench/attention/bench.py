"""Checks and times examples/cuda/attention against PyTorch's scaled_dot_product_attention.

    python3 bench/attention/bench.py LIB.so check   # every config, dtype, head dim, causal
    python3 bench/attention/bench.py LIB.so bench   # the configs against flash and cuDNN
    python3 bench/attention/bench.py LIB.so bench WINNERS   # TuneFleet's winners, D = 128
    python3 bench/attention/bench.py LIB.so compare CONFIG...   # e.g. 128,176,2,2,2,1, D = 128

LIB.so is bench/attention/attention_lib.cu built as its header says. `check` compares each
compiled configuration, and the spec's reference kernel, with fp32 attention computed by
PyTorch on the same seeded inputs (outputs poisoned with NaN first). `bench` times, per shape,
every configuration and PyTorch's flash and cuDNN backends on the same inputs, in alternation
(rounds of one sample of each; a sample is CUDA events around REPS back-to-back launches), and
prints medians and ratios (PyTorch's time / ours: above 1 means ours is faster). With
WINNERS (bench/attention/tune.sh's winners.txt: "DTYPE CAUSAL BxHxS KEY=VALUE,..." lines), only
the D = 128 shapes are timed and "ours" is the configuration TuneFleet chose for that shape,
timed beside BASELINE (the best of the script's sweep before TuneFleet tuned these specs).
`sustained` (`bench.py LIB.so sustained WINNERS [SECONDS]`) times the same contenders each
for a window of back-to-back launches (default 1 s, the second half measured), two rounds, the
GPU at the clock its power limit holds: the H200 lowers its clock within the window by an amount
that differs by kernel, which short interleaved samples do not see.
`compare` times the given configurations (BM,BN,STAGES,CONSUMERS,OVERLAP,PERSISTENT) at the
D = 128 shapes the same way, "ours" being the fastest of them at each shape.
"""

import ctypes
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


class Lib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.configs = {}  # head dim: [(BM, BN, STAGES, CONSUMERS, OVERLAP, PERSISTENT)]
        out = (ctypes.c_int * 6)()
        for d in (64, 128):
            self.configs[d] = []
            for i in range(self.lib.tf_attention_config_count(d)):
                self.lib.tf_attention_config(d, i, out)
                self.configs[d].append(tuple(out))
        for f in (self.lib.tf_attention, self.lib.tf_attention_reference):
            f.restype = ctypes.c_int

    @staticmethod
    def _args(q, k, v, o, causal):
        b, h, s, d = q.shape
        ptrs = [ctypes.c_void_p(t.data_ptr()) for t in (q, k, v, o)]
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        dims = [ctypes.c_longlong(x) for x in (b, h, s, int(causal))]
        return int(q.dtype == torch.bfloat16), d, ptrs, dims, stream

    def run(self, config, q, k, v, o, causal):
        bf16, d, ptrs, dims, stream = self._args(q, k, v, o, causal)
        rc = self.lib.tf_attention(bf16, d, (ctypes.c_int * 6)(*config), *ptrs, *dims, stream)
        if rc != 0:
            raise RuntimeError(f"tf_attention{config} returned {rc}")

    def reference(self, q, k, v, o, causal):
        bf16, d, ptrs, dims, stream = self._args(q, k, v, o, causal)
        rc = self.lib.tf_attention_reference(bf16, d, *ptrs, *dims, stream)
        if rc != 0:
            raise RuntimeError(f"tf_attention_reference returned {rc}")


def inputs(b, h, s, d, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return [torch.randn(b, h, s, d, device="cuda", dtype=dtype, generator=g) for _ in range(3)]


def contenders(lib_path, args):
    """From `CONFIG... [--shape DTYPE,B,H,S,CAUSAL]` (default bf16,4,16,16384,0, D = 128): the
    shape as given, (B, H, S, CAUSAL), and {label: run} on seeded inputs of it, a run per
    configuration of the library at LIB_PATH (labelled as given) then PyTorch's "cudnn" and
    "flash" backends."""
    args = list(args)
    shape = "bf16,4,16,16384,0"
    if "--shape" in args:
        i = args.index("--shape")
        shape = args[i + 1]
        del args[i : i + 2]
    name, b, h, s, causal = shape.split(",")
    b, h, s, causal = int(b), int(h), int(s), int(causal)
    lib = Lib(lib_path)
    q, k, v = inputs(b, h, s, 128, DTYPES[name], 1)
    o = torch.empty_like(q)
    runs = {}
    for a in args:
        c = tuple(int(x) for x in a.split(","))
        runs[a] = lambda c=c: lib.run(c, q, k, v, o, causal)
    for label, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                           ("flash", SDPBackend.FLASH_ATTENTION)):
        def sdpa(backend=backend):
            with sdpa_kernel(backend):
                F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
        runs[label] = sdpa
    return shape, (b, h, s, causal), runs


def fp32_attention(q, k, v, causal):
    q, k, v = (t.float() for t in (q, k, v))
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        s = q.shape[2]
        scores.masked_fill_(torch.ones(s, s, device="cuda", dtype=torch.bool).triu(1), -float("inf"))
    return torch.softmax(scores, -1) @ v


def compare(out, ref, tol):
    """(passes, max |out - ref|, relative L2 error). Unwritten (NaN) outputs fail."""
    out = out.float()
    err = (out - ref).abs()
    finite = bool(torch.isfinite(out).all())
    ok = finite and bool((err <= tol + tol * ref.abs()).all())
    rel = float((out - ref).norm() / ref.norm())
    return ok, float(err.max()) if finite else float("nan"), rel


def check(lib):
    # S = 1088 = 17 * 64: 128- and 192-query blocks leave a tail block, and so do 128-, 176- and
    # 192-key blocks (the last one masked past S). 32 heads: more tiles than the H200's 132
    # SMs at every BM, so that the persistent grid's blocks run several tiles each.
    b, h, s = 4, 8, 1088
    failures = 0
    print("dtype d causal config(BM,BN,STAGES,CONSUMERS,OVERLAP,PERSISTENT) ok max_abs_err "
          "rel_l2")
    for name, dtype in DTYPES.items():
        tol = 1e-2 if dtype == torch.float16 else 2e-2
        for d in (64, 128):
            for causal in (0, 1):
                seed = 1000 * d + 10 * causal + (dtype == torch.bfloat16)
                q, k, v = inputs(b, h, s, d, dtype, seed)
                ref = fp32_attention(q, k, v, causal)
                runs = [("reference", None)] + [(str(c), c) for c in lib.configs[d]]
                for label, config in runs:
                    o = torch.full_like(q, float("nan"))
                    if config is None:
                        lib.reference(q, k, v, o, causal)
                    else:
                        lib.run(config, q, k, v, o, causal)
                    torch.cuda.synchronize()
                    ok, err, rel = compare(o, ref, tol)
                    failures += not ok
                    print(f"{name} {d} {causal} {label} {'PASS' if ok else 'FAIL'} "
                          f"{err:.2e} {rel:.2e}", flush=True)
    print(f"check: {failures} failures")
    return failures == 0


def timed(fn, reps):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / reps


def sustained(fn, seconds):
    """ms per launch over the second half of `seconds` of back-to-back launches. The board
    holds its power limit by lowering the clock within tens of ms; `timed`'s short samples,
    with idle gaps between them, run at the clock a burst gets, this at the one held."""
    n = max(2, int(seconds / 2 / timed(fn, 1) * 1e3))
    for _ in range(n):
        fn()
    return timed(fn, n)


KEYS = ("BM", "BN", "STAGES", "CONSUMERS", "OVERLAP", "PERSISTENT")
BASELINE = (128, 128, 3, 2, 2, 0)
STAND_IN = (128, 128, 3, 2, 2, 1)  # "ours" where TuneFleet gave no winner


def read_winners(path):
    """{(dtype, causal, b, h, s): config} from tune.sh's winners.txt."""
    winners = {}
    for line in open(path):
        if not line.strip():
            continue
        dtype, causal, shape, settings = line.split()
        values = dict(kv.split("=") for kv in settings.split(","))
        b, h, s = (int(x) for x in shape.split("x"))
        winners[(dtype, int(causal), b, h, s)] = tuple(int(values[k]) for k in KEYS)
    return winners


def bench(lib, shapes, winners=None, rounds=7, only=None, window_s=None):
    """Medians over `rounds` of one sample per contender, the order reversed every other round;
    a sample is `timed` (REPS launches), or with `window_s` `sustained` over that window."""
    print("dtype d causal B H S | config (best, or TuneFleet's) | ours ms TFLOP/s | flash ms (ratio) | "
          "cudnn ms (ratio)")
    rows = []
    for name, d, causal, b, h, s in shapes:
        dtype = DTYPES[name]
        q, k, v = inputs(b, h, s, d, dtype, 1)
        o = torch.empty_like(q)
        flops = 4 * b * h * s * s * d / (2 if causal else 1)
        reps = max(2, min(20, int(2e13 / flops)))
        configs = only or lib.configs[d]
        if winners is not None:
            # A shape whose job did not finish: the stand-in is labelled as such.
            configs = [winners.get((name, causal, b, h, s), STAND_IN)]
            configs += [BASELINE] if BASELINE != configs[0] else []
        contenders = {str(c): (lambda c=c: lib.run(c, q, k, v, o, causal)) for c in configs}

        def torch_sdpa(backend):
            def f():
                with sdpa_kernel(backend):
                    F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
            return f

        contenders["flash"] = torch_sdpa(SDPBackend.FLASH_ATTENTION)
        contenders["cudnn"] = torch_sdpa(SDPBackend.CUDNN_ATTENTION)
        samples = {key: [] for key in contenders}
        for fn in contenders.values():  # warm up: module load, plan caches
            timed(fn, 1)
        order = list(contenders.items())
        for r in range(rounds):
            for key, fn in order if r % 2 == 0 else reversed(order):
                samples[key].append(sustained(fn, window_s) if window_s else timed(fn, reps))
        med = {key: statistics.median(v) for key, v in samples.items()}
        ours = (str(configs[0]) if winners is not None else
                min((key for key in med if key not in ("flash", "cudnn")), key=med.get))
        t = med[ours]
        label = ours
        if winners is not None and (name, causal, b, h, s) not in winners:
            label += " stand-in"
        row = (f"{name} {d} {causal} {b} {h} {s} | {label} | {t:.3f} {flops / t / 1e9:.0f} | "
               f"{med['flash']:.3f} ({med['flash'] / t:.2f}) | {med['cudnn']:.3f} "
               f"({med['cudnn'] / t:.2f})")
        print(row, flush=True)
        rows.append((row, med))
    print("\nall configurations (median ms):")
    for row, med in rows:
        print(row.split("|")[0], " ".join(f"{k}={v:.3f}" for k, v in med.items()))


SHAPES = [
    # (dtype, head dim, causal, batch, heads, sequence)
    (dt, d, c, b, h, s)
    for dt in ("bf16", "f16")
    for d in (128, 64)
    for c in (0, 1)
    for b, h, s in ((16, 16, 1024), (8, 16, 2048), (4, 32, 4096), (4, 16, 8192), (4, 16, 16384))
    if d == 128 or s in (1024, 8192)
]

if __name__ == "__main__":
    lib = Lib(sys.argv[1])
    mode = sys.argv[2] if len(sys.argv) > 2 else "check"
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    if mode == "check":
        sys.exit(0 if check(lib) else 1)
    if mode == "bench" and len(sys.argv) > 3:
        bench(lib, [shape for shape in SHAPES if shape[1] == 128], read_winners(sys.argv[3]))
    elif mode == "sustained":
        bench(lib, [shape for shape in SHAPES if shape[1] == 128], read_winners(sys.argv[3]),
              rounds=2, window_s=float(sys.argv[4]) if len(sys.argv) > 4 else 1.0)
    elif mode == "bench":
        bench(lib, SHAPES)
    elif mode == "compare":
        configs = [tuple(int(x) for x in c.split(",")) for c in sys.argv[3:]]
        bench(lib, [shape for shape in SHAPES if shape[1] == 128], only=configs)

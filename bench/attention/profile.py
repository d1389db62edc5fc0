"""Runs the kernels to profile once each, between cudaProfilerStart and cudaProfilerStop, after
warm-up runs outside that window, for `ncu --profile-from-start off` (bench/attention/profile.sh):
the given configurations of bench/attention/attention_lib.cu and PyTorch's cuDNN and flash
backends, on one shape (default bf16, B 4, H 16, S 16384, D 128, non-causal).

    python3 bench/attention/profile.py LIB.so CONFIG... [--shape DTYPE,B,H,S,CAUSAL]
"""

import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

from bench import DTYPES, Lib, inputs


def main():
    args = sys.argv[2:]
    shape = "bf16,4,16,16384,0"
    if "--shape" in args:
        i = args.index("--shape")
        shape = args[i + 1]
        del args[i : i + 2]
    name, b, h, s, causal = shape.split(",")
    b, h, s, causal = int(b), int(h), int(s), int(causal)
    lib = Lib(sys.argv[1])
    q, k, v = inputs(b, h, s, 128, DTYPES[name], 1)
    o = torch.empty_like(q)
    runs = [lambda c=c: lib.run(c, q, k, v, o, causal)
            for c in (tuple(int(x) for x in a.split(",")) for a in args)]
    for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION):
        def sdpa(backend=backend):
            with sdpa_kernel(backend):
                F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
        runs.append(sdpa)
    for run in runs:  # module load, plan caches
        run()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for run in runs:
        run()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()

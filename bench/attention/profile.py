"""Runs the kernels to profile once each, between cudaProfilerStart and cudaProfilerStop, after
warm-up runs outside that window, for `ncu --profile-from-start off` (bench/attention/profile.sh):
the given configurations of bench/attention/attention_lib.cu and PyTorch's cuDNN and flash
backends, on one shape (default bf16, B 4, H 16, S 16384, D 128, non-causal).

    python3 bench/attention/profile.py LIB.so CONFIG... [--shape DTYPE,B,H,S,CAUSAL]
"""

import sys

import torch

from bench import contenders


def main():
    _, _, by_label = contenders(sys.argv[1], sys.argv[2:])
    runs = list(by_label.values())
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

"""Times each contender alone for a while, back to back, with the SM clock and board power
sampled by nvidia-smi, to tell a kernel that takes more cycles from one that runs at a lower
clock under load (bench.py alternates contenders one sample at a time, so a sample runs at
whatever clock the one before left).

    python3 bench/attention/sustain.py LIB.so SECONDS CONFIG... [--shape DTYPE,B,H,S,CAUSAL]

For each of the configurations, PyTorch's cuDNN and flash backends, then the configurations
again: ms per launch over the last half of its window, mean SM clock (MHz) and power (W)
over that half.
"""

import subprocess
import sys
import threading
import time

import torch

from bench import contenders


def main():
    seconds = float(sys.argv[2])
    shape, (b, h, s, causal), runs = contenders(sys.argv[1], sys.argv[3:])
    configs = [label for label in runs if label not in ("cudnn", "flash")]
    order = list(runs) + [a + " again" for a in configs]

    samples = []  # (time, sm MHz, W)
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw",
                            "--format=csv,noheader,nounits", "-lms", "50"],
                           stdout=subprocess.PIPE, text=True)

    def read():
        for line in smi.stdout:
            try:
                mhz, watts = (float(x) for x in line.split(","))
            except ValueError:
                continue
            samples.append((time.time(), mhz, watts))

    threading.Thread(target=read, daemon=True).start()
    flops = 4 * b * h * s * s * 128 / (2 if causal else 1)
    print(f"{shape}: label | ms per launch | TFLOP/s | SM MHz | W  (last {seconds / 2:.1f} s of "
          f"{seconds:.1f})")
    for label in order:
        fn = runs[label.removesuffix(" again")]
        first, last = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        fn()  # module load, plan caches
        first.record()
        fn()
        last.record()
        last.synchronize()
        batch = max(1, int(50 / first.elapsed_time(last)))  # launches per ~50 ms between syncs
        start = time.time()
        half = None
        launches = 0
        while time.time() - start < seconds:
            if half is None and time.time() - start >= seconds / 2:
                half = time.time()
                first.record()
                launches = 0
            for _ in range(batch):
                fn()
            launches += batch
            torch.cuda.synchronize()
        last.record()
        last.synchronize()
        end = time.time()
        window = [x for x in samples if half <= x[0] <= end]
        mhz = sum(x[1] for x in window) / max(len(window), 1)
        watts = sum(x[2] for x in window) / max(len(window), 1)
        ms = first.elapsed_time(last) / launches
        print(f"{label} | {ms:.3f} | {flops / ms / 1e9:.0f} | {mhz:.0f} | {watts:.0f}", flush=True)
    smi.terminate()


if __name__ == "__main__":
    main()

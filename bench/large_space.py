#!/usr/bin/env python3
"""Writes a synthetic Kernel Tuner cache file of a CLBlast-style GEMM space (12 parameters,
161,376 valid configurations by default), to measure how the tuner copes with spaces larger
than the recorded ones: reading them (search_eval, replay workers, imports) and its strategy
time per proposal. Times are a seeded log-additive function of the parameters plus noise;
they say nothing about any GPU.

  bench/large_space.py OUT.json.gz [--seed N] [--small]
  build/bench/search_eval --space OUT.json.gz --strategy auto --budget 100 --seeds 2 --json
"""
import argparse
import gzip
import itertools
import json
import math
import random


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="the cache file to write (gzip when it ends in .gz)")
    parser.add_argument("--seed", type=int, default=7, help="seeds the synthetic times")
    parser.add_argument("--small", action="store_true",
                        help="26,912 configurations (tile sizes up to 128, KWG 16 or 32, no KREG)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tiles = [16, 32, 64, 128] if args.small else [16, 32, 64, 128, 256]
    params = {"MWG": tiles, "NWG": tiles, "KWG": [16, 32] if args.small else [16, 32, 64],
              "MDIMC": [8, 16, 32], "NDIMC": [8, 16, 32], "VWM": [1, 2, 4, 8],
              "VWN": [1, 2, 4, 8], "STRM": [0, 1], "STRN": [0, 1], "SA": [0, 1], "SB": [0, 1]}
    if not args.small:
        params["KREG"] = [1, 2]
    weight = {k: {v: rng.uniform(-0.3, 0.3) for v in values} for k, values in params.items()}
    cache = {}
    for values in itertools.product(*params.values()):
        c = dict(zip(params, values))
        if c["MWG"] % (c["MDIMC"] * c["VWM"]) or c["NWG"] % (c["NDIMC"] * c["VWN"]):
            continue  # CLBlast's restrictions on the thread and vector layout
        time = math.exp(sum(weight[k][c[k]] for k in params) +
                        0.5 * abs(math.log2(c["MWG"] * c["NWG"] / 4096)) + rng.gauss(0, 0.05))
        cache[",".join(map(str, values))] = dict(c, time=time, times=[time], compile_time=100.0)
    doc = {"device_name": "synthetic", "kernel_name": "gemm_synthetic",
           "problem_size": [1024, 1024, 1024], "tune_params_keys": list(params),
           "tune_params": params, "objective": "time", "cache": cache}
    opener = gzip.open if args.out.endswith(".gz") else open
    with opener(args.out, "wt") as f:
        json.dump(doc, f)
    print(f"{args.out}: {len(cache)} configurations")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A fleet tuning one kernel on several device classes at once, through the real service:
one coordinator, one worker whose replay devices answer from recorded spaces (one device class
per recording), and one job per device class, all submitted together, each `auto` with
max_candidates BUDGET. Prints, per recording, the mean fraction of its optimum that its job's
winner reached over the search seeds (recorded optimum time / the job's best time), and the mean
over the recordings: what the jobs gain from each other's bests (docs/search.md, "Problems of
one job share their bests"). --coordinator runs another build's coordinator, to compare two
builds on the same seeds.

  python3 bench/fleet_search.py BIN_DIR SPEC --seeds 10 --budget 100 RECORDING...
  python3 bench/fleet_search.py build/bin tests/data/spaces/convolution/convolution_replay.yaml \\
      tests/data/spaces/convolution/*_T4.json.gz

SPEC is a replay spec of the recordings' kernel (its search and target are replaced).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def run(argv, **kwargs):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kwargs).stdout


def optimum_ms(bin_dir, recording):
    """The recording's best time, as search_eval reads it."""
    search_eval = os.path.join(os.path.dirname(os.path.abspath(bin_dir)), "bench", "search_eval")
    out = json.loads(run([search_eval, "--space", recording, "--strategy", "random", "--budget",
                          "1", "--seeds", "1", "--json"]))
    return out["spaces"][0]["optimum"]


def one_fleet(args, seed, work):
    """Runs the fleet once with search seed `seed`; returns {recording: its job's best ns}."""
    coordinator = args.coordinator or os.path.join(args.bin_dir, "tunefleet-coordinator")
    cli = os.path.join(args.bin_dir, "tunefleet")
    procs = []
    try:
        procs.append(subprocess.Popen(
            [coordinator, "--listen", "127.0.0.1:0", "--db", f"{work}/t.db", "--artifacts",
             f"{work}/art", "--port-file", f"{work}/port", "--plaintext", "--allow-anonymous",
             "--db-sync", "normal"],
            stdout=open(f"{work}/coordinator.log", "w"), stderr=subprocess.STDOUT))
        for _ in range(200):
            if os.path.exists(f"{work}/port") and open(f"{work}/port").read().strip():
                break
            time.sleep(0.05)
        address = "127.0.0.1:" + open(f"{work}/port").read().split()[0]
        worker = [os.path.join(args.bin_dir, "tunefleet-worker"), "--coordinator", address,
                  "--cache", f"{work}/cache", "--replay-speed", "0"]
        for recording in args.recordings:
            worker += ["--devices", "replay:" + os.path.abspath(recording)]
        procs.append(subprocess.Popen(worker, stdout=open(f"{work}/worker.log", "w"),
                                      stderr=subprocess.STDOUT))
        # Device i answers from recording i.
        classes = []
        for _ in range(200):
            workers = json.loads(run([cli, "--coordinator", address, "workers", "--json"]))
            if workers:
                devices = sorted(workers[0]["devices"], key=lambda d: d.get("index", 0))
                classes = [d["device_class"] for d in devices]
                break
            time.sleep(0.1)
        if len(set(classes)) != len(args.recordings):
            sys.exit(f"the worker offered {classes}, not one class per recording: {work}/worker.log")
        spec = open(args.spec).read()
        spec = re.sub(r"(?m)^(search|target):.*\n", "", spec)
        jobs = {}  # by recording
        for recording, device_class in zip(args.recordings, classes):
            path = os.path.join(os.path.dirname(os.path.abspath(args.spec)),
                                f".fleet_search_{os.getpid()}_{len(jobs)}.yaml")
            with open(path, "w") as f:
                f.write(spec + f"search: {{strategy: auto, max_candidates: {args.budget}, "
                        f"seed: {seed}}}\ntarget: {{device_class: \"{device_class}\"}}\n")
            try:
                out = json.loads(run([cli, "--coordinator", address, "submit", path, "--json"]))
            finally:
                os.remove(path)
            jobs[recording] = out["job_id"]
        best = {}
        for recording, job_id in jobs.items():
            for _ in range(6000):
                status = json.loads(run([cli, "--coordinator", address, "status", str(job_id),
                                         "--json"]))
                if status["state"] not in ("queued", "running"):
                    break
                time.sleep(0.05)
            if status["state"] != "succeeded" or not status.get("best"):
                sys.exit(f"job {job_id} for {recording} ended {status['state']}: {work}")
            best[recording] = status["best"][0]["median_ns"]
        return best
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bin_dir", help="the build's bin/ folder (tunefleet, -coordinator, -worker)")
    parser.add_argument("spec", help="a replay spec of the recordings' kernel")
    parser.add_argument("recordings", nargs="+", help="recorded spaces, one device class each")
    parser.add_argument("--seeds", type=int, default=10, help="search seeds 1..N")
    parser.add_argument("--budget", type=int, default=100, help="max_candidates of each job")
    parser.add_argument("--coordinator", help="another tunefleet-coordinator to run")
    args = parser.parse_args()

    optimum = {r: optimum_ms(args.bin_dir, r) for r in args.recordings}
    fractions = {r: [] for r in args.recordings}
    for seed in range(1, args.seeds + 1):
        with tempfile.TemporaryDirectory(prefix="fleet_search.") as work:
            best = one_fleet(args, seed, work)
        for recording in args.recordings:
            fractions[recording].append(optimum[recording] * 1e6 / best[recording])
        print(f"seed {seed}: " + " ".join(f"{fractions[r][-1]:.3f}" for r in args.recordings),
              flush=True)
    means = {r: sum(f) / len(f) for r, f in fractions.items()}
    for r in args.recordings:
        print(f"{os.path.basename(r):40} {means[r]:.3f}")
    print(f"{'mean':40} {sum(means.values()) / len(means):.3f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Where a tuning job's device time goes, per candidate: fits each lease's time (from its start in
the worker's log to the next lease's start) to the candidates it finished, fully timed or
early-stopped, by least squares. RUN_DIR is a gpu_tune.sh state folder (worker.log, t.db).

    bench/lease_costs.py /tmp/tunefleet-search/exhaustive/run /tmp/tunefleet-search/exhaustive+early-stop/run
"""
import bisect
import datetime
import re
import sqlite3
import sys

OK, EARLY_STOPPED = 1, 7  # tunefleet.v1.ResultStatus


def solve(rows, y):
    """Least squares by the normal equations (a few columns)."""
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] + [sum(r[i] * t for r, t in zip(rows, y))]
         for i in range(n)]
    for i in range(n):
        pivot = max(range(i, n), key=lambda k: abs(a[k][i]))
        a[i], a[pivot] = a[pivot], a[i]
        for k in range(n):
            if k != i:
                f = a[k][i] / a[i][i]
                a[k] = [x - f * z for x, z in zip(a[k], a[i])]
    return [a[i][n] / a[i][i] for i in range(n)]


def costs(run):
    starts = []
    for line in open(f"{run}/worker.log"):
        m = re.match(r"\[(.*?)\] \[info\] device 0: lease \d+ of job \d+: \d+ candidates", line)
        if m:
            starts.append(datetime.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S.%f").timestamp())
    counts = [[0, 0] for _ in starts]
    db = sqlite3.connect(f"{run}/t.db")
    for status, created_ms in db.execute("SELECT status, created_ms FROM results"):
        i = bisect.bisect_right(starts, created_ms / 1000) - 1
        if i >= 0 and status in (OK, EARLY_STOPPED):
            counts[i][status == EARLY_STOPPED] += 1
    leases = range(len(starts) - 1)  # the last lease has no next start
    stopped = sum(c[1] for c in counts)
    rows = [[counts[i][0], counts[i][1], 1] if stopped else [counts[i][0], 1] for i in leases]
    fit = solve(rows, [starts[i + 1] - starts[i] for i in leases])
    full, early = fit[0], (fit[1] if stopped else None)
    print(f"{run}: {len(starts)} leases over {starts[-1] - starts[0]:.1f} s; "
          f"{sum(c[0] for c in counts)} fully timed at {1000 * full:.1f} ms each"
          + (f", {stopped} early-stopped at {1000 * early:.1f} ms each" if stopped else ""))


for run_dir in sys.argv[1:]:
    costs(run_dir)

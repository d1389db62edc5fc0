#!/usr/bin/env python3
"""Turns an exhaustive run's results table (`tunefleet results`, text) into one Kernel Tuner
cache file per problem, so that a run on hardware becomes a recorded space for
bench/search_eval: the parameters' values are those the table holds, a configuration the
table does not list is outside the space, and a row whose status is not `ok` is a failure.

    results_to_cache.py hopper_gemm_bf16_tn.results.txt OUTDIR bf16
"""
import collections
import json
import re
import sys

UNIT_MS = {'us': 1e-3, 'ms': 1.0, 's': 1e3}


def main(table, outdir, tag):
    problems = collections.defaultdict(list)
    for line in open(table).read().splitlines()[1:]:
        fields = line.split()
        if len(fields) < 5:
            continue
        status, config, problem = fields[0], fields[1], fields[2]
        values = dict(kv.split('=') for kv in config.split(','))
        time = float(fields[3]) * UNIT_MS[fields[4]] if status == 'ok' else 'RuntimeFailedConfig'
        problems[problem].append((values, time))
    for problem, rows in problems.items():
        keys = list(rows[0][0])
        # In the order the space enumerates them, not the table's (fastest first), which
        # would favour whatever a strategy proposes first among equals.
        rows.sort(key=lambda row: [int(row[0][k]) for k in keys])
        cache = {','.join(v[k] for k in keys): {**{k: int(v[k]) for k in keys}, 'time': t}
                 for v, t in rows}
        name = f"{tag}_{re.sub('[^0-9x]', '', problem.replace(',', 'x'))}"
        with open(f'{outdir}/{name}_cache.json', 'w') as out:
            json.dump({'kernel_name': f'hopper_gemm_{tag}', 'problem': problem,
                       'tune_params_keys': keys,
                       'tune_params': {k: sorted({int(v[k]) for v, _ in rows}) for k in keys},
                       'cache': cache}, out, separators=(',', ':'))
        print(name, len(cache))


if __name__ == '__main__':
    main(*sys.argv[1:4])

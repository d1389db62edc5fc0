#!/usr/bin/env bash
# On a GPU host: what search strategies and early stopping cost and find.
# Tunes SPEC (default: the Hopper GEMM) four times, each with a fresh
# coordinator, database and worker (bench/gpu_tune.sh, programs from a folder
# made by bench/carry.sh):
#   exhaustive            every configuration, timed in full: the baseline
#   exhaustive+early-stop the same, losers stopped after a 5-run estimate
#   auto                  search.strategy auto with max_candidates BUDGET per problem
#   auto+early-stop       both
#   exhaustive-again      exhaustive once more: the same job run twice
#   no-retime             exhaustive without re-timing the finalists (search.finalists: 0)
#   no-retime-again       that once more
# and prints, for each, the wall time, the evaluations (and how many were
# early-stopped), and per problem the winner's median time relative to the
# exhaustive winner's (1.000: the same time; above: slower) and how many
# winners have the exhaustive winner's configuration; a NAME-again variant is
# also compared with NAME, and the largest difference printed: the finalists'
# re-timing should keep the same job's winners within 1% of each other.
# VARIANTS (names, space-separated) runs some of them; exhaustive is always run.
# SEEDS (default 1) runs the auto variants once per search seed (auto-seed2, ...);
# OTHER_COORDINATOR runs each auto variant again with another build's
# tunefleet-coordinator (NAME@other), to compare two builds in one run.
#   VARIANTS="exhaustive-again no-retime no-retime-again" bench/search_h200.sh CARRY_DIR
#   [BUDGET=40] [EARLY_STOP=2.0] [VARIANTS=...] [SEEDS=...] [OTHER_COORDINATOR=PATH] bench/search_h200.sh CARRY_DIR [SPEC] [STATE_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
carry="$(cd "$1" && pwd)"
spec="$(cd "$(dirname "${2:-$here/../examples/cuda/hopper_gemm/hopper_gemm_f16_tn.yaml}")" && pwd)/$(basename "${2:-hopper_gemm_f16_tn.yaml}")"
state="${3:-/tmp/tunefleet-search}"
budget="${BUDGET:-40}" early_stop="${EARLY_STOP:-2.0}"
if grep -q '^search:' "$spec"; then
  echo "$spec has its own search: section; give a spec without one" >&2
  exit 2
fi
rm -rf "$state" && mkdir -p "$state"

variants=(
  "exhaustive|{strategy: exhaustive}"
  "exhaustive+early-stop|{strategy: exhaustive, early_stop: $early_stop}"
)
for seed in ${SEEDS:-1}; do
  suffix=$([ "$seed" = 1 ] || echo "-seed$seed")
  variants+=(
    "auto$suffix|{strategy: auto, max_candidates: $budget, seed: $seed}"
    "auto+early-stop$suffix|{strategy: auto, max_candidates: $budget, seed: $seed, early_stop: $early_stop}"
  )
done
variants+=(
  "exhaustive-again|{strategy: exhaustive}"
  "no-retime|{strategy: exhaustive, finalists: 0}"
  "no-retime-again|{strategy: exhaustive, finalists: 0}"
)
# Tunes variant $1 with search $2 (COORDINATOR, when set, names the coordinator).
tune() {
  local name=$1 search=$2
  # The spec's folder holds its sources: the variant is a copy of it.
  local copy="$state/$name/spec"
  mkdir -p "$copy"
  cp -rL "$(dirname "$spec")"/. "$copy/"  # -L: shared headers are links
  printf '\nsearch: %s\n' "$search" >>"$copy/$(basename "$spec")"
  echo "== $name: search: $search"
  local start end
  start=$(date +%s.%N)
  TUNE_TIMEOUT_S="${TUNE_TIMEOUT_S:-900}" "$here/gpu_tune.sh" "$carry" "$copy/$(basename "$spec")" \
    "$state/$name/run" | sed 's/^/   /'
  end=$(date +%s.%N)
  echo "$name $start $end" >>"$state/walls"
}
for variant in "${variants[@]}"; do
  name="${variant%%|*}" search="${variant#*|}"
  if [[ -n "${VARIANTS:-}" && "$name" != exhaustive && " $VARIANTS " != *" ${name%-seed*} "* ]]; then
    continue
  fi
  tune "$name" "$search"
  if [[ -n "${OTHER_COORDINATOR:-}" && "$name" == auto* ]]; then
    COORDINATOR="$OTHER_COORDINATOR" tune "$name@other" "$search"
  fi
done

python3 - "$state" <<'PY'
import json, sqlite3, struct, sys
state = sys.argv[1]
walls = {}
for line in open(f"{state}/walls"):
    name, start, end = line.split()
    walls[name] = float(end) - float(start)

def summary(name):
    run = f"{state}/{name}/run"
    status = json.load(open(f"{run}/status.json"))
    best = {json.dumps(b["problem"], sort_keys=True): (b["median_ns"], json.dumps(b["config"], sort_keys=True))
            for b in status["best"]}
    db = sqlite3.connect(f"{run}/t.db")
    early = db.execute("SELECT COUNT(*) FROM results WHERE status = 7").fetchone()[0]
    return status, best, early

def compare(best, base_best):
    ratios, same = [], 0
    for problem, (ns, config) in base_best.items():
        if problem in best:
            ratios.append(best[problem][0] / ns)
            same += best[problem][1] == config
    return ratios, same

base_status, base_best, _ = summary("exhaustive")
print(f"\n{'variant':24} {'wall s':>8} {'evaluations':>12} {'early-stopped':>14}  winner / exhaustive winner (same configuration)")
for name in walls:
    status, best, early = summary(name)
    ratios, same = compare(best, base_best)
    print(f"{name:24} {walls[name]:8.1f} {status['candidates_total']:12d} {early:14d}  "
          + " ".join(f"{r:.3f}" for r in ratios) + f" ({same} of {len(base_best)})"
          + f"  ({status['state']}; {status.get('stop_reason', '')})")
def timings_in(name, problem, config):
    """`config`'s first timing at `problem` in run `name`, and its re-timing in
    alternation with the other finalists (None where it was not one)."""
    keys = {k: str(v) for k, v in json.loads(config).items()}
    problem_keys = {k: str(v) for k, v in json.loads(problem).items()}
    db = sqlite3.connect(f"{state}/{name}/run/t.db")
    for config_key, problem_key, ns, retimed in db.execute(
            "SELECT config_key, problem_key, median_ns, retiming FROM results WHERE status = 1"):
        if (dict(kv.split("=", 1) for kv in config_key.split(",")) == keys and
                dict(kv.split("=", 1) for kv in problem_key.split(",")) == problem_keys):
            # TimingStats' first field, median_ns: tag 0x09 then a little-endian double.
            return ns, struct.unpack("<d", retimed[1:9])[0] if retimed else None
    return None

for name in walls:
    if name.endswith("-again") and name[:-len("-again")] in walls:
        first = name[:-len("-again")]
        again_best, first_best = summary(name)[1], summary(first)[1]
        ratios, same = compare(again_best, first_best)
        worst = max(abs(r - 1) for r in ratios) if ratios else float("nan")
        print(f"{name} / {first}: " + " ".join(f"{r:.4f}" for r in ratios)
              + f"; largest difference {100 * worst:.2f}%, {same} of {len(ratios)} winners the same configuration")
        # Recorded times of one configuration move between runs (clocks, placement); two
        # different winners are compared where one run measured both.
        for problem, (_, config) in first_best.items():
            if problem in again_best and again_best[problem][1] != config:
                for run in (first, name):
                    a, b = timings_in(run, problem, config), timings_in(run, problem, again_best[problem][1])
                    if a and b:
                        retimed = a[1] is not None and b[1] is not None
                        ratio = a[1] / b[1] if retimed else a[0] / b[0]
                        print(f"  {problem}: {first}'s winner / {name}'s winner as {run} measured them: "
                              f"{ratio:.4f} ({'both re-timed in alternation' if retimed else 'first timings'})")
# The exhaustive run timed every configuration: it judges each search's winner
# and the best configuration the search evaluated, both by the exhaustive run's
# first timings, free of the drift between runs. Keys are "NAME=VALUE" pairs,
# sorted so that the database's keys and status.json's dicts meet.
def canonical(pairs):
    return ",".join(sorted(pairs))

def first_timings(name):
    table = {}
    db = sqlite3.connect(f"{state}/{name}/run/t.db")
    for config_key, problem_key, ns in db.execute(
            "SELECT config_key, problem_key, median_ns FROM results WHERE status = 1"):
        table.setdefault(canonical(problem_key.split(",")), {})[canonical(config_key.split(","))] = ns
    return table

def key_of(json_dict):
    return canonical(f"{k}={v}" for k, v in json.loads(json_dict).items())

exhaustive_table = first_timings("exhaustive")
print("\nas the exhaustive run timed them: a search's winner, and the best it evaluated, / the optimum")
for name in walls:
    if not name.startswith("auto"):
        continue
    evaluated = first_timings(name)
    cells = []
    for problem, (_, config) in summary(name)[1].items():
        table = exhaustive_table.get(key_of(problem), {})
        if not table:
            continue
        optimum = min(table.values())
        winner = table.get(key_of(config))
        seen = [table[c] for c in evaluated.get(key_of(problem), {}) if c in table]
        cells.append(f"{optimum / winner if winner else float('nan'):.3f}/{optimum / min(seen) if seen else float('nan'):.3f}")
    print(f"{name:24} " + " ".join(cells))
print("\nproblems in order:", ", ".join(base_best))
PY

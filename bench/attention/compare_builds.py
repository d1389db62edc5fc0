"""Times several builds of bench/attention/attention_lib.cu against each other and PyTorch in one
alternation (bench.py's bench() at its D = 128 shapes, 9 rounds, medians):

    python3 bench/attention/compare_builds.py CAUSAL LIB0.so,LIB1.so,... CONFIG...

CONFIG is BM,BN,STAGES,CONSUMERS,OVERLAP,PERSISTENT,LIB, LIB an index into the list of
libraries (e.g. main's build as 0, a change as 1); CAUSAL 0 or 1 picks the shapes. With
WINDOW_S set, each sample is bench.py's `sustained` window of that many seconds, 2 rounds.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

causal = int(sys.argv[1])
libs = [bench.Lib(path) for path in sys.argv[2].split(",")]


class Libs:
    def run(self, config, q, k, v, o, causal):
        libs[config[6]].run(config[:6], q, k, v, o, causal)


configs = [tuple(int(x) for x in c.split(",")) for c in sys.argv[3:]]
shapes = [s for s in bench.SHAPES if s[1] == 128 and s[2] == causal]
window_s = float(os.environ.get("WINDOW_S", 0))
bench.bench(Libs(), shapes, rounds=2 if window_s else 9, only=configs, window_s=window_s or None)

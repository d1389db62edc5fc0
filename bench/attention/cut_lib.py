"""Writes a copy of bench/attention/attention_lib.cu with fewer configurations, around another
attention.cu, so that a build for a timing comparison takes seconds rather than minutes:

    python3 bench/attention/cut_lib.py OUT.cu ATTENTION_CU "BM,BN,STAGES,CONSUMERS,OVERLAP;..." [LIB_CU]

The D = 128 list becomes the given configurations; the D = 64 list one configuration. Build
OUT.cu as attention_lib.cu's header says (ATTENTION_CU's folder must hold hopper_sm90.cuh).
LIB_CU (default: the attention_lib.cu beside this script) is the library to cut: an older
attention.cu needs its own version's (the tensor maps it was written for).
"""

import os
import re
import sys

out, attention_cu, configs = sys.argv[1:4]
lib_cu = (sys.argv[4] if len(sys.argv) > 4 else
          os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_lib.cu"))
src = open(lib_cu).read()
body = " \\\n".join(f"  X({c})" for c in configs.split(";")) + "\n"
for name, repl in (("D128", body), ("D64", "  X(128, 128, 2, 2, 2)\n")):
    src, n = re.subn(rf"#define TF_ATTENTION_CONFIGS_{name}\(X\) \\\n(?:.*\\\n)*.*\n",
                     f"#define TF_ATTENTION_CONFIGS_{name}(X) \\\n" + repl, src)
    assert n == 1, name
src = src.replace('"../../examples/cuda/attention/attention.cu"',
                  f'"{os.path.abspath(attention_cu)}"')
open(out, "w").write(src)

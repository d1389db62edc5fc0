#!/bin/bash
# s33 call 1: where the 1024^3 kernel's time goes, clusters of 1 against 2.
set -x
root=$(pwd); H=.carry/s33/h
export LD_LIBRARY_PATH=.carry/tf/lib:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv
$H/launch_cost > $OUT/launch_cost.txt 2>&1; cat $OUT/launch_cost.txt
for i in 1 2; do $H/gemm_vs_cublas --shapes 1024x1024x1024 --dtypes f16,bf16 --layouts tn --reps 30; done > $OUT/harness.txt 2>&1; grep -v "^#" $OUT/harness.txt
TRACE=1 $H/gemm_trace --shapes 1024x1024x1024 --dtypes f16 --layouts tn --reps 10 > $OUT/trace.txt 2>&1; grep -v TRACE $OUT/trace.txt
python3 bench/hopper_gemm/phases/analyze.py $OUT/trace.txt
timeout 200 ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct,smsp__cycles_active.avg $H/gemm_vs_cublas --shapes 1024x1024x1024 --dtypes f16 --layouts tn --profile 1 > $OUT/ncu.txt 2>&1; grep -E "hopper_gemm|nvjet|sm90|gpu__|sm__|lts__|l1tex__|smsp__" $OUT/ncu.txt | head -120

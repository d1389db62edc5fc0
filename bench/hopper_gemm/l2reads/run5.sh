#!/bin/bash
# s41 call 5 (NOTES v15): 1024^3 only, A multicast (h5a) with GROUP_M 2-8 and 6-8 stages against
# the kernel as it is (h4b), three process pairs.
A=.carry/s41/h5a/gemm_vs_cublas; B=.carry/s41/h4b/gemm_vs_cublas
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader
timeout 100 $A --shapes 1000x1000x1000,1000x1032x1000,3000x5000x2000 --dtypes f16,bf16 --layouts tn,nn --reps 3 > $OUT/check5.txt 2>&1; echo check rc=$?
grep -v "^#" $OUT/check5.txt | awk '{print $NF}' | sort | uniq -c
timeout 60 ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,lts__t_sectors_srcunit_tex_op_read.sum $A --shapes 1024x1024x1024 --dtypes f16 --layouts tn --profile 1 > $OUT/ncu5.txt 2>&1
grep -E "^  [a-z_ ]*(hopper_gemm|nvjet)|gpu__|sm__c|lts__" $OUT/ncu5.txt | sed -E 's/ +/ /g;s/\(const T1.*//' | paste - - - -
for i in 1 2 3; do
  timeout 60 $B --shapes 1024x1024x1024 --dtypes f16,bf16 --layouts tn --config BM=64 --reps 30
  timeout 60 $A --shapes 1024x1024x1024 --dtypes f16,bf16 --layouts tn --reps 30
done > $OUT/time5.txt 2>&1; echo rc=$?

#!/bin/bash
# s41 call 6 (NOTES v15): A multicast (h6a) with small GROUP_M on 128x256 at 2048^3 and
# 4096x1024x8192 and on 64x128 (8 stages, GROUP_M 1, 2) at 1024^3 TN and NN, against the kernel
# as it is (h4b); two process pairs.
A=.carry/s41/h6a/gemm_vs_cublas; B=.carry/s41/h4b/gemm_vs_cublas
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader
timeout 100 $A --shapes 1000x1000x1000,1000x1032x1000,3000x5000x2000 --dtypes f16,bf16 --layouts tn,nn --reps 3 > $OUT/check6.txt 2>&1; echo check rc=$?
grep -v "^#" $OUT/check6.txt | awk '{print $NF}' | sort | uniq -c
for i in 1 2; do
  timeout 60 $B --shapes 1024x1024x1024 --dtypes f16,bf16 --layouts tn,nn --config BM=64,CLUSTER_M=2 --reps 30
  timeout 60 $A --shapes 1024x1024x1024 --dtypes f16,bf16 --layouts tn,nn --config BM=64 --reps 30
  timeout 100 $B --shapes 2048x2048x2048,4096x1024x8192 --dtypes f16,bf16 --layouts tn --config BM=128,STREAM_K=0 --reps 30
  timeout 100 $A --shapes 2048x2048x2048,4096x1024x8192 --dtypes f16,bf16 --layouts tn --config BM=128 --reps 30
done > $OUT/time6.txt 2>&1; echo rc=$?

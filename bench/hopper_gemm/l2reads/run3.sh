#!/bin/bash
# s41 call 3 (NOTES v15): clusters of 4 (B multicast to 4 blocks) against clusters of 1 and 2.
H=.carry/s41/h3/gemm_vs_cublas
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader
f() { grep -v "^#" | awk '{print $1,$2,$3,$4,$8,$9,$10}' | sed 's/BM=//;s/,BK=64//;s/,CONSUMERS=/ C/;s/,WS=1//;s/,TMA_STORE=1//;s/,SPLIT_K=1//;s/GROUP_M=/G/;s/CLUSTER_M=/c/;s/STREAM_K=/SK/'; }
echo "== check: clusters of 4, edge shapes, f16/bf16, TN/NN"
timeout 120 $H --shapes 1000x1000x1000,3000x5000x2000 --dtypes f16,bf16 --layouts tn,nn --config CLUSTER_M=4,STREAM_K=0 --reps 3 > $OUT/check.txt 2>&1; echo rc=$?
grep "cluster of" $OUT/check.txt | sort | uniq -c
grep -v "^#" $OUT/check.txt | awk '{print $NF}' | sort | uniq -c
M=gpu__time_duration.sum,sm__cycles_elapsed.max,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum
timeout 100 ncu --clock-control none --profile-from-start off --metrics $M $H --shapes 1024x1024x1024 --dtypes f16 --layouts tn --config BM=64 --profile 1 > $OUT/ncu3.txt 2>&1
grep -E "^  [a-z_ ]*(hopper_gemm|nvjet)|gpu__|sm__c|lts__|l1tex" $OUT/ncu3.txt | sed -E 's/ +/ /g;s/\(const T1.*//' 
echo "== timing"
for i in 1 2; do
  timeout 100 $H --shapes 1024x1024x1024 --dtypes f16,bf16 --layouts tn --config BM=64 --reps 30
  timeout 200 $H --shapes 2048x2048x2048,4096x4096x4096,4096x1024x8192,8192x8192x1024,3000x5000x2000 --dtypes f16,bf16 --layouts tn --config STREAM_K=0,CONSUMERS=2 --reps 30
done > $OUT/time3.txt 2>&1; echo rc=$?
f < $OUT/time3.txt
timeout 100 $H --shapes 8192x8192x8192 --dtypes f16,bf16 --layouts tn --config STREAM_K=1 --reps 10 > $OUT/sk3.txt 2>&1; echo "sk rc=$?"; f < $OUT/sk3.txt

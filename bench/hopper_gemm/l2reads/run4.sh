#!/bin/bash
# s41 call 4 (NOTES v15): clusters of 2 along N multicasting A (h4a, HOPPER_GEMM_MULTICAST_A=1)
# against the kernel as it is (h4b, clusters along M multicasting B).
A=.carry/s41/h4a/gemm_vs_cublas; B=.carry/s41/h4b/gemm_vs_cublas
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader
f() { grep -v "^#" | awk '{print $1,$2,$3,$4,$8,$9,$10}' | sed 's/BM=//;s/,BK=64//;s/,CONSUMERS=/ C/;s/,WS=1//;s/,TMA_STORE=1//;s/,SPLIT_K=1//;s/GROUP_M=/G/;s/CLUSTER_M=/c/;s/STREAM_K=/SK/'; }
echo "== check, A multicast"
timeout 150 $A --shapes 1000x1000x1000,1000x1032x1000,3000x5000x2000 --dtypes f16,bf16 --layouts tn,nn --config CLUSTER_M=2 --reps 3 > $OUT/check4.txt 2>&1; echo rc=$?
grep -v "^#" $OUT/check4.txt | awk '{print $NF}' | sort | uniq -c; grep -v "^#" $OUT/check4.txt | grep -v " ok$" | head
M=gpu__time_duration.sum,sm__cycles_elapsed.max,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum
for h in $B $A; do
  timeout 60 ncu --clock-control none --profile-from-start off --metrics $M $h --shapes 1024x1024x1024 --dtypes f16 --layouts tn --config BM=64 --profile 1
  timeout 60 ncu --clock-control none --profile-from-start off --metrics $M $h --shapes 2048x2048x2048 --dtypes f16 --layouts tn --config BM=128,STREAM_K=0 --profile 1
done > $OUT/ncu4.txt 2>&1
grep -E "^  [a-z_ ]*(hopper_gemm|nvjet)|gpu__|sm__c|lts__" $OUT/ncu4.txt | sed -E 's/ +/ /g;s/\(const T1.*//' | paste - - - - -
echo "== timing (first B = as is, then A = A multicast)"
for i in 1 2; do
  for h in $B $A; do timeout 60 $h --shapes 1024x1024x1024 --dtypes f16,bf16 --layouts tn --config BM=64 --reps 30; done
  for h in $B $A; do timeout 150 $h --shapes 2048x2048x2048,4096x4096x4096,4096x1024x8192,8192x8192x1024,3000x5000x2000 --dtypes f16,bf16 --layouts tn --config STREAM_K=0,CONSUMERS=2 --reps 30; done
done > $OUT/time4.txt 2>&1; echo rc=$?
for h in $B $A; do timeout 100 $h --shapes 8192x8192x8192 --dtypes f16,bf16 --layouts tn --config STREAM_K=1 --reps 10; done > $OUT/sk4.txt 2>&1; echo "sk rc=$?"
f < $OUT/time4.txt | grep -v cublas > $OUT/t4.txt; f < $OUT/sk4.txt | grep -v cublas >> $OUT/t4.txt; wc -l $OUT/t4.txt

#!/bin/bash
# s41 call 8 (NOTES v15): cuBLAS's 1024^3 structure in our orientation: 128 x 64 tiles, two
# consumers, clusters of 2 along N multicasting A (h8a), against the kernel as it is (h4b).
A=.carry/s41/h8a/gemm_vs_cublas; B=.carry/s41/h4b/gemm_vs_cublas
timeout 60 $A --shapes 1000x1000x1000,1000x1032x1000,3000x5000x2000 --dtypes f16,bf16 --layouts tn,nn --reps 3 > $OUT/check8.txt 2>&1; echo check rc=$?
grep -v "^#" $OUT/check8.txt | awk '{print $NF}' | sort | uniq -c
timeout 60 ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,lts__t_sectors_srcunit_tex_op_read.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum $A --shapes 1024x1024x1024 --dtypes f16 --layouts tn --profile 1 > $OUT/ncu8.txt 2>&1
grep -E "^  [a-z_ ]*(hopper_gemm|nvjet)|gpu__|sm__c|lts__|lrc__" $OUT/ncu8.txt | sed -E 's/ +/ /g;s/\(const T1.*//' | paste - - - - -
for i in 1 2; do
  timeout 60 $B --shapes 1024x1024x1024 --dtypes f16,bf16 --layouts tn --config BM=64,CLUSTER_M=2 --reps 30
  timeout 60 $A --shapes 1024x1024x1024 --dtypes f16,bf16 --layouts tn --reps 30
done > $OUT/time8.txt 2>&1; echo rc=$?
grep -v "^#" $OUT/time8.txt | grep -v cublas | awk '{print $2,$4,$8}' | sed 's/,BK=64//;s/,WS=1//;s/,TMA_STORE=1,SPLIT_K=1,STREAM_K=0//'

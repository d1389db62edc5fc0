#!/bin/bash
# s41 call 2 (NOTES v15): raster order against L2 read sectors and time. GROUP_M = 1 sweeps a row
# of cluster tiles first, so neighbouring clusters share A (not multicast) instead of B.
H=.carry/s41/h2/gemm_vs_cublas
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader
M=gpu__time_duration.sum,sm__cycles_elapsed.max,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum
for i in 1 2; do
  timeout 100 ncu --clock-control none --profile-from-start off --metrics $M $H --shapes 1024x1024x1024 --dtypes f16 --layouts tn --config BM=64 --profile 1 2>&1
  timeout 100 ncu --clock-control none --profile-from-start off --metrics $M $H --shapes 2048x2048x2048 --dtypes f16 --layouts tn --config BM=128 --profile 1 2>&1
done > $OUT/ncu2.txt
for i in 1 2; do
  timeout 150 $H --shapes 1024x1024x1024 --dtypes f16,bf16 --layouts tn --config BM=64 --reps 30
  timeout 150 $H --shapes 2048x2048x2048 --dtypes f16,bf16 --layouts tn --config BM=128 --reps 30
done > $OUT/harness2.txt 2>&1
grep -v "^#" $OUT/harness2.txt | awk '{print $1,$2,$4,$8,$9,$10}' | sed 's/BM=//;s/,BK=64//;s/,CONSUMERS=/ C/;s/,WS=1//;s/,TMA_STORE=1,SPLIT_K=1,STREAM_K=0//'

#!/bin/bash
# s41 call 1 (NOTES v15): what ncu's L2 read sectors count, our 64x128 clusters of 1 and 2 and
# cuBLAS at 1024^3, 128x256 at 2048^3; L2 promotion varied; the full set at 1024^3.
H=.carry/s41/h1/gemm_vs_cublas
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader
M=gpu__time_duration.sum,sm__cycles_elapsed.max,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_miss.sum,lts__d_sectors_fill_device.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_sectors_srcunit_tex_op_write.sum
ncu_m() { timeout 150 ncu --clock-control none --profile-from-start off --metrics $M "$@" 2>&1; }
for shape in 1024x1024x1024 2048x2048x2048; do
  for p in 256 0; do
    echo "=== shape $shape promotion $p"
    HG_L2_PROMOTION=$p ncu_m $H --shapes $shape --dtypes f16 --layouts tn --profile 1
  done
done > $OUT/ncu_metrics.txt
grep -E "^  [a-z_]+hopper_gemm|^  nvjet|^  void|===|gpu__|sm__|lts__|l1tex__|dram__|ERR|rror" $OUT/ncu_metrics.txt | sed -E 's/ +/ /g' | cut -c1-160 | head -400
timeout 240 ncu --clock-control none --profile-from-start off --set full -o $OUT/full $H --shapes 1024x1024x1024 --dtypes f16 --layouts tn --config BM=64,STAGES=7 --profile 1 > $OUT/full_log.txt 2>&1; echo "full rc=$?"
ncu --import $OUT/full.ncu-rep --page raw --csv > $OUT/full_raw.csv 2>&1; wc -c $OUT/full_raw.csv
ncu --query-metrics --chip gh100 > $OUT/query.txt 2>&1; wc -l $OUT/query.txt

#!/bin/bash
# s41 call 7 (NOTES v15): the L2 request coalescer's counters (hardware coalescing against
# programmatic = TMA multicast) for cuBLAS, B multicast (h4b) and A multicast (h5a, h6a).
A5=.carry/s41/h5a/gemm_vs_cublas; A6=.carry/s41/h6a/gemm_vs_cublas; B=.carry/s41/h4b/gemm_vs_cublas
M=gpu__time_duration.sum,sm__cycles_elapsed.max,lts__t_sectors_srcunit_tex_op_read.sum,lrc__lts2lrc_sectors_op_read.sum,lrc__xbar2gpc_sectors_op_read.sum,lrc__xbar2lrc_requests_op_read.sum,lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum,lrc__request_sectors_op_read_coalescing_achieved_type_programmatic.sum,lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_none.sum,lrc__xbar2gpc_sectors_op_read_coalescing_achieved_type_hardware.sum,lrc__xbar2gpc_sectors_op_read_coalescing_achieved_type_programmatic.sum,l1tex__m_l1tex2xbar_read_requests_mem_global_op_tma_ld_dest_multicast.sum,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld_dest_multicast.sum,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld_dest_self.sum
n() { timeout 90 ncu --clock-control none --profile-from-start off --metrics $M "$@" 2>&1; }
{
n $B --shapes 1024x1024x1024 --dtypes f16 --layouts tn --config BM=64 --profile 1
n $A5 --shapes 1024x1024x1024 --dtypes f16 --layouts tn --config BM=64,GROUP_M=2 --profile 1
n $A6 --shapes 1024x1024x1024 --dtypes f16 --layouts tn --config BM=64,GROUP_M=2 --profile 1
n $B --shapes 2048x2048x2048 --dtypes f16 --layouts tn --config BM=128,STREAM_K=0,GROUP_M=8 --profile 1
n $A6 --shapes 2048x2048x2048 --dtypes f16 --layouts tn --config BM=128,GROUP_M=8 --profile 1
} > $OUT/ncu7.txt
grep -E "ERR|rror" $OUT/ncu7.txt | head -5
python3 - $OUT/ncu7.txt <<'PY'
import re,sys
cur=None
for line in open(sys.argv[1]):
    m=re.match(r'\s+(nvjet\S+|void hopper_gemm<[^>]*>)',line)
    if m: print('##', m.group(1).replace('void hopper_gemm<__half, 0, ','hg<')[:60]); continue
    m=re.match(r'\s+(\S+)\s+(\S+)\s+([\d,.]+)$',line)
    if m: print('  ', m.group(1).replace('.sum','').replace('coalescing_achieved_type_','ca_'), m.group(3))
PY

// The PTX of compare_kernels.cu's kernels (tf_compare_<dtype>), made by nvcc at
// build time and loaded by the CUDA backend to check outputs on the GPU.
#pragma once

namespace tf::nvidia {

extern const char kCompareKernelsPtx[];

}  // namespace tf::nvidia

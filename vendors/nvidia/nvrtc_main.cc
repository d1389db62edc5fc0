// tunefleet-nvrtc: compiles one CUDA translation unit to a CUBIN with NVRTC.
// It runs as a child of the coordinator so that a compiler crash or hang
// costs one batch, and a time limit can kill it.
//
//   tunefleet-nvrtc --version
//   tunefleet-nvrtc --arch sm_90 --tu batch.cu --cubin batch.cubin --names batch.names
//                   [--name EXPRESSION]... [-- NVRTC_OPTION...]
//
// Each --name is a name expression ("&transpose<32,8>") whose template NVRTC
// instantiates; the names file gets one "EXPRESSION<TAB>LOWERED_NAME" line per
// name. Includes resolve against the TU's directory, then the CUDA headers
// (libcu++ included); the C headers kernels include under nvcc (<cstdint>,
// <cmath>, <cfloat>, ...) map onto libcu++ and NVRTC's built-ins.
// The program log, ptxas's per-kernel resource report included, goes to
// stdout. Exit status: 0 compiled, 1 compilation failed, 2 bad usage or I/O.
#include <nvrtc.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

// nvcc pre-includes cuda_runtime.h, whose host half brings <math.h>'s
// constants to every kernel; NVRTC has neither that nor the C and C++ library
// headers kernels include. This prelude (pre-included in every program) and
// the headers below give a kernel that builds with nvcc the same names,
// usable in constant expressions as there, at no cost to compile time (no
// header is read). The M_ values are glibc's tokens, so that a kernel
// defining them again agrees.
const char kPrelude[] = R"(#pragma once
#ifndef INFINITY
#define INFINITY (__builtin_bit_cast(float, 0x7f800000u))
#endif
#ifndef NAN
#define NAN (__builtin_bit_cast(float, 0x7fc00000u))
#endif
#ifndef HUGE_VALF
#define HUGE_VALF (__builtin_bit_cast(float, 0x7f800000u))
#endif
#ifndef HUGE_VAL
#define HUGE_VAL (__builtin_bit_cast(double, 0x7ff0000000000000ull))
#endif
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
)";

// <cstdint> maps onto libcu++'s types.
const char kCstdint[] = R"(#pragma once
#include <cuda/std/cstdint>
namespace std {
using cuda::std::int8_t; using cuda::std::int16_t; using cuda::std::int32_t;
using cuda::std::int64_t; using cuda::std::uint8_t; using cuda::std::uint16_t;
using cuda::std::uint32_t; using cuda::std::uint64_t; using cuda::std::intptr_t;
using cuda::std::uintptr_t;
}
using std::int8_t; using std::int16_t; using std::int32_t; using std::int64_t;
using std::uint8_t; using std::uint16_t; using std::uint32_t; using std::uint64_t;
using std::intptr_t; using std::uintptr_t;
)";

const char kClimits[] = "#pragma once\n#include <cuda/std/climits>\n";

// libcu++'s <climits> gives NVRTC the compiler's __FLT_*__ values.
const char kCfloat[] = R"(#pragma once
#include <cuda/std/climits>
#define FLT_RADIX __FLT_RADIX__
#define FLT_MANT_DIG __FLT_MANT_DIG__
#define FLT_DIG __FLT_DIG__
#define FLT_MIN __FLT_MIN__
#define FLT_MAX __FLT_MAX__
#define FLT_EPSILON __FLT_EPSILON__
#define FLT_TRUE_MIN __FLT_DENORM_MIN__
#define DBL_MANT_DIG __DBL_MANT_DIG__
#define DBL_DIG __DBL_DIG__
#define DBL_MIN __DBL_MIN__
#define DBL_MAX __DBL_MAX__
#define DBL_EPSILON __DBL_EPSILON__
#define DBL_TRUE_MIN __DBL_DENORM_MIN__
)";

const char kCstddef[] = R"(#pragma once
#include <cuda/std/cstddef>
namespace std {
using cuda::std::size_t; using cuda::std::ptrdiff_t; using cuda::std::nullptr_t;
}
)";

// printf, assert and the math functions are NVRTC built-ins; the constants
// come with the prelude.
const char kBuiltIn[] = "#pragma once\n";

constexpr char kPreludeName[] = "tunefleet_nvcc_prelude.h";

struct Header {
  const char* name;
  const char* source;
};
const Header kHeaders[] = {
    {kPreludeName, kPrelude}, {"cstdint", kCstdint}, {"stdint.h", kCstdint}, {"climits", kClimits},
    {"limits.h", kClimits},   {"cfloat", kCfloat},   {"float.h", kCfloat},   {"cstddef", kCstddef},
    {"stddef.h", kCstddef},   {"cmath", kBuiltIn},   {"math.h", kBuiltIn},   {"cstdio", kBuiltIn},
    {"stdio.h", kBuiltIn},    {"cassert", kBuiltIn}, {"assert.h", kBuiltIn},
};

struct Request {
  std::string arch;
  std::string tu_path;
  std::string cubin_path;
  std::string names_path;
  std::vector<std::string> names;
  std::vector<std::string> options;
};

constexpr const char* kUsage =
    "usage: tunefleet-nvrtc --arch sm_XX --tu FILE --cubin FILE --names FILE "
    "[--name EXPR]... [-- NVRTC_OPTION...]\n       tunefleet-nvrtc --version\n";

int Usage(const std::string& why) {
  std::cerr << "tunefleet-nvrtc: " << why << "\n" << kUsage;
  return 2;
}

bool ParseArgs(int argc, char** argv, Request* request, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      request->options.assign(argv + i + 1, argv + argc);
      break;
    }
    if (i + 1 >= argc) {
      *error = "missing value after " + arg;
      return false;
    }
    std::string value = argv[++i];
    if (arg == "--arch") {
      request->arch = value;
    } else if (arg == "--tu") {
      request->tu_path = value;
    } else if (arg == "--cubin") {
      request->cubin_path = value;
    } else if (arg == "--names") {
      request->names_path = value;
    } else if (arg == "--name") {
      request->names.push_back(value);
    } else {
      *error = "unknown argument " + arg;
      return false;
    }
  }
  if (request->arch.empty() || request->tu_path.empty() || request->cubin_path.empty() ||
      request->names_path.empty()) {
    *error = "--arch, --tu, --cubin and --names are required";
    return false;
  }
  return true;
}

bool Check(nvrtcResult result, const char* what) {
  if (result == NVRTC_SUCCESS) return true;
  std::cerr << "tunefleet-nvrtc: " << what << ": " << nvrtcGetErrorString(result) << "\n";
  return false;
}

bool WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) std::cerr << "tunefleet-nvrtc: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

int Compile(const Request& request) {
  std::ifstream in(request.tu_path, std::ios::binary);
  if (!in) {
    std::cerr << "tunefleet-nvrtc: cannot read " << request.tu_path << "\n";
    return 2;
  }
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  nvrtcProgram program;
  std::vector<const char*> header_names, header_sources;
  for (const Header& header : kHeaders) {
    header_names.push_back(header.name);
    header_sources.push_back(header.source);
  }
  if (!Check(nvrtcCreateProgram(&program, source.c_str(), request.tu_path.c_str(),
                                static_cast<int>(header_names.size()), header_sources.data(),
                                header_names.data()),
             "nvrtcCreateProgram")) {
    return 2;
  }
  for (const std::string& name : request.names) {
    if (!Check(nvrtcAddNameExpression(program, name.c_str()), name.c_str())) return 2;
  }
  std::filesystem::path tu_dir = std::filesystem::absolute(request.tu_path).parent_path();
  std::vector<std::string> options = {
      "--gpu-architecture=" + request.arch, "--include-path=" + tu_dir.string(),
      "--ptxas-options=--verbose", std::string("--pre-include=") + kPreludeName};
  // The toolkit's headers: cuda_fp16.h and friends, and libcu++ (cuda/std/...)
  // under cccl/, which stands in for the C++ library NVRTC lacks.
  for (const std::string dir : {TF_CUDA_INCLUDE_DIR, TF_CUDA_INCLUDE_DIR "/cccl"}) {
    if (std::filesystem::is_directory(dir)) options.push_back("--include-path=" + dir);
  }
  options.insert(options.end(), request.options.begin(), request.options.end());
  std::vector<const char*> option_ptrs;
  for (const std::string& option : options) option_ptrs.push_back(option.c_str());

  nvrtcResult compiled =
      nvrtcCompileProgram(program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::string log(log_size, '\0');
    if (nvrtcGetProgramLog(program, log.data()) == NVRTC_SUCCESS) {
      log.resize(std::strlen(log.c_str()));  // up to the terminating NUL
      std::cout << log << (log.ends_with('\n') ? "" : "\n");
    }
  }
  if (compiled != NVRTC_SUCCESS) {
    std::cout << "nvrtc: " << nvrtcGetErrorString(compiled) << "\n";
    nvrtcDestroyProgram(&program);
    return 1;
  }

  size_t cubin_size = 0;
  if (!Check(nvrtcGetCUBINSize(program, &cubin_size), "nvrtcGetCUBINSize")) return 2;
  std::string cubin(cubin_size, '\0');
  if (!Check(nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN")) return 2;
  std::ostringstream names;
  for (const std::string& name : request.names) {
    const char* lowered = nullptr;
    if (!Check(nvrtcGetLoweredName(program, name.c_str(), &lowered), name.c_str())) return 2;
    names << name << '\t' << lowered << '\n';
  }
  nvrtcDestroyProgram(&program);
  // The names file last: its presence means the cubin is complete.
  if (!WriteFile(request.cubin_path, cubin) || !WriteFile(request.names_path, names.str())) {
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::cout << "tunefleet-nvrtc: compiles one CUDA translation unit to a CUBIN with NVRTC, "
                 "as a child of the coordinator or a worker (which run it beside themselves); "
                 "not a command for people. Exit status: 0 compiled, 1 compilation failed, 2 "
                 "bad usage or I/O.\n"
              << kUsage;
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "--version") {
    int major = 0, minor = 0;
    if (!Check(nvrtcVersion(&major, &minor), "nvrtcVersion")) return 2;
    std::cout << "NVRTC " << major << "." << minor << "\n";
    return 0;
  }
  Request request;
  std::string error;
  if (!ParseArgs(argc, argv, &request, &error)) return Usage(error);
  return Compile(request);
}

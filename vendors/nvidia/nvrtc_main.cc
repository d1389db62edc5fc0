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
// (libcu++ included); <cstdint> maps onto libcu++'s.
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

// NVRTC has no C++ library headers. Kernels that also build with nvcc
// include <cstdint>; libcu++ provides its types.
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

struct Request {
  std::string arch;
  std::string tu_path;
  std::string cubin_path;
  std::string names_path;
  std::vector<std::string> names;
  std::vector<std::string> options;
};

int Usage(const std::string& why) {
  std::cerr << "tunefleet-nvrtc: " << why
            << "\nusage: tunefleet-nvrtc --arch sm_XX --tu FILE --cubin FILE --names FILE "
               "[--name EXPR]... [-- NVRTC_OPTION...]\n       tunefleet-nvrtc --version\n";
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
  const char* header_names[] = {"cstdint"};
  const char* header_sources[] = {kCstdint};
  if (!Check(nvrtcCreateProgram(&program, source.c_str(), request.tu_path.c_str(), 1,
                                header_sources, header_names),
             "nvrtcCreateProgram")) {
    return 2;
  }
  for (const std::string& name : request.names) {
    if (!Check(nvrtcAddNameExpression(program, name.c_str()), name.c_str())) return 2;
  }
  std::filesystem::path tu_dir = std::filesystem::absolute(request.tu_path).parent_path();
  std::vector<std::string> options = {"--gpu-architecture=" + request.arch,
                                      "--include-path=" + tu_dir.string(),
                                      "--ptxas-options=--verbose"};
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

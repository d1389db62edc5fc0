#include "common/shared_library.h"

#include <dlfcn.h>

namespace tf {

Result<SharedLibrary> SharedLibrary::Open(const std::string& soname, const std::string& what) {
  // RTLD_LOCAL: the library's symbols stay out of the process's namespace, so
  // that two loaded libraries cannot interpose each other.
  void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Status::Unavailable("cannot load " + what + " (" + soname +
                               "): " + (why != nullptr ? why : "dlopen failed"));
  }
  return SharedLibrary(handle, soname, what);
}

void* SharedLibrary::Symbol(const char* name) const { return dlsym(handle_, name); }

Status SharedLibrary::CheckBound(std::string_view lacks) const {
  if (missing_.empty()) return Status::Ok();
  std::string text = Describe() + " " + std::string(lacks);
  for (const std::string& name : missing_) text += " " + name;
  return Status::Unavailable(text);
}

std::string SharedLibrary::Describe() const { return what_ + " (" + soname_ + ")"; }

}  // namespace tf

// A shared library opened at run time by its soname, and functions bound from
// it by name, for code that must also run on hosts where the library is
// absent: nothing links against it. Errors name the library and every
// missing symbol. The library is never closed: what is bound from it is kept
// for the rest of the process (typically in a function-local static), so a
// SharedLibrary is a plain handle, copied freely.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tf {

class SharedLibrary {
 public:
  // `soname` as dlopen takes it ("libm.so.6"); `what` names the library for a
  // person ("the C math library"). Unavailable "cannot load WHAT (SONAME):
  // <the loader's reason>" when it cannot be loaded.
  static Result<SharedLibrary> Open(const std::string& soname, const std::string& what);

  // Sets `function` to the symbol `name`, or to null and notes it missing,
  // for CheckBound to report. `name` is the symbol as exported (a versioned
  // one, "cuMemAlloc_v2", where the header's macro maps onto it).
  template <typename F>
  void Bind(F*& function, const char* name) {
    function = reinterpret_cast<F*>(Symbol(name));
    if (function == nullptr) missing_.push_back(name);
  }
  // As Bind, but a missing symbol leaves `function` null and is no error.
  template <typename F>
  void BindOptional(F*& function, const char* name) {
    function = reinterpret_cast<F*>(Symbol(name));
  }

  // Ok when every Bind found its symbol, else Unavailable "WHAT (SONAME)
  // LACKS NAME NAME..." naming each missing one; `lacks` may say more ("is too
  // old: it lacks").
  Status CheckBound(std::string_view lacks = "lacks") const;

  // "WHAT (SONAME)", as errors name the library.
  std::string Describe() const;

 private:
  SharedLibrary(void* handle, std::string soname, std::string what)
      : handle_(handle), soname_(std::move(soname)), what_(std::move(what)) {}
  void* Symbol(const char* name) const;

  void* handle_;
  std::string soname_;
  std::string what_;
  std::vector<std::string> missing_;
};

}  // namespace tf

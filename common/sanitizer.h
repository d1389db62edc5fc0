// TF_ASAN: 1 in builds with AddressSanitizer (GCC or clang), else 0. Code
// that sets an address-space limit needs it: the sanitizer's shadow memory
// alone is terabytes of address space.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define TF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TF_ASAN 1
#endif
#endif
#ifndef TF_ASAN
#define TF_ASAN 0
#endif

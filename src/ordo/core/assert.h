// ORDO_ASSERT: checks for bugs, on in debug and test builds. Never used on anything user input can
// reach: input is validated first and fails with an Error.
#pragma once

#include <cstdio>
#include <cstdlib>

#if defined(ORDO_ENABLE_ASSERTS)
#define ORDO_ASSERT(cond)                                                                 \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: ORDO_ASSERT failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (false)
#else
#define ORDO_ASSERT(cond) ((void)0)
#endif

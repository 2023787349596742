/* SPDX-License-Identifier: BSD-3-Clause */
/* The runtime functions the stand-in does not emulate (unsupported.h): each is exported, so that a
 * program that links it starts, and a call returns cudaErrorNotSupported, made the last error, and
 * says once on stderr which function it was. This file includes no CUDA header: the functions are
 * defined without their parameters (which they ignore; the caller passes them in registers or on
 * its own stack, and every one of them returns a cudaError_t, an int). */
#include "unsupported.h"

/* errors.c: the answer of an unsupported function named @p name, said once per @p said. */
int rt_unsupported(const char *name, int *said);

#define RT_STUB(_name)                                                                             \
    __attribute__((visibility("default"))) int _name(void);                                        \
    int _name(void)                                                                                \
    {                                                                                              \
        static int said;                                                                           \
        return rt_unsupported(#_name, &said);                                                      \
    }

RT_UNSUPPORTED(RT_STUB)
#if CUDART_MAJOR >= 13
RT_UNSUPPORTED_13(RT_STUB)
#else
RT_UNSUPPORTED_12(RT_STUB)
#endif

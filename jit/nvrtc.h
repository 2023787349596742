/* SPDX-License-Identifier: BSD-3-Clause */
/* NVRTC, opened with dlopen at run time behind a table of function pointers, so that the library
 * starts on hosts without it: loading, version and build identity, target choice, compiling. */
#ifndef TJ_JIT_NVRTC_H
#define TJ_JIT_NVRTC_H

#include <stddef.h>

#include "typejit.h"

/* Loads libnvrtc once (thread-safe): "libnvrtc.so.M" for the CUDA driver's major version M
 * (13 without a driver), "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", then the same names
 * under $CUDA_HOME/lib64 and /usr/local/cuda/lib64. TJ_ERR_NO_NVRTC when none loads:
 * a normal state, logged at debug level only. */
tj_status_t tj_nvrtc_load(void);

/* Version of the loaded NVRTC. */
tj_status_t tj_nvrtc_version(int *major, int *minor);

/* Hex GNU build-id of the loaded libnvrtc, "unknown" when it has none or none is loaded. */
const char *tj_nvrtc_build_id(void);

/* The fixed option text used for every compile (part of the cache key); the target option is
 * added to it. */
const char *tj_nvrtc_options(void);

/* Target for a device of compute capability @p sm (90 for 9.0): "sm_90" (CUBIN) when NVRTC
 * supports that arch, else "compute_<highest supported arch not above sm>" (PTX, which the
 * driver compiles for the device). TJ_ERR_UNSUPPORTED when the device is older than every
 * supported arch, TJ_ERR_INVALID when @p len is too small. */
tj_status_t tj_nvrtc_target(int sm, char *target, size_t len);

/* Whether the loaded NVRTC compiles for @p target (sm_XX or compute_XX, well formed): TJ_OK, or
 * TJ_ERR_UNSUPPORTED with the reason in @p why ("sm_70 is older than every arch NVRTC 13.0
 * compiles for (this NVRTC dropped it); use a newer target or an older CUDA toolkit", "sm_91 is
 * not an arch NVRTC 13.0 knows (the closest below is compute_90)"), or TJ_ERR_NO_NVRTC. Logs
 * nothing: the `typejit` command and TYPEJIT_ARCH say it in their own words. */
tj_status_t tj_nvrtc_check_target(const char *target, char *why, size_t len);

/* TYPEJIT_ARCH when it is set and the loaded NVRTC compiles for it (or no NVRTC can be loaded to
 * ask), else "": an unsupported target is checked once, said once per job with the reason of
 * tj_nvrtc_check_target, and the device's own target is used instead. */
const char *tj_nvrtc_arch_setting(void);

/* Compiles @p source (program name @p name) for @p target: "sm_XX" gives a CUBIN, "compute_XX"
 * gives PTX text (NUL-terminated; *len counts the NUL). *image is malloc'd. On failure logs the
 * NVRTC program log (once per distinct log) and returns TJ_ERR_JIT. */
tj_status_t tj_nvrtc_compile(const char *source, const char *name, const char *target, void **image,
                             size_t *len);

#endif /* TJ_JIT_NVRTC_H */

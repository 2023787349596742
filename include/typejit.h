/* SPDX-License-Identifier: BSD-3-Clause */
/* typejit public API: status codes, version and introspection of the preloaded interposer. */
#ifndef TYPEJIT_H
#define TYPEJIT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TJ_API __attribute__((visibility("default")))
#else
#define TJ_API
#endif

/* Every status typejit can report: name, value, message. One list so that the enum and
 * tj_status_string() cannot drift apart. */
#define TJ_STATUS_LIST(_X)                                                                         \
    _X(TJ_OK, 0, "success")                                                                        \
    _X(TJ_ERR_NOT_STRIDED, -1, "datatype is not a strided block")                                  \
    _X(TJ_ERR_NOMEM, -2, "out of memory")                                                          \
    _X(TJ_ERR_INVALID, -3, "invalid argument")                                                     \
    _X(TJ_ERR_OVERFLOW, -4, "size, offset or stride does not fit in 64 bits")                      \
    _X(TJ_ERR_MPI, -5, "MPI call failed")                                                          \
    _X(TJ_ERR_NO_CUDA, -6, "no CUDA driver or device")                                             \
    _X(TJ_ERR_CUDA, -7, "CUDA driver call failed")                                                 \
    _X(TJ_ERR_NO_NVRTC, -8, "NVRTC library not available")                                         \
    _X(TJ_ERR_JIT, -9, "NVRTC compile failed")                                                     \
    _X(TJ_ERR_IO, -10, "file input/output failed")                                                 \
    _X(TJ_ERR_CORRUPT, -11, "cache entry failed validation")                                       \
    _X(TJ_ERR_UNTRUSTED, -12, "cache directory or entry is writable by other users")               \
    _X(TJ_ERR_NOT_FOUND, -13, "not found")                                                         \
    _X(TJ_ERR_PARSE, -14, "syntax error in type description")                                      \
    _X(TJ_ERR_UNSUPPORTED, -15, "not supported")                                                   \
    _X(TJ_ERR_CONTEXT, -16, "cuda context unusable after a sticky error")                          \
    _X(TJ_ERR_BOUNDS, -17, "datatype reaches outside its device allocation")                       \
    _X(TJ_ERR_BUSY, -18, "another process is compiling this kernel")

/** Status codes: TJ_OK is zero, errors are negative. */
typedef enum {
#define TJ_STATUS_ENUM(_name, _value, _msg) _name = _value,
    TJ_STATUS_LIST(TJ_STATUS_ENUM)
#undef TJ_STATUS_ENUM
} tj_status_t;

/**
 * @brief Human-readable message for a status code.
 * @param status a tj_status_t value
 * @return a static string; "unknown status" for values outside the list
 */
TJ_API const char *tj_status_string(tj_status_t status);

/**
 * @brief Version of the typejit library, "MAJOR.MINOR.PATCH".
 * @return a static string
 */
TJ_API const char *tj_version(void);

/**
 * @brief Describe what typejit does with a committed datatype.
 *
 * Writes one line such as "strided W=8 size=1024 start=0 extent=4096 counts=64,16 strides=1,256
 * kernels=jit" or "not strided: system MPI". The datatype is passed by address so that this header
 * needs no MPI header: pass `&dt` where `dt` is an `MPI_Datatype`. Call it as an MPI function:
 * from any thread under MPI_THREAD_MULTIPLE, below that level only where an MPI call would be
 * allowed (typejit's type records are locked only under MPI_THREAD_MULTIPLE).
 *
 * @param datatype address of an MPI_Datatype handle
 * @param buf      output buffer
 * @param len      size of @p buf in bytes
 * @return TJ_OK, or TJ_ERR_NOT_FOUND when typejit has never seen the datatype committed
 */
TJ_API tj_status_t tj_type_describe(const void *datatype, char *buf, size_t len);

/**
 * @brief Format this process's counters as space-separated key=value pairs.
 * @param buf output buffer
 * @param len size of @p buf in bytes
 * @return number of characters that the full text needs, as snprintf
 */
TJ_API int tj_stats_format(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* TYPEJIT_H */

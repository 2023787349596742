/* Buffers of every memory kind for the device tests: device, managed, pinned mapped and pageable
 * host memory, filled and read through the CUDA driver as an application does. */
#ifndef TJ_TESTS_DEVBUF_H
#define TJ_TESTS_DEVBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { K_DEVICE, K_MANAGED, K_PINNED, K_HOST } kind_t;

extern const char *const kind_names[4];

typedef struct {
    kind_t kind;
    size_t len;
    char *ptr;
} buf_t;

/* Device or managed: host code may not touch it (the test driver faults). */
bool on_device(kind_t k);
buf_t buf_alloc(kind_t kind, size_t len);
void buf_free(buf_t *b);
/* The whole buffer from or to host memory. */
void buf_put(const buf_t *b, const void *src);
void buf_get(const buf_t *b, void *dst);

#ifdef TJ_CUDART
/* The runtime-API builds (devbuf_rt.c): device 0 made current with cudaSetDevice (false, with the
 * reason on stdout, without a device); whether the thread still has the context and device it had
 * then, and no runtime error; device buffers from cudaMallocAsync when buf_stream_ordered. */
bool devbuf_rt_open(void);
bool devbuf_rt_same_context(void);
extern bool buf_stream_ordered;
#endif

#endif /* TJ_TESTS_DEVBUF_H */

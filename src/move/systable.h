/* SPDX-License-Identifier: BSD-3-Clause */
/* The system table: what `typejit measure` timed on one kind of machine (kernels by packed size
 * and run length, device-host copies, ping-pong, launch latency), its text format, and the
 * interpolation the method model predicts from. docs/system-table.md documents the format. */
#ifndef TJ_MOVE_SYSTABLE_H
#define TJ_MOVE_SYSTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "typejit.h"

#define TJ_SYSTABLE_MAGIC    "typejit-system-table"
#define TJ_SYSTABLE_VERSION  1
#define TJ_SYSTABLE_MAX_ROWS 64 /* rows of one table */
#define TJ_SYSTABLE_MAX      64 /* tables in one file */

/* The measured quantities. Kernel quantities are measured per run length, ping-pong per peer
 * placement, copies once. */
typedef enum {
    TJ_Q_PACK_DEVICE,     /* pack kernel, typed device memory -> device memory */
    TJ_Q_PACK_MAPPED,     /* pack kernel, typed device memory -> mapped pinned host memory */
    TJ_Q_UNPACK_DEVICE,   /* unpack kernel, device memory -> typed device memory */
    TJ_Q_UNPACK_MAPPED,   /* unpack kernel, mapped pinned host memory -> typed device memory */
    TJ_Q_COPY_D2H,        /* contiguous copy, device -> pinned host */
    TJ_Q_COPY_H2D,        /* contiguous copy, pinned host -> device */
    TJ_Q_PINGPONG_HOST,   /* MPI round trip of pinned host buffers */
    TJ_Q_PINGPONG_DEVICE, /* MPI round trip of device buffers (a CUDA-aware MPI only) */
    TJ_Q_COUNT
} tj_quantity_t;

/* Where the ping-pong peer was: another process on this node, or on another node. */
typedef enum { TJ_PEER_NODE = 0, TJ_PEER_NET = 1 } tj_peer_t;

/* One measured curve: microseconds by bytes, bytes strictly increasing. */
typedef struct {
    tj_quantity_t quantity;
    int64_t param; /* run length in bytes (kernels), tj_peer_t (ping-pong), 0 (copies) */
    int n;
    int64_t bytes[TJ_SYSTABLE_MAX_ROWS];
    double us[TJ_SYSTABLE_MAX_ROWS];
} tj_curve_t;

typedef struct {
    char typejit[32]; /* version of the typejit that measured */
    char device[128]; /* the device's name, as the driver reports it */
    int sm;           /* compute capability, 90 for 9.0 */
    int driver;       /* cuDriverGetVersion, 12040 for 12.4 */
    char nvrtc[16];   /* "MAJOR.MINOR" */
    char date[32];    /* UTC, ISO 8601 */
    bool cuda_aware;  /* whether the MPI took device buffers when measured */
    double launch_us; /* launch + synchronise of the smallest kernel */
    int ncurves;
    tj_curve_t curves[TJ_SYSTABLE_MAX];
} tj_systable_t;

/* "pack_device", ...; NULL for an unknown quantity. */
const char *tj_systable_quantity_name(tj_quantity_t q);

/* Parse a table from @p path. TJ_ERR_NOT_FOUND when there is no such file (nothing logged);
 * TJ_ERR_INVALID when it does not validate, with the reason ("line 7: ...") in @p why. */
tj_status_t tj_systable_load(const char *path, tj_systable_t *table, char *why, size_t why_len);

/* Parse a table from text (@p len bytes, no NUL needed). As tj_systable_load. */
tj_status_t tj_systable_parse(const char *text, size_t len, tj_systable_t *table, char *why,
                              size_t why_len);

/* Check a table built in memory against the rules the parser enforces. */
tj_status_t tj_systable_check(const tj_systable_t *table, char *why, size_t why_len);

/* Write @p table to @p path (temporary file in the same directory, then rename; the directory
 * is created when missing). */
tj_status_t tj_systable_write(const tj_systable_t *table, const char *path);

/* The curve of (quantity, param), or NULL. */
const tj_curve_t *tj_systable_find(const tj_systable_t *table, tj_quantity_t q, int64_t param);

/* Add an empty curve of (quantity, param); NULL when the table is full or it exists. */
tj_curve_t *tj_systable_add(tj_systable_t *table, tj_quantity_t q, int64_t param);

/* Microseconds for @p bytes on @p curve: piecewise linear in log(bytes) between rows, the first
 * row's time below the first row, proportional to bytes above the last row. */
double tj_curve_eval(const tj_curve_t *curve, int64_t bytes);

/* Microseconds of a kernel quantity for @p bytes packed in runs of @p run bytes: each measured
 * run's curve at @p bytes, then linear in log(run) between the two nearest runs (clamped to the
 * smallest and largest measured run). -1 when the table has no curve of @p q. */
double tj_systable_kernel(const tj_systable_t *table, tj_quantity_t q, int64_t run, int64_t bytes);

/* The file name of the table of a device: "sm_90-NVIDIA_H100_80GB_HBM3-12040.txt" (characters
 * other than letters, digits, '.', '-' and '_' become '_'). Returns the length, as snprintf. */
int tj_systable_file_name(const char *device, int sm, int driver, char *buf, size_t len);

#endif /* TJ_MOVE_SYSTABLE_H */

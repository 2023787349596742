/* SPDX-License-Identifier: BSD-3-Clause */
/* The NVRTC shim's result cache (nvrtc_cache.h).
 *
 * File <dir>/<hash of the key, 16 hex digits>.nvrtc, integers little-endian as on the host:
 *
 *   char     magic[16]    FC_NVRTC_MAGIC, no NUL
 *   uint64_t key_len      the key, to tell a collision from a hit
 *   char     key[key_len]
 *   then for the PTX, the CUBIN and the log, in that order:
 *   int32_t  rc           the getter's status
 *   uint64_t size         bytes that follow (0 unless rc is NVRTC_SUCCESS)
 *   char     data[size]
 *
 * and nothing after the last. */
#include "nvrtc_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"

#define FC_NVRTC_MAGIC     "FAKECUDA-NVRTC-1"
#define FC_NVRTC_MAGIC_LEN 16

char *fc_nvrtc_key(int major, int minor, const char *name, int num_options,
                   const char *const *options, const char *source, size_t source_len,
                   size_t *key_len)
{
    char head[64];
    size_t n = (size_t)snprintf(head, sizeof head, "nvrtc %d.%d", major, minor) + 1;
    size_t len = n + strlen(name != NULL ? name : "") + 1 + source_len;
    char *key, *at;

    for (int i = 0; i < num_options; i++)
        len += strlen(options[i]) + 1;
    if ((key = malloc(len)) == NULL)
        return NULL;
    at = key;
    memcpy(at, head, n);
    at += n;
    at = stpcpy(at, name != NULL ? name : "") + 1;
    for (int i = 0; i < num_options; i++)
        at = stpcpy(at, options[i]) + 1;
    memcpy(at, source, source_len);
    *key_len = len;
    return key;
}

static void path_of(char *path, size_t size, const char *dir, const char *key, size_t key_len)
{
    snprintf(path, size, "%s/%016llx.nvrtc", dir,
             (unsigned long long)fc_fnv1a(FC_FNV1A_START, key, key_len));
}

void fc_nvrtc_result_free(fc_nvrtc_result_t *result)
{
    free(result->ptx.data);
    free(result->cubin.data);
    free(result->log.data);
    memset(result, 0, sizeof *result);
}

/* A cursor over a whole file read into memory. */
typedef struct {
    const char *at, *end;
} reader_t;

static bool take(reader_t *r, void *out, size_t n)
{
    if ((size_t)(r->end - r->at) < n)
        return false;
    memcpy(out, r->at, n);
    r->at += n;
    return true;
}

static bool take_output(reader_t *r, fc_nvrtc_output_t *out)
{
    int32_t rc;
    uint64_t size;

    if (!take(r, &rc, sizeof rc) || !take(r, &size, sizeof size) ||
        size > (uint64_t)(r->end - r->at) || (rc != NVRTC_SUCCESS && size != 0))
        return false;
    out->rc = (nvrtcResult)rc;
    out->size = (size_t)size;
    if (size > 0) {
        if ((out->data = malloc(size)) == NULL)
            return false;
        take(r, out->data, size);
    }
    return true;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n)) != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf != NULL)
        *len = (size_t)n;
    fclose(f);
    return buf;
}

bool fc_nvrtc_cache_load(const char *dir, const char *key, size_t key_len, fc_nvrtc_result_t *out)
{
    char path[4096], magic[FC_NVRTC_MAGIC_LEN];
    size_t len = 0;
    uint64_t stored_len;
    char *file;
    reader_t r;
    bool ok;

    memset(out, 0, sizeof *out);
    path_of(path, sizeof path, dir, key, key_len);
    if ((file = read_file(path, &len)) == NULL)
        return false;
    r.at = file;
    r.end = file + len;
    ok = take(&r, magic, sizeof magic) && memcmp(magic, FC_NVRTC_MAGIC, sizeof magic) == 0 &&
         take(&r, &stored_len, sizeof stored_len) && stored_len == key_len &&
         (size_t)(r.end - r.at) >= key_len && memcmp(r.at, key, key_len) == 0;
    if (ok) {
        r.at += key_len;
        ok = take_output(&r, &out->ptx) && take_output(&r, &out->cubin) &&
             take_output(&r, &out->log) && r.at == r.end;
    }
    free(file);
    if (!ok)
        fc_nvrtc_result_free(out);
    return ok;
}

static bool put(FILE *f, const void *data, size_t n)
{
    return n == 0 || fwrite(data, 1, n, f) == n;
}

static bool put_output(FILE *f, const fc_nvrtc_output_t *out)
{
    int32_t rc = (int32_t)out->rc;
    uint64_t size = out->rc == NVRTC_SUCCESS ? out->size : 0;
    return put(f, &rc, sizeof rc) && put(f, &size, sizeof size) && put(f, out->data, size);
}

void fc_nvrtc_cache_store(const char *dir, const char *key, size_t key_len,
                          const fc_nvrtc_result_t *result)
{
    char path[4096], tmp[4200];
    uint64_t stored_len = key_len;
    FILE *f;
    bool ok;

    if (fc_mkdirs(dir) != 0)
        return;
    path_of(path, sizeof path, dir, key, key_len);
    snprintf(tmp, sizeof tmp, "%s.%ld.%lu.tmp", path, (long)getpid(),
             (unsigned long)pthread_self());
    if ((f = fopen(tmp, "wb")) == NULL)
        return;
    ok = put(f, FC_NVRTC_MAGIC, FC_NVRTC_MAGIC_LEN) && put(f, &stored_len, sizeof stored_len) &&
         put(f, key, key_len) && put_output(f, &result->ptx) && put_output(f, &result->cubin) &&
         put_output(f, &result->log);
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0)
        unlink(tmp);
}

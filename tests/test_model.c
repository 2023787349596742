/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the method model on synthetic system tables: oneshot wins small messages,
 * device (CUDA-aware MPI) or staged large ones, device never without CUDA-awareness,
 * TYPEJIT_METHOD forcing, the defaults without a table, malformed tables ignored with one
 * warning, the format's round trip and interpolation, and mutated tables that must not crash
 * the parser. `test_model --parse FILE` validates one table file (used after `typejit measure`).
 * No device: tables are named by TYPEJIT_SYSTEM_TABLE. */
#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tempdir.h"
#include "move/model.h"
#include "move/systable.h"
#include "util/config.h"

static char dir[128];

/* Apply the environment, forgetting the model's table and choices. */
static void settings(const char *method, const char *aware, const char *table)
{
    tj_config_t cfg;

    if (method != NULL)
        setenv("TYPEJIT_METHOD", method, 1);
    else
        unsetenv("TYPEJIT_METHOD");
    setenv("TYPEJIT_CUDA_AWARE", aware, 1);
    if (table != NULL)
        setenv("TYPEJIT_SYSTEM_TABLE", table, 1);
    else
        unsetenv("TYPEJIT_SYSTEM_TABLE");
    tj_config_parse(&cfg);
    tj_config_set(&cfg);
    tj_model_finalize();
}

static char *path_of(const char *name)
{
    static char buf[8][256];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* A plausible machine, in microseconds for B bytes: kernels into device memory at 100 GB/s
 * (runs of 512 B) down to 20 GB/s (runs of 8 B), into mapped memory at 5 GB/s, copies at
 * 25 GB/s after 10 us, host ping-pong 2 us + 10 GB/s, device ping-pong 20 us + 20 GB/s per round
 * trip. */
static void synthetic(tj_systable_t *t, bool with_pingpong, bool with_device_pingpong)
{
    static const int64_t runs[3] = {8, 64, 512};
    static const double dev_bw[3] = {20000, 50000, 100000}; /* bytes per us */

    memset(t, 0, sizeof(*t));
    snprintf(t->typejit, sizeof(t->typejit), "0.1.0");
    snprintf(t->device, sizeof(t->device), "Synthetic GPU 80GB");
    t->sm = 90;
    t->driver = 12040;
    snprintf(t->nvrtc, sizeof(t->nvrtc), "12.4");
    snprintf(t->date, sizeof(t->date), "2025-01-01T00:00:00Z");
    t->launch_us = 5;
    for (int r = 0; r < 3; r++) {
        for (int q = TJ_Q_PACK_DEVICE; q <= TJ_Q_UNPACK_MAPPED; q++) {
            tj_curve_t *c = tj_systable_add(t, (tj_quantity_t)q, runs[r]);
            bool mapped = q == TJ_Q_PACK_MAPPED || q == TJ_Q_UNPACK_MAPPED;
            REQUIRE(c != NULL);
            for (int64_t b = 64; b <= (16 << 20); b *= 4) {
                if (b < runs[r])
                    continue;
                c->bytes[c->n] = b;
                c->us[c->n++] = 5 + (double)b / (mapped ? 5000 : dev_bw[r]);
            }
        }
    }
    for (int q = TJ_Q_COPY_D2H; q <= TJ_Q_PINGPONG_DEVICE; q++) {
        tj_curve_t *c;
        if ((q == TJ_Q_PINGPONG_HOST && !with_pingpong) ||
            (q == TJ_Q_PINGPONG_DEVICE && !with_device_pingpong))
            continue;
        c = tj_systable_add(t, (tj_quantity_t)q, q >= TJ_Q_PINGPONG_HOST ? TJ_PEER_NODE : 0);
        REQUIRE(c != NULL);
        for (int64_t b = 64; b <= (16 << 20); b *= 4) {
            c->bytes[c->n] = b;
            c->us[c->n++] = q == TJ_Q_PINGPONG_HOST     ? 2 + (double)b / 10000
                            : q == TJ_Q_PINGPONG_DEVICE ? 20 + (double)b / 20000
                                                        : 10 + (double)b / 25000;
        }
    }
    REQUIRE(tj_systable_check(t, NULL, 0) == TJ_OK);
}

static tj_block_t vec(int64_t bytes, int64_t run)
{
    tj_block_t b;
    int64_t rows = bytes / run, counts[2] = {run, rows}, strides[2] = {1, 2 * run};
    REQUIRE(tj_block_make(0, 2 * run * rows, rows > 1 ? 2 : 1, counts, strides, &b) == TJ_OK);
    return b;
}

static tj_method_t send_of(int64_t bytes, int64_t run)
{
    tj_block_t b = vec(bytes, run);
    return tj_model_choose(&b, 1, bytes, true);
}

static tj_method_t recv_of(int64_t bytes, int64_t run)
{
    tj_block_t b = vec(bytes, run);
    return tj_model_choose_recv(&b, 1, bytes, true);
}

static void test_names(void)
{
    char buf[128];

    CHECK(strcmp(tj_method_name(TJ_METHOD_AUTO), "auto") == 0);
    CHECK(strcmp(tj_method_name(TJ_METHOD_DEVICE), "device") == 0);
    CHECK(strcmp(tj_method_name(TJ_METHOD_ONESHOT), "oneshot") == 0);
    CHECK(strcmp(tj_method_name(TJ_METHOD_STAGED), "staged") == 0);
    tj_systable_file_name("NVIDIA H100 80GB HBM3", 90, 12040, buf, sizeof(buf));
    CHECK(strcmp(buf, "sm_90-NVIDIA_H100_80GB_HBM3-12040.txt") == 0);
    tj_systable_file_name("../../etc/passwd", 80, 13000, buf, sizeof(buf));
    CHECK(strchr(buf, '/') == NULL);
    tj_systable_file_name("..", 80, 13000, buf, sizeof(buf));
    CHECK(strcmp(buf, "sm_80-device-13000.txt") == 0);
}

/* Without a table: oneshot below 64 KiB then device (CUDA-aware), oneshot below 256 KiB then
 * staged (not). */
static void test_defaults(void)
{
    double us[4];
    tj_block_t b = vec(4096, 64);

    settings(NULL, "yes", path_of("missing.txt"));
    CHECK(!tj_model_predict(&b, 1, 4096, true, false, us));
    CHECK_EQ_INT(send_of(1024, 8), TJ_METHOD_ONESHOT);
    CHECK_EQ_INT(send_of(16384, 64), TJ_METHOD_ONESHOT);
    CHECK_EQ_INT(send_of(65536, 64), TJ_METHOD_DEVICE);
    CHECK_EQ_INT(recv_of(1 << 20, 512), TJ_METHOD_DEVICE);
    CHECK_EQ_INT(tj_model_choose(NULL, 1, 65535, false), TJ_METHOD_ONESHOT);
    CHECK(tj_model_cuda_aware());
    CHECK(!tj_model_stage_contiguous());

    settings(NULL, "no", path_of("missing.txt"));
    CHECK(!tj_model_cuda_aware());
    CHECK(tj_model_stage_contiguous());
    CHECK_EQ_INT(send_of(65536, 64), TJ_METHOD_ONESHOT);
    CHECK_EQ_INT(send_of(262144 / 2, 512), TJ_METHOD_ONESHOT);
    CHECK_EQ_INT(send_of(262144, 512), TJ_METHOD_STAGED);
    CHECK_EQ_INT(recv_of(16 << 20, 8), TJ_METHOD_STAGED);
    CHECK_EQ_INT(tj_model_choose(NULL, 1, 1 << 30, true), TJ_METHOD_STAGED);

    /* Debian's Open MPI exports MPIX_Query_cuda_support and answers 0. */
    settings(NULL, "auto", path_of("missing.txt"));
    CHECK(!tj_model_cuda_aware());
}

static void test_table_choices(void)
{
    tj_systable_t *t = malloc(sizeof(*t));
    const char *path = path_of("synthetic.txt");
    double us[4];

    REQUIRE(t != NULL);
    synthetic(t, true, true);
    REQUIRE(tj_systable_write(t, path) == TJ_OK);

    /* CUDA-aware: oneshot small, device large, in both directions. */
    settings(NULL, "yes", path);
    CHECK_EQ_INT(send_of(64, 8), TJ_METHOD_ONESHOT);
    CHECK_EQ_INT(send_of(1024, 64), TJ_METHOD_ONESHOT);
    CHECK_EQ_INT(send_of(16 << 20, 8), TJ_METHOD_DEVICE);
    CHECK_EQ_INT(send_of(4 << 20, 512), TJ_METHOD_DEVICE);
    CHECK_EQ_INT(recv_of(1024, 8), TJ_METHOD_ONESHOT);
    CHECK_EQ_INT(recv_of(16 << 20, 512), TJ_METHOD_DEVICE);
    /* Beyond the largest row: extrapolated, still device. */
    CHECK_EQ_INT(send_of((int64_t)1 << 30, 512), TJ_METHOD_DEVICE);
    {
        tj_block_t b = vec(1 << 20, 64);
        CHECK(tj_model_predict(&b, 1, 1 << 20, true, false, us));
        CHECK(us[TJ_METHOD_DEVICE] < us[TJ_METHOD_STAGED]);
        CHECK(us[TJ_METHOD_DEVICE] < us[TJ_METHOD_ONESHOT]);
        /* Remembered: the same answer again, from the memo. */
        CHECK_EQ_INT(tj_model_choose(&b, 1, 1 << 20, true), TJ_METHOD_DEVICE);
        CHECK_EQ_INT(tj_model_choose(&b, 1, 1 << 20, true), TJ_METHOD_DEVICE);
    }

    /* Not CUDA-aware: never device, at any size, run, peer or direction; staged wins large. */
    settings(NULL, "no", path);
    CHECK_EQ_INT(send_of(1024, 8), TJ_METHOD_ONESHOT);
    CHECK_EQ_INT(send_of(16 << 20, 8), TJ_METHOD_STAGED);
    CHECK_EQ_INT(recv_of(16 << 20, 512), TJ_METHOD_STAGED);
    for (int64_t bytes = 1; bytes <= ((int64_t)1 << 34); bytes *= 2)
        for (int64_t run = 1; run <= 4096 && run <= bytes; run *= 4)
            for (int peer = 0; peer < 2; peer++) {
                tj_block_t b = vec(bytes / run * run, run);
                CHECK(tj_model_choose(&b, 1, b.size, peer) != TJ_METHOD_DEVICE);
                CHECK(tj_model_choose_recv(&b, 3, b.size * 3, peer) != TJ_METHOD_DEVICE);
            }
    CHECK(tj_model_choose(NULL, 1, (int64_t)1 << 40, false) != TJ_METHOD_DEVICE);

    /* A table measured by one rank (no ping-pong): the device side alone decides. */
    synthetic(t, false, false);
    REQUIRE(tj_systable_write(t, path) == TJ_OK);
    settings(NULL, "no", path);
    CHECK_EQ_INT(send_of(1024, 8), TJ_METHOD_ONESHOT);
    CHECK_EQ_INT(send_of(16 << 20, 512), TJ_METHOD_STAGED);
    /* Aware, but no device ping-pong rows: device is priced as staged and never wins. */
    synthetic(t, true, false);
    REQUIRE(tj_systable_write(t, path) == TJ_OK);
    settings(NULL, "yes", path);
    CHECK_EQ_INT(send_of(16 << 20, 512), TJ_METHOD_STAGED);
    CHECK_EQ_INT(recv_of(64, 8), TJ_METHOD_ONESHOT);
    /* ... and the table with them back, for the tests that follow. */
    synthetic(t, true, true);
    REQUIRE(tj_systable_write(t, path) == TJ_OK);
    settings(NULL, "yes", path);
    CHECK_EQ_INT(send_of(16 << 20, 512), TJ_METHOD_DEVICE);
    /* A peer on another node: the node rows stand in. */
    {
        tj_block_t b = vec(64, 8);
        CHECK_EQ_INT(tj_model_choose(&b, 1, 64, false), TJ_METHOD_ONESHOT);
    }
    free(t);
}

static void test_forcing(void)
{
    const char *path = path_of("synthetic.txt"); /* as test_table_choices left it */

    settings("staged", "yes", path);
    CHECK_EQ_INT(send_of(64, 8), TJ_METHOD_STAGED);
    CHECK_EQ_INT(recv_of(16 << 20, 512), TJ_METHOD_STAGED);
    settings("oneshot", "no", path);
    CHECK_EQ_INT(send_of(16 << 20, 512), TJ_METHOD_ONESHOT);
    settings("device", "yes", path);
    CHECK_EQ_INT(send_of(64, 8), TJ_METHOD_DEVICE);
    CHECK_EQ_INT(tj_model_choose(NULL, 1, 64, false), TJ_METHOD_DEVICE);
    /* device without a CUDA-aware MPI: the model's choice among the others. */
    settings("device", "no", path);
    CHECK_EQ_INT(send_of(64, 8), TJ_METHOD_ONESHOT);
    CHECK_EQ_INT(send_of(16 << 20, 512), TJ_METHOD_STAGED);
    settings("device", "no", path_of("missing.txt"));
    CHECK_EQ_INT(send_of(16 << 20, 512), TJ_METHOD_STAGED);
    /* A malformed value: a deferred warning, and auto. */
    settings("fastest", "yes", path);
    CHECK_EQ_INT(tj_config()->method, TJ_FORCE_AUTO);
    CHECK_EQ_INT(send_of(64, 8), TJ_METHOD_ONESHOT);
}

static const char *valid_text = "typejit-system-table 1\n"
                                "# a comment\n"
                                "typejit 0.1.0\n"
                                "device NVIDIA H100 80GB HBM3\n"
                                "sm 90\n"
                                "driver 12040\n"
                                "nvrtc 12.4\n"
                                "date 2025-01-01T00:00:00Z\n"
                                "cuda_aware no\n"
                                "launch_us 4.5\n"
                                "\n"
                                "table pack_device run=8\n"
                                "64 6.0\n"
                                "1024 7.0\n"
                                "table pack_mapped run=8\n"
                                "64 5.0\n"
                                "table unpack_device run=8\n"
                                "64 6.0\n"
                                "table unpack_mapped run=8\n"
                                "64 8.0\n"
                                "table copy_d2h\n"
                                "64 10.0\n"
                                "table copy_h2d\n"
                                "64 10.0\n"
                                "table pingpong_host peer=net\n"
                                "64 3.5\n";

/* Replace the first occurrence of @p from in the valid text by @p to. */
static char *mutate(const char *from, const char *to)
{
    const char *at = strstr(valid_text, from);
    char *out;
    REQUIRE(at != NULL);
    out = malloc(strlen(valid_text) + strlen(to) + 1);
    REQUIRE(out != NULL);
    memcpy(out, valid_text, (size_t)(at - valid_text));
    strcpy(out + (at - valid_text), to);
    strcat(out, at + strlen(from));
    return out;
}

static void test_format(void)
{
    static const char *const bad[][2] = {
        {"typejit-system-table 1\n", "typejit-system-table 2\n"},
        {"typejit-system-table 1\n", "typejit-system-tables 1\n"},
        {"typejit-system-table 1\n", "typejit-system-table 1 x\n"},
        {"typejit-system-table 1\n", ""},
        {"sm 90\n", ""},
        {"sm 90\n", "sm 9x\n"},
        {"sm 90\n", "sm 90\nsm 90\n"},
        {"driver 12040\n", "driver -1\n"},
        {"device NVIDIA H100 80GB HBM3\n", "device \n"},
        {"device NVIDIA", "device \x01NVIDIA"},
        {"launch_us 4.5\n", "launch_us nan\n"},
        {"launch_us 4.5\n", "launch_us inf\n"},
        {"launch_us 4.5\n", ""},
        {"cuda_aware no\n", "cuda_aware maybe\n"},
        {"cuda_aware no\n", "colour blue\n"},
        {"1024 7.0\n", "32 7.0\n"},
        {"1024 7.0\n", "1024 -7.0\n"},
        {"1024 7.0\n", "1024 7.0 8.0\n"},
        {"1024 7.0\n", "1024 0x10\n"},
        {"1024 7.0\n", "1024  7.0\n"},
        {"1024 7.0\n", "1024\t7.0\n"},
        {"1024 7.0\n", "1024 7.0\r\n"},
        {"1024 7.0\n", "1024 7.0 \n"},
        {"1024 7.0\n", "99999999999999999999 7.0\n"},
        {"1024 7.0\n", "1024 1e12\n"},
        {"table pack_device run=8\n", "table pack_device\n"},
        {"table pack_device run=8\n", "table pack_device run=0\n"},
        {"table pack_device run=8\n", "table pack_gadget run=8\n"},
        {"table pack_mapped run=8\n", "table pack_device run=8\n"},
        {"table copy_d2h\n", "table copy_d2h run=8\n"},
        {"table copy_h2d\n64 10.0\n", ""},
        {"table pingpong_host peer=net\n", "table pingpong_host peer=moon\n"},
        {"table pingpong_host peer=net\n", "table pingpong_host\n"},
        {"# a comment\n", "64 1.0\n"},
        {"table pingpong_host peer=net\n64 3.5\n", "table pingpong_host peer=net\nsm 80\n"},
        {"table copy_d2h\n64 10.0\n", "table copy_d2h\n"},
    };
    tj_systable_t *t = malloc(sizeof(*t)), *u = malloc(sizeof(*u));
    char why[256];

    REQUIRE(t != NULL && u != NULL);
    CHECK_EQ_INT(tj_systable_parse(valid_text, strlen(valid_text), t, why, sizeof(why)), TJ_OK);
    CHECK(strcmp(t->device, "NVIDIA H100 80GB HBM3") == 0);
    CHECK_EQ_INT(t->sm, 90);
    CHECK_EQ_INT(t->driver, 12040);
    CHECK_EQ_INT(t->ncurves, 7);
    CHECK(fabs(t->launch_us - 4.5) < 1e-9);
    CHECK(tj_systable_find(t, TJ_Q_PINGPONG_HOST, TJ_PEER_NET) != NULL);
    CHECK(tj_systable_find(t, TJ_Q_PINGPONG_HOST, TJ_PEER_NODE) == NULL);

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *text = mutate(bad[i][0], bad[i][1]);
        tj_status_t st = tj_systable_parse(text, strlen(text), u, why, sizeof(why));
        if (st != TJ_ERR_INVALID)
            fprintf(stderr, "bad table %zu (%s -> %s) was accepted\n", i, bad[i][0], bad[i][1]);
        CHECK_EQ_INT(st, TJ_ERR_INVALID);
        free(text);
    }
    /* A long line and a NUL inside. */
    {
        char *text = malloc(strlen(valid_text) + 2000);
        REQUIRE(text != NULL);
        strcpy(text, valid_text);
        strcat(text, "# ");
        memset(text + strlen(text), 'x', 1000);
        text[strlen(valid_text) + 1002] = '\0';
        CHECK_EQ_INT(tj_systable_parse(text, strlen(text), u, NULL, 0), TJ_ERR_INVALID);
        strcpy(text, valid_text);
        text[30] = '\0';
        CHECK_EQ_INT(tj_systable_parse(text, strlen(valid_text), u, NULL, 0), TJ_ERR_INVALID);
        free(text);
    }

    /* Round trip through the writer. */
    synthetic(t, true, true);
    REQUIRE(tj_systable_write(t, path_of("sub/dir/round.txt")) == TJ_OK);
    CHECK_EQ_INT(tj_systable_load(path_of("sub/dir/round.txt"), u, why, sizeof(why)), TJ_OK);
    CHECK_EQ_INT(u->ncurves, t->ncurves);
    CHECK(strcmp(u->device, t->device) == 0);
    for (int i = 0; i < t->ncurves && i < u->ncurves; i++) {
        CHECK_EQ_INT(u->curves[i].quantity, t->curves[i].quantity);
        CHECK_EQ_INT(u->curves[i].param, t->curves[i].param);
        CHECK_EQ_INT(u->curves[i].n, t->curves[i].n);
        for (int r = 0; r < t->curves[i].n; r++)
            CHECK(fabs(u->curves[i].us[r] - t->curves[i].us[r]) < 1e-3);
    }
    CHECK_EQ_INT(tj_systable_load(path_of("nothing.txt"), u, why, sizeof(why)), TJ_ERR_NOT_FOUND);
    free(t);
    free(u);
}

static void test_interpolation(void)
{
    tj_curve_t c = {
        .quantity = TJ_Q_COPY_D2H, .n = 3, .bytes = {64, 1024, 16384}, .us = {10, 20, 100}};
    tj_systable_t *t = calloc(1, sizeof(*t));

    CHECK(fabs(tj_curve_eval(&c, 64) - 10) < 1e-9);
    CHECK(fabs(tj_curve_eval(&c, 1) - 10) < 1e-9);   /* below: the first row */
    CHECK(fabs(tj_curve_eval(&c, 256) - 15) < 1e-9); /* halfway in log size */
    CHECK(fabs(tj_curve_eval(&c, 1024) - 20) < 1e-9);
    CHECK(fabs(tj_curve_eval(&c, 4096) - 60) < 1e-9);
    CHECK(fabs(tj_curve_eval(&c, 32768) - 200) < 1e-9); /* above: proportional */

    REQUIRE(t != NULL);
    tj_curve_t *a = tj_systable_add(t, TJ_Q_PACK_DEVICE, 8),
               *b = tj_systable_add(t, TJ_Q_PACK_DEVICE, 512);
    REQUIRE(a != NULL && b != NULL);
    CHECK(tj_systable_add(t, TJ_Q_PACK_DEVICE, 8) == NULL); /* no duplicates */
    a->n = b->n = 1;
    a->bytes[0] = b->bytes[0] = 1024;
    a->us[0] = 30;
    b->us[0] = 10;
    CHECK(fabs(tj_systable_kernel(t, TJ_Q_PACK_DEVICE, 64, 1024) - 20) < 1e-9); /* log-run midway */
    CHECK(fabs(tj_systable_kernel(t, TJ_Q_PACK_DEVICE, 1, 1024) - 30) < 1e-9);
    CHECK(fabs(tj_systable_kernel(t, TJ_Q_PACK_DEVICE, 1 << 20, 1024) - 10) < 1e-9);
    CHECK(tj_systable_kernel(t, TJ_Q_PACK_MAPPED, 64, 1024) < 0);
    free(t);
}

/* A malformed table is ignored with one warning, and the defaults decide. */
static void test_malformed_file(void)
{
    const char *path = path_of("broken.txt");
    const char *log = path_of("stderr.txt");
    char *text = mutate("1024 7.0\n", "1024 7.0\n512 3.0\n");
    char line[512];
    int saved, fd, warnings = 0;
    FILE *f;

    write_text(path, text);
    free(text);
    setenv("TYPEJIT_LOG", "warn", 1);
    settings(NULL, "no", path);
    fflush(stderr);
    saved = dup(2);
    fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(send_of(1024, 8), TJ_METHOD_ONESHOT);
        CHECK_EQ_INT(send_of(1 << 20, 64), TJ_METHOD_STAGED);
        CHECK_EQ_INT(recv_of((1 << 20) + i, 8), TJ_METHOD_STAGED);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    f = fopen(log, "r");
    REQUIRE(f != NULL);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strstr(line, "ignoring the system table") != NULL) {
            warnings++;
            CHECK(strstr(line, "line ") != NULL); /* says where */
        }
    }
    fclose(f);
    CHECK_EQ_INT(warnings, 1);
    unsetenv("TYPEJIT_LOG");
}

/* Random byte edits of a valid table: accepted or refused, never a crash (run under ASan in
 * the sanitizer build). */
static void test_mutations(void)
{
    tj_systable_t *t = malloc(sizeof(*t));
    size_t len = strlen(valid_text);
    char *text = malloc(len + 1);
    unsigned seed = 12345;
    static const char alphabet[] = "0123456789 .-+e\n#abtx=\x7f";

    REQUIRE(t != NULL && text != NULL);
    for (int i = 0; i < 5000; i++) {
        memcpy(text, valid_text, len + 1);
        for (int k = 0; k < 1 + i % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            text[at] = alphabet[(seed >> 8) % (sizeof(alphabet) - 1)];
        }
        tj_status_t st = tj_systable_parse(text, len, t, NULL, 0);
        CHECK(st == TJ_OK || st == TJ_ERR_INVALID);
        if (st == TJ_OK)
            CHECK(tj_systable_check(t, NULL, 0) == TJ_OK);
    }
    free(text);
    free(t);
}

static int parse_file(const char *path)
{
    tj_systable_t *t = malloc(sizeof(*t));
    char why[256] = "";
    tj_status_t st;

    REQUIRE(t != NULL);
    st = tj_systable_load(path, t, why, sizeof(why));
    if (st != TJ_OK) {
        fprintf(stderr, "%s: %s\n", path, why[0] ? why : tj_status_string(st));
        free(t);
        return 1;
    }
    printf("%s: valid system table of %s (sm %d, driver %d), %d tables\n", path, t->device, t->sm,
           t->driver, t->ncurves);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--parse") == 0)
        return parse_file(argv[2]);
    MPI_Init(&argc, &argv);
    tempdir_make("model", dir, sizeof(dir));
    test_names();
    test_interpolation();
    test_format();
    test_mutations();
    test_defaults();
    test_table_choices();
    test_forcing();
    test_malformed_file();
    tj_model_finalize();
    MPI_Finalize();
    if (!tempdir_remove(dir))
        fprintf(stderr, "could not remove %s\n", dir);
    CHECK_DONE();
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* typejit's out-of-memory paths on device buffers, through tests/failmalloc_shim.c preloaded after
 * the library: each call below is made again and again with the 1st, 2nd, 3rd, ... allocation of
 * typejit's own code failing, until one runs without reaching the armed failure. Every run must
 * either succeed completely (the request works, the bytes arrive) or fail with an MPI error that
 * leaves nothing started and nothing leaked; a non-blocking call must never block (an alarm
 * ends a run that hangs). The calls: MPI_Send_init and MPI_Recv_init (their requests must be
 * usable after MPI_SUCCESS), MPI_Issend to this rank with no receive posted yet (it cannot
 * complete before one is: blocking in it would hang), MPI_Irecv, and MPI_Waitall over 40 device
 * receives (more than fit typejit's stack scratch), which must leak nothing when refused and
 * still deliver every byte afterwards. Exits 77 without a CUDA device.
 *
 *   test_oom [CALL]      (CALL: one of the calls above alone, e.g. MPI_Waitall) */
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cudrv.h"

#define N_WAITALL 40
#define MAX_TRIES 200

static void (*arm)(long);
static bool (*disarm)(void);
static long (*live)(void);
static MPI_Datatype vec; /* 8 ints, every other one: 64 bytes of footprint, 32 packed */
static const char *now = "";

static void on_alarm(int sig)
{
    static const char msg[] = "test_oom: a call blocked for 20 s: ";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0 || write(2, now, strlen(now)) < 0 ||
        write(2, "\n", 1) < 0)
        _exit(2);
    _exit(2);
}

/* A device buffer of the vector's footprint holding @p salt's pattern (0: zeros). */
static CUdeviceptr filled(int salt)
{
    CUdeviceptr d;
    unsigned char host[64];
    for (int i = 0; i < 64; i++)
        host[i] = salt ? (unsigned char)(i * 5 + salt) : 0;
    CUDRV(cuMemAlloc(&d, 64));
    CUDRV(cuMemcpyHtoD(d, host, 64));
    return d;
}

/* Whether @p d holds @p salt's pattern where the vector has bytes, zeros elsewhere. */
static bool holds(CUdeviceptr d, int salt)
{
    unsigned char host[64];
    CUDRV(cuMemcpyDtoH(host, d, 64));
    for (int i = 0; i < 64; i++)
        if (host[i] != ((i / 4) % 2 == 0 ? (unsigned char)(i * 5 + salt) : 0))
            return false;
    return true;
}

static void *ptr(CUdeviceptr d)
{
    return (void *)(uintptr_t)d;
}

static bool no_mem(int rc)
{
    int cls;
    MPI_Error_class(rc, &cls);
    return cls == MPI_ERR_NO_MEM;
}

/* One call made with an allocation of typejit's failing: started on a send buffer @p s holding
 * the pattern of `salt` and a receive buffer @p r of zeros; after MPI_SUCCESS, `complete` makes
 * the calls that deliver the message, and @p r must hold the pattern. */
typedef struct {
    const char *name; /* the call, as the command line and the report name it */
    const char *what; /* the call, as the alarm names it */
    int salt;
    int (*start)(CUdeviceptr s, CUdeviceptr r, MPI_Request *req);
    void (*complete)(CUdeviceptr s, CUdeviceptr r, MPI_Request *req);
} armed_t;

/* Persistent sends and receives: after MPI_SUCCESS the request works. */
static int send_init(CUdeviceptr s, CUdeviceptr r, MPI_Request *req)
{
    (void)r;
    return MPI_Send_init(ptr(s), 1, vec, 0, 1, MPI_COMM_SELF, req);
}

static int recv_init(CUdeviceptr s, CUdeviceptr r, MPI_Request *req)
{
    (void)s;
    return MPI_Recv_init(ptr(r), 1, vec, 0, 1, MPI_COMM_SELF, req);
}

/* After MPI_SUCCESS the persistent request starts, once, against the matching call. */
static void persistent_complete(CUdeviceptr s, CUdeviceptr r, MPI_Request *req, bool send)
{
    MPI_Request other;
    CHECK(*req != MPI_REQUEST_NULL);
    if (send) {
        CHECK(MPI_Irecv(ptr(r), 1, vec, 0, 1, MPI_COMM_SELF, &other) == MPI_SUCCESS);
        CHECK(MPI_Start(req) == MPI_SUCCESS);
    } else {
        CHECK(MPI_Start(req) == MPI_SUCCESS);
        CHECK(MPI_Isend(ptr(s), 1, vec, 0, 1, MPI_COMM_SELF, &other) == MPI_SUCCESS);
    }
    CHECK(MPI_Wait(req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Wait(&other, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (*req != MPI_REQUEST_NULL)
        CHECK(MPI_Request_free(req) == MPI_SUCCESS);
}

static void send_init_complete(CUdeviceptr s, CUdeviceptr r, MPI_Request *req)
{
    persistent_complete(s, r, req, true);
}

static void recv_init_complete(CUdeviceptr s, CUdeviceptr r, MPI_Request *req)
{
    persistent_complete(s, r, req, false);
}

/* A synchronous send to this rank, whose receive is posted only after the call returns. */
static int issend(CUdeviceptr s, CUdeviceptr r, MPI_Request *req)
{
    (void)r;
    return MPI_Issend(ptr(s), 1, vec, 0, 2, MPI_COMM_SELF, req);
}

static void issend_complete(CUdeviceptr s, CUdeviceptr r, MPI_Request *req)
{
    (void)s;
    CHECK(MPI_Recv(ptr(r), 1, vec, 0, 2, MPI_COMM_SELF, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Wait(req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
}

static int irecv(CUdeviceptr s, CUdeviceptr r, MPI_Request *req)
{
    (void)s;
    return MPI_Irecv(ptr(r), 1, vec, 0, 3, MPI_COMM_SELF, req);
}

static void irecv_complete(CUdeviceptr s, CUdeviceptr r, MPI_Request *req)
{
    (void)r;
    CHECK(MPI_Send(ptr(s), 1, vec, 0, 3, MPI_COMM_SELF) == MPI_SUCCESS);
    CHECK(MPI_Wait(req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
}

enum { A_SEND_INIT, A_RECV_INIT, A_ISSEND, A_IRECV, NARMED };
static const armed_t armed_calls[NARMED] = {
    [A_SEND_INIT] = {"MPI_Send_init", "MPI_Send_init", 7, send_init, send_init_complete},
    [A_RECV_INIT] = {"MPI_Recv_init", "MPI_Recv_init", 7, recv_init, recv_init_complete},
    [A_ISSEND] = {"MPI_Issend", "MPI_Issend (a non-blocking call became a blocking wait)", 9,
                  issend, issend_complete},
    [A_IRECV] = {"MPI_Irecv", "MPI_Irecv", 11, irecv, irecv_complete},
};

/* @p c with allocation @p k of typejit's failing (0: none): whether that allocation was reached. */
static int armed_call(const armed_t *c, long k)
{
    CUdeviceptr s = filled(c->salt), r = filled(0);
    MPI_Request req = MPI_REQUEST_NULL;
    bool fired;
    int rc;

    now = c->what;
    arm(k);
    rc = c->start(s, r, &req);
    fired = disarm();
    if (rc == MPI_SUCCESS) {
        c->complete(s, r, &req);
        CHECK(holds(r, c->salt));
    } else {
        CHECK(no_mem(rc));
    }
    CUDRV(cuMemFree(s));
    CUDRV(cuMemFree(r));
    return fired;
}

/* MPI_Waitall over N_WAITALL device receives whose messages have all arrived. */
static int waitall(const armed_t *c, long k)
{
    CUdeviceptr s = filled(13), r[N_WAITALL];
    MPI_Request req[N_WAITALL];
    MPI_Status st[N_WAITALL];
    bool fired;
    long leaked;
    int rc;

    (void)c;
    for (int i = 0; i < N_WAITALL; i++) {
        r[i] = filled(0);
        CHECK(MPI_Irecv(ptr(r[i]), 1, vec, 0, 100 + i, MPI_COMM_SELF, &req[i]) == MPI_SUCCESS);
        CHECK(MPI_Send(ptr(s), 1, vec, 0, 100 + i, MPI_COMM_SELF) == MPI_SUCCESS);
    }
    now = "MPI_Waitall";
    arm(k);
    rc = MPI_Waitall(N_WAITALL, req, st);
    leaked = live();
    fired = disarm();
    if (rc != MPI_SUCCESS) {
        CHECK(no_mem(rc));
        if (leaked != 0)
            fprintf(stderr,
                    "MPI_Waitall refused with allocation %ld failing: %ld allocation(s) "
                    "of typejit's leaked\n",
                    k, leaked);
        CHECK(leaked == 0);
        /* Refused: every request still active; now it completes. */
        CHECK(MPI_Waitall(N_WAITALL, req, st) == MPI_SUCCESS);
    }
    for (int i = 0; i < N_WAITALL; i++) {
        CHECK(holds(r[i], 13));
        CUDRV(cuMemFree(r[i]));
    }
    CUDRV(cuMemFree(s));
    return fired;
}

static const char *only; /* the one call to sweep, or NULL */

/* Calls @p fn with allocation 1, 2, ... failing until it runs without reaching the failure. */
static void sweep(const char *name, int (*fn)(const armed_t *, long), const armed_t *c)
{
    long k = 1;
    if (only != NULL && strcmp(only, name) != 0)
        return;
    while (k <= MAX_TRIES) {
        int fired;
        alarm(20);
        fired = fn(c, k);
        alarm(0);
        if (!fired)
            break;
        k++;
    }
    CHECK(k <= MAX_TRIES);
    printf("%s: %ld allocation(s) of typejit's, each failing in turn: exact or MPI_ERR_NO_MEM\n",
           name, k - 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    only = argc > 1 ? argv[1] : NULL;
    if (!cudrv_open()) {
        MPI_Finalize();
        return 77;
    }
    *(void **)&arm = dlsym(RTLD_DEFAULT, "failmalloc_arm");
    *(void **)&disarm = dlsym(RTLD_DEFAULT, "failmalloc_disarm");
    *(void **)&live = dlsym(RTLD_DEFAULT, "failmalloc_live");
    REQUIRE(arm && disarm && live); /* run with tests/failmalloc_shim.c preloaded */
    REQUIRE(dlsym(RTLD_DEFAULT, "tj_version") != NULL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    signal(SIGALRM, on_alarm);
    MPI_Type_vector(8, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    /* Once without failures: staging and kernels are in place, as in a running program. */
    arm(0);
    disarm();
    armed_call(&armed_calls[A_IRECV], 0);
    for (int i = 0; i < NARMED; i++)
        sweep(armed_calls[i].name, armed_call, &armed_calls[i]);
    sweep("MPI_Waitall", waitall, NULL);
    MPI_Type_free(&vec);
    MPI_Finalize();
    CHECK_DONE();
}

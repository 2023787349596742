/* SPDX-License-Identifier: BSD-3-Clause */
/* Persistent collectives (Open MPI's MPIX_*_init extension, MPI 4.0's MPI_*_init): the request
 * they return is started and completed many times on the buffers given at the init, which an MPI
 * that is not CUDA-aware would read and write from host code. typejit does not stage them (yet):
 * with a buffer in device memory and such an MPI, the init is refused with MPI_ERR_BUFFER and
 * one error line; a CUDA-aware MPI gets it as it is, and host buffers go to the system MPI after
 * the pointer queries of their sides (none on a machine without a device). The MPI 4.0 inits
 * have large-count forms (`_c`) where the MPI has them; every form shares one definition. */
#include "interpose/coll_args.h"
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "calls/coll.h"
#include "move/model.h"
#include "calls/reduce.h"
#include "util/mpierr.h"

#if defined(TJ_HAVE_MPIX_INIT) || defined(TJ_HAVE_MPI4)

static const char why[] = "a persistent collective on device memory with a system MPI that is not "
                          "CUDA-aware (it would read and write the buffers from host code at each "
                          "start; typejit does not stage persistent collectives)";

/* Whether the init of @p fn must be refused; errors go through the communicator's handler. */
static bool refuse_coll(const char *fn, tj_coll_call_t *c, int *rc)
{
    if (!tj_interpose_device_calls() || tj_model_cuda_aware())
        return false;
    c->lookup = tj_interpose_lookup;
    if (!tj_coll_on_device(c))
        return false;
    *rc = tj_interpose_refuse(fn, why);
    tj_mpi_raise(c->comm, *rc);
    return true;
}

static bool refuse_red(const char *fn, tj_red_call_t *c, int *rc)
{
    bool on;
    if (!tj_interpose_device_calls() || tj_model_cuda_aware())
        return false;
    c->info = tj_interpose_lookup(c->type);
    on = tj_reduce_on_device(c);
    tj_table_return(c->info);
    if (!on)
        return false;
    *rc = tj_interpose_refuse(fn, why);
    tj_mpi_raise(c->comm, *rc);
    return true;
}

/* Each init from one definition, for Open MPI's MPIX_ names (int counts) and MPI 4.0's MPI_ names
 * in their int and large-count forms: (prefix, suffix, large), then the function's name without
 * prefix, the family's kind and its arguments (interpose/coll_args.h). */
#if defined(TJ_HAVE_MPIX_INIT)
#define MPIX_FORMS(_m, ...) _m(MPIX, , false, __VA_ARGS__)
#else
#define MPIX_FORMS(_m, ...)
#endif
#if defined(TJ_HAVE_MPI4)
#define MPI4_FORMS(_m, ...)                                                                        \
    _m(MPI, , false, __VA_ARGS__) TJ_IF_LARGE(_m(MPI, _c, true, __VA_ARGS__))
#else
#define MPI4_FORMS(_m, ...)
#endif
#define FORMS(_m, ...) MPIX_FORMS(_m, __VA_ARGS__) MPI4_FORMS(_m, __VA_ARGS__)

/* An init: the refusal (@p _refuse, for a call @p _call_t) or the pass to the system MPI's own
 * init. */
#define INIT(_call_t, _refuse, _p, _s, _large, _name, _kind, _args)                                \
    int TJ_WRAPPER(_p##_##_name##_s)(TJ_PARAMS(_args, _s, PERSISTENT))                             \
    {                                                                                              \
        _call_t c = {.kind = _kind, .large = _large, TJ_FIELDS(_args)};                            \
        int rc;                                                                                    \
        if (_refuse(#_p "_" #_name #_s, &c, &rc))                                                  \
            return rc;                                                                             \
        return P##_p##_##_name##_s(TJ_NAMES(_args, PERSISTENT));                                   \
    }
#define COLL_INIT(...) INIT(tj_coll_call_t, refuse_coll, __VA_ARGS__)
#define RED_INIT(...)  INIT(tj_red_call_t, refuse_red, __VA_ARGS__)

#define COLL_INIT_FAMILY(_name, _iname, _lower, _upper, _kind, _args)                              \
    FORMS(COLL_INIT, _name##_init, _kind, _args)
#define RED_INIT_FAMILY(_name, _iname, _lower, _upper, _kind, _args)                               \
    FORMS(RED_INIT, _name##_init, _kind, _args)
TJ_COLL_FAMILIES(COLL_INIT_FAMILY)
TJ_COLL_W_FAMILIES(COLL_INIT_FAMILY)
TJ_RED_FAMILIES(RED_INIT_FAMILY)

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Managed memory's advice and prefetches (CUDA Driver API, Unified Addressing: cuMemAdvise,
 * cuMemPrefetchAsync, cuMemRangeGetAttribute(s)), in the 8.0 forms (a device ordinal or
 * CU_DEVICE_CPU) and the 12.2 forms (a CUmemLocation) that the 13.0 cuda.h maps the names to.
 * Managed memory is host memory here, touched by host and device alike; advice and prefetches
 * move nothing, and are remembered per page for cuMemRangeGetAttribute, which says what the
 * application asked for. */
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

#define HOST_BIT (1u << FC_MAX_DEVICES) /* accessed_by: the host */

/* What the application asked for one page. */
typedef struct {
    signed char pref_type, pref_id; /* preferred location: CUmemLocationType (0: none), id */
    signed char last_type, last_id; /* last prefetch location */
    unsigned short accessed_by;     /* bit d: device d, HOST_BIT: the host */
    unsigned char read_mostly;
} page_t;

struct fc_managed {
    size_t pages;
    page_t page[];
};

static bool valid_device(int dev)
{
    return dev >= 0 && dev < fc_config.ndevices;
}

/* A location of the 12.2 forms, HOST_NUMA_CURRENT as the one node there is (0); the 8.0 forms'
 * devices and CU_DEVICE_CPU map to DEVICE and HOST. Invalid devices are INVALID_DEVICE (cuda.h
 * lists it), other locations INVALID_VALUE. */
static CUresult normalize(CUmemLocation *loc)
{
    switch (loc->type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        return valid_device(loc->id) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
    case CU_MEM_LOCATION_TYPE_HOST:
        loc->id = 0;
        return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        return loc->id == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        loc->type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
        loc->id = 0;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUmemLocation from_device(CUdevice dev)
{
    CUmemLocation loc;
    loc.type = dev == CU_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = dev == CU_DEVICE_CPU ? 0 : dev; /* an invalid ordinal stays: INVALID_DEVICE */
    return loc;
}

/* The managed allocation holding all of [p, p + count) and its pages' range (cuda.h: "The start
 * address and end address of the memory range will be rounded down and rounded up respectively
 * to be aligned to CPU page size"). NULL for memory of other kinds, or none. Assumption: a range
 * of 0 bytes, or over two allocations, is an invalid value. */
static fc_alloc_t *range_of(CUdeviceptr p, size_t count, size_t *first, size_t *end)
{
    fc_alloc_t *a = fc_mem_find_range(p, count);
    if (count == 0 || a == NULL || a->kind != FC_MEM_MANAGED)
        return NULL;
    *first = (p - a->map_base) / FC_PAGE;
    *end = (p + count - a->map_base + FC_PAGE - 1) / FC_PAGE;
    return a;
}

/* Pageable memory a device may be told about: cuda.h, "The memory range could also refer to
 * system-allocated pageable memory provided it represents a valid, host-accessible region"; only
 * on systems where devices access pageable memory (FAKECUDA_PAGEABLE). */
static bool pageable_ok(CUdeviceptr p, size_t count)
{
    return fc_config.pageable && count > 0 && fc_mem_find(p) == NULL && !fc_mem_in_arena(p);
}

static struct fc_managed *state(fc_alloc_t *a)
{
    if (a->managed == NULL) {
        size_t pages = a->map_size / FC_PAGE;
        a->managed = calloc(1, sizeof *a->managed + pages * sizeof(page_t));
        if (a->managed != NULL)
            a->managed->pages = pages;
    }
    return a->managed;
}

/* ---- advice ---------------------------------------------------------------------------------- */

static CUresult advise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation loc)
{
    size_t first, end;
    fc_alloc_t *a = range_of(devPtr, count, &first, &end);
    struct fc_managed *m;
    CUresult rc;
    bool uses_location = advice == CU_MEM_ADVISE_SET_PREFERRED_LOCATION ||
                         advice == CU_MEM_ADVISE_SET_ACCESSED_BY ||
                         advice == CU_MEM_ADVISE_UNSET_ACCESSED_BY;

    if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
        return CUDA_ERROR_INVALID_VALUE;
    /* "The location argument is ignored for this advice" (READ_MOSTLY, UNSET_PREFERRED). */
    if (uses_location && (rc = normalize(&loc)) != CUDA_SUCCESS)
        return rc;
    /* SET_ACCESSED_BY: "The CUmemLocation::type must be either CU_MEM_LOCATION_TYPE_DEVICE ... or
     * CU_MEM_LOCATION_TYPE_HOST ... All other location types are invalid." */
    if ((advice == CU_MEM_ADVISE_SET_ACCESSED_BY || advice == CU_MEM_ADVISE_UNSET_ACCESSED_BY) &&
        loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA)
        return CUDA_ERROR_INVALID_VALUE;
    if (a == NULL)
        return pageable_ok(devPtr, count) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if ((m = state(a)) == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = first; i < end; i++) {
        page_t *pg = &m->page[i];
        unsigned short bit = loc.type == CU_MEM_LOCATION_TYPE_DEVICE ? (1u << loc.id) : HOST_BIT;
        switch (advice) {
        case CU_MEM_ADVISE_SET_READ_MOSTLY:
        case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
            pg->read_mostly = advice == CU_MEM_ADVISE_SET_READ_MOSTLY;
            break;
        case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
            pg->pref_type = (signed char)loc.type;
            pg->pref_id = (signed char)loc.id;
            break;
        case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
            pg->pref_type = 0;
            pg->pref_id = 0;
            break;
        case CU_MEM_ADVISE_SET_ACCESSED_BY:
            pg->accessed_by |= bit;
            break;
        default:
            pg->accessed_by &= (unsigned short)~bit;
            break;
        }
    }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                          CUmemLocation location)
{
    FC_BEGIN(cuMemAdvise_v2, true);
    rc = advise(devPtr, count, advice, location);
    FC_END();
}

/* The 8.0 form: a device ordinal, or CU_DEVICE_CPU for the host. */
FC_EXPORT CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                       CUdevice device)
{
    FC_BEGIN(cuMemAdvise, true);
    rc = advise(devPtr, count, advice, from_device(device));
    FC_END();
}

/* ---- prefetches ------------------------------------------------------------------------------ */

/* cuda.h: a device destination "must have non-zero value for the device attribute
 * CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS" (every device here has); flags "must be zero
 * now"; the stream's work is not waited for ("asynchronous with respect to the host"). The
 * last location asked for is what LAST_PREFETCH_LOCATION answers ("It gives no indication as to
 * whether the prefetch operation to that location has completed"). */
static CUresult prefetch(CUdeviceptr devPtr, size_t count, CUmemLocation loc, unsigned flags,
                         CUstream hStream)
{
    size_t first, end;
    struct CUstream_st *s = NULL;
    fc_alloc_t *a;
    struct fc_managed *m;
    CUresult rc;

    if ((rc = fc_stream_any(hStream, &s)) != CUDA_SUCCESS)
        return rc;
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = normalize(&loc)) != CUDA_SUCCESS)
        return rc;
    if ((a = range_of(devPtr, count, &first, &end)) == NULL)
        return pageable_ok(devPtr, count) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if ((m = state(a)) == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = first; i < end; i++) {
        m->page[i].last_type = (signed char)loc.type;
        m->page[i].last_id = (signed char)loc.id;
    }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count,
                                                 CUmemLocation location, unsigned int flags,
                                                 CUstream hStream)
{
    FC_BEGIN(cuMemPrefetchAsync_v2, true);
    rc = prefetch(devPtr, count, location, flags, hStream);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                              CUstream hStream)
{
    FC_BEGIN(cuMemPrefetchAsync, true);
    rc = prefetch(devPtr, count, from_device(dstDevice), 0, hStream);
    FC_END();
}

/* ---- what was asked ------------------------------------------------------------------------- */

/* The legacy int form of a location: a device ordinal, CU_DEVICE_CPU for the host (any node),
 * CU_DEVICE_INVALID for none. */
static int legacy(int type, int id)
{
    if (type == CU_MEM_LOCATION_TYPE_DEVICE)
        return id;
    return type == 0 ? CU_DEVICE_INVALID : CU_DEVICE_CPU;
}

/* One attribute over pages [first, end) (cuda.h, cuMemRangeGetAttribute: a value when all pages
 * agree, CU_DEVICE_INVALID / CU_MEM_LOCATION_TYPE_INVALID when they do not). */
static CUresult range_attribute(const struct fc_managed *m, size_t first, size_t end,
                                CUmem_range_attribute attr, void *data, size_t size)
{
    static const page_t none;
    const page_t *p0 = m != NULL ? &m->page[first] : &none;
    int type, id;
    bool same_pref = true, same_last = true, all_rm = true;
    unsigned short all_by = 0xffff;

    for (size_t i = first; i < end; i++) {
        const page_t *pg = m != NULL ? &m->page[i] : &none;
        same_pref &= pg->pref_type == p0->pref_type && pg->pref_id == p0->pref_id;
        same_last &= pg->last_type == p0->last_type && pg->last_id == p0->last_id;
        all_rm &= pg->read_mostly != 0;
        all_by &= pg->accessed_by;
    }
    switch (attr) {
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
        if (size != 4)
            return CUDA_ERROR_INVALID_VALUE;
        *(int *)data = all_rm;
        return CUDA_SUCCESS;
    case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
        /* "a list of device ids that had CU_MEM_ADVISE_SET_ACCESSED_BY set for that entire memory
         * range", CU_DEVICE_INVALID in the rest; assumption: the host as CU_DEVICE_CPU. */
        int *out = data;
        size_t n = 0;
        if (size == 0 || size % 4 != 0)
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t k = 0; k < size / 4; k++)
            out[k] = CU_DEVICE_INVALID;
        for (int d = 0; d < fc_config.ndevices && n < size / 4; d++)
            if (all_by & (1u << d))
                out[n++] = d;
        if ((all_by & HOST_BIT) && n < size / 4)
            out[n] = CU_DEVICE_CPU;
        return CUDA_SUCCESS;
    }
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
        if (size != 4)
            return CUDA_ERROR_INVALID_VALUE;
        if (attr == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION)
            *(int *)data = same_pref ? legacy(p0->pref_type, p0->pref_id) : CU_DEVICE_INVALID;
        else
            *(int *)data = same_last ? legacy(p0->last_type, p0->last_id) : CU_DEVICE_INVALID;
        return CUDA_SUCCESS;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: {
        bool pref = attr == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE ||
                    attr == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID;
        bool same = pref ? same_pref : same_last;
        type = same ? (pref ? p0->pref_type : p0->last_type) : CU_MEM_LOCATION_TYPE_INVALID;
        id = same ? (pref ? p0->pref_id : p0->last_id) : 0;
        if (size != 4)
            return CUDA_ERROR_INVALID_VALUE;
        if (attr == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE ||
            attr == CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE)
            *(CUmemLocationType *)data = (CUmemLocationType)type;
        else
            *(int *)data = id;
        return CUDA_SUCCESS;
    }
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

/* cuda.h: "The memory range must refer to managed memory allocated via cuMemAllocManaged". */
FC_EXPORT CUresult CUDAAPI cuMemRangeGetAttribute(void *data, size_t dataSize,
                                                  CUmem_range_attribute attribute,
                                                  CUdeviceptr devPtr, size_t count)
{
    size_t first, end;
    fc_alloc_t *a;
    FC_BEGIN(cuMemRangeGetAttribute, true);
    if (data == NULL || (a = range_of(devPtr, count, &first, &end)) == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        rc = range_attribute(a->managed, first, end, attribute, data, dataSize);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemRangeGetAttributes(void **data, size_t *dataSizes,
                                                   CUmem_range_attribute *attributes,
                                                   size_t numAttributes, CUdeviceptr devPtr,
                                                   size_t count)
{
    size_t first, end;
    fc_alloc_t *a;
    FC_BEGIN(cuMemRangeGetAttributes, true);
    if (data == NULL || dataSizes == NULL || attributes == NULL || numAttributes == 0 ||
        (a = range_of(devPtr, count, &first, &end)) == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numAttributes && rc == CUDA_SUCCESS; i++)
        rc = data[i] == NULL
                 ? CUDA_ERROR_INVALID_VALUE
                 : range_attribute(a->managed, first, end, attributes[i], data[i], dataSizes[i]);
    FC_END();
}

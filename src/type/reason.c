/* SPDX-License-Identifier: BSD-3-Clause */
/* The reasons a datatype is not strided (see reason.h): their text, and which of them still
 * allow a layout. */
#include "type/reason.h"

const char *tj_reason_string(tj_reason_t reason)
{
    switch (reason) {
#define TJ_REASON_CASE(_name, _msg)                                                                \
    case TJ_REASON_##_name:                                                                        \
        return _msg;
        TJ_REASON_LIST(TJ_REASON_CASE)
#undef TJ_REASON_CASE
    }
    return "unknown reason";
}

bool tj_reason_layout(tj_reason_t reason)
{
    switch (reason) {
    case TJ_REASON_CHAIN:
    case TJ_REASON_DIMS:
    case TJ_REASON_NAMED_HOLES:
    case TJ_REASON_IRREGULAR_BLOCKS:
    case TJ_REASON_IRREGULAR_DISPLS:
    case TJ_REASON_MIXED_MEMBERS:
    case TJ_REASON_DARRAY:
    case TJ_REASON_BLOCK:
        return true;
    default:
        return false;
    }
}

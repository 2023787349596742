/* SPDX-License-Identifier: BSD-3-Clause */
/* Status strings and the library version, generated from the lists in typejit.h. */
#include "typejit.h"

const char *tj_status_string(tj_status_t status)
{
    switch (status) {
#define TJ_STATUS_CASE(_name, _value, _msg)                                                        \
    case _name:                                                                                    \
        return _msg;
        TJ_STATUS_LIST(TJ_STATUS_CASE)
#undef TJ_STATUS_CASE
    }
    return "unknown status";
}

const char *tj_version(void)
{
    return TJ_VERSION_STRING;
}

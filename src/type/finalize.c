/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of the type engine's state (see finalize.h). */
#include "type/finalize.h"

#include "type/table.h"

void tj_type_finalize(void)
{
    tj_table_clear();
}

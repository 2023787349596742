/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel templates of templates/, embedded into the library as strings by cmake/embed.cmake. */
#ifndef TJ_JIT_TEMPLATES_H
#define TJ_JIT_TEMPLATES_H

#include <stddef.h>

/* One template: its file name under templates/, its text (NUL-terminated) and its length. */
typedef struct {
    const char *name;
    const char *text;
    size_t len;
} tj_template_t;

/* Every template, in file-name order, ended by an entry whose name is NULL. Defined in the
 * generated ${build}/generated/templates.c. */
extern const tj_template_t tj_templates[];
extern const size_t tj_templates_count;

#endif /* TJ_JIT_TEMPLATES_H */

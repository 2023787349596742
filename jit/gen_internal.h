/* SPDX-License-Identifier: BSD-3-Clause */
/* What the generator of templates/strided.cu shares with the generators of the other templates
 * (jit/parts.c): filling a template, word types, literals, kernel names. */
#ifndef TJ_JIT_GEN_INTERNAL_H
#define TJ_JIT_GEN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "typejit.h"

/* One placeholder @KEY@ of a template and its value. */
typedef struct {
    const char *key;
    const char *value;
} tj_gen_subst_t;

/* The template @p template_name (a file name under templates/) with every @KEY@ replaced by its
 * value: malloc'd text in *source. TJ_ERR_INVALID for a missing template or an unknown
 * placeholder (logged), TJ_ERR_NOMEM. */
tj_status_t tj_gen_fill(const char *template_name, const tj_gen_subst_t *subst, size_t n,
                        char **source);

/* The CUDA type of a word of @p word bytes: "uint4", "unsigned long long", ... */
const char *tj_gen_word_type(int word);

/* A C++ literal of type long long for @p v. */
void tj_gen_literal(char *buf, size_t len, int64_t v);

/* Whether @p name may name a kernel function. */
bool tj_gen_valid_name(const char *name);

#endif /* TJ_JIT_GEN_INTERNAL_H */

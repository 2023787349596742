/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel templates of templates/ as the generators use them: one found by name, its @KEY@
 * placeholders filled, the values they take (word types, literals, kernel names), and the hash of
 * every template that each cache key includes. */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "jit/gen.h"
#include "jit/gen_internal.h"
#include "jit/state.h"
#include "jit/templates.h"
#include "jit/text.h"
#include "util/log.h"

/* The template of templates/ called @p name, or NULL. */
static const tj_template_t *find_template(const char *name)
{
    for (size_t i = 0; i < tj_templates_count; i++)
        if (strcmp(tj_templates[i].name, name) == 0)
            return &tj_templates[i];
    return NULL;
}

/* Copies the template text @p tmpl into @p t, replacing each @KEY@ by its value. TJ_ERR_INVALID
 * for an unknown placeholder (logged), TJ_ERR_NOMEM when @p t failed. */
static tj_status_t fill_text(text_t *t, const char *tmpl, const tj_gen_subst_t *subst,
                             size_t nsubst)
{
    const char *p = tmpl;

    while (*p) {
        const char *at = strchr(p, '@');
        if (at == NULL) {
            tj_text_append(t, p, strlen(p));
            break;
        }
        tj_text_append(t, p, (size_t)(at - p));
        const char *end = strchr(at + 1, '@');
        size_t klen = end ? (size_t)(end - at - 1) : 0;
        size_t i = 0;
        for (; end && i < nsubst; i++)
            if (strlen(subst[i].key) == klen && memcmp(subst[i].key, at + 1, klen) == 0)
                break;
        if (end == NULL || i == nsubst) {
            tj_log_error("kernel template has an unknown placeholder near \"%.20s\"", at);
            return TJ_ERR_INVALID;
        }
        tj_text_append(t, subst[i].value, strlen(subst[i].value));
        p = end + 1;
    }
    return t->failed ? TJ_ERR_NOMEM : TJ_OK;
}

tj_status_t tj_gen_fill(const char *template_name, const tj_gen_subst_t *subst, size_t n,
                        char **source)
{
    const tj_template_t *tmpl = find_template(template_name);
    text_t t = {0};
    tj_status_t status;

    if (tmpl == NULL) {
        tj_log_error("kernel template %s is missing from the library", template_name);
        return TJ_ERR_INVALID;
    }
    status = fill_text(&t, tmpl->text, subst, n);
    if (status != TJ_OK) {
        free(t.buf);
        return status;
    }
    *source = t.buf;
    return TJ_OK;
}

const char *tj_gen_word_type(int word)
{
    switch (word) {
    case 16:
        return "uint4";
    case 8:
        return "unsigned long long";
    case 4:
        return "unsigned int";
    case 2:
        return "unsigned short";
    default:
        return "unsigned char";
    }
}

void tj_gen_literal(char *buf, size_t len, int64_t v)
{
    if (v == INT64_MIN)
        snprintf(buf, len, "(-9223372036854775807LL - 1)");
    else
        snprintf(buf, len, "%" PRId64 "LL", v);
}

bool tj_gen_valid_name(const char *name)
{
    if (name == NULL || !(name[0] == '_' || (name[0] >= 'a' && name[0] <= 'z') ||
                          (name[0] >= 'A' && name[0] <= 'Z')))
        return false;
    for (const char *c = name; *c; c++)
        if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9')))
            return false;
    return strlen(name) < 200;
}

static void hash_templates(void)
{
    XXH3_state_t state;

    XXH3_64bits_reset(&state);
    for (size_t i = 0; i < tj_templates_count; i++) {
        /* The NUL after each part keeps ("ab", "c") apart from ("a", "bc"). */
        XXH3_64bits_update(&state, tj_templates[i].name, strlen(tj_templates[i].name) + 1);
        XXH3_64bits_update(&state, tj_templates[i].text, tj_templates[i].len + 1);
    }
    tj_jit_state.template.hash = XXH3_64bits_digest(&state);
}

uint64_t tj_gen_template_hash(void)
{
    /* Every kernel key includes it: hash the templates once, not on every lookup. */
    pthread_once(&tj_jit_state.template.hash_once, hash_templates);
    return tj_jit_state.template.hash;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* A test program's command line, read from one table of its options: each option's name, what
 * it takes and the variable it sets. An option the table does not name, or one without its
 * value, ends the program with the usage line the table makes (exit status 2). */
#ifndef TJ_TESTS_OPTIONS_H
#define TJ_TESTS_OPTIONS_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    OPT_FLAG, /* no value: sets a bool to true */
    OPT_INT,  /* a decimal int */
    OPT_LONG, /* a decimal long */
    OPT_U64,  /* a uint64_t, decimal or 0x hexadecimal (a seed) */
    OPT_TEXT, /* a string: sets a const char * */
} opt_kind_t;

typedef struct {
    const char *name; /* "--seed"; NULL ends the table */
    opt_kind_t kind;
    void *value;
} opt_t;

static inline void options_usage(const char *program, const opt_t *opts)
{
    static const char *const what[] = {"", " N", " N", " N", " TEXT"};
    fprintf(stderr, "usage: %s", program);
    for (const opt_t *o = opts; o->name != NULL; o++)
        fprintf(stderr, " [%s%s]", o->name, what[o->kind]);
    fprintf(stderr, "\n");
    exit(2);
}

/* @p text as the number @p o takes, into its variable. */
static inline bool options_number(const opt_t *o, const char *text)
{
    char *end;
    errno = 0;
    if (o->kind == OPT_U64) {
        unsigned long long v = strtoull(text, &end, 0);
        if (errno != 0 || end == text || *end != '\0' || text[0] == '-')
            return false;
        *(uint64_t *)o->value = (uint64_t)v;
        return true;
    }
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0')
        return false;
    if (o->kind == OPT_INT) {
        if (v < INT_MIN || v > INT_MAX)
            return false;
        *(int *)o->value = (int)v;
    } else {
        if (v < LONG_MIN || v > LONG_MAX)
            return false;
        *(long *)o->value = (long)v;
    }
    return true;
}

/* Reads argv[1..argc-1] into the variables of @p opts. */
static inline void options_read(int argc, char **argv, const opt_t *opts)
{
    for (int i = 1; i < argc; i++) {
        const opt_t *o = opts;
        while (o->name != NULL && strcmp(o->name, argv[i]) != 0)
            o++;
        if (o->name == NULL)
            options_usage(argv[0], opts);
        if (o->kind == OPT_FLAG) {
            *(bool *)o->value = true;
            continue;
        }
        if (i + 1 >= argc)
            options_usage(argv[0], opts);
        const char *text = argv[++i];
        if (o->kind == OPT_TEXT) {
            *(const char **)o->value = text;
            continue;
        }
        if (!options_number(o, text)) {
            fprintf(stderr, "%s: %s takes a number, not '%s'\n", argv[0], o->name, text);
            exit(2);
        }
    }
}

#endif /* TJ_TESTS_OPTIONS_H */

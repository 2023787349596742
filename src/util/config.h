/* SPDX-License-Identifier: BSD-3-Clause */
/* Every TYPEJIT_* setting: one table of them, parsed once from the environment into one
 * struct. */
#ifndef TJ_UTIL_CONFIG_H
#define TJ_UTIL_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "util/log.h"
#include "util/state.h"

/* The settings (tj_config_t) and the types of their fields are in util/settings.h. */

/* How a setting's value is read; each kind says in its own words what is wrong with a malformed
 * one. */
typedef enum {
    TJ_SETTING_WORD,    /* one of a list of words, any case: a bool or an enum field */
    TJ_SETTING_WHOLE,   /* a whole decimal number from min to max: an int field */
    TJ_SETTING_SIZE,    /* bytes, optionally followed by K, M, G or T: a long long field */
    TJ_SETTING_TEXT,    /* any text that fits: a char array */
    TJ_SETTING_TARGET,  /* sm_XX or compute_XX (tj_config_arch_valid): a char array */
    TJ_SETTING_FOLDER,  /* an absolute path, else the XDG cache folder: a char array */
    TJ_SETTING_FOLDERS, /* absolute paths separated by ':': a char array */
} tj_setting_kind_t;

/* One accepted spelling of a word setting; a later entry with the value of an earlier one is
 * another spelling of it ("warning" for "warn"). Lists end with a NULL name. */
typedef struct {
    const char *name;
    int value;
} tj_setting_word_t;

/* One setting: its variable, how it is read, its default and values, and where it goes. */
typedef struct {
    const char *name; /* TYPEJIT_...; NULL ends the table */
    tj_setting_kind_t kind;
    size_t offset, size;            /* the field of tj_config_t it fills */
    long long def;                  /* the default of a word, number or size */
    long min, max;                  /* a whole number's range */
    const char *unit;               /* what a whole number counts ("seconds"), or NULL */
    const tj_setting_word_t *words; /* a word setting's spellings, in the order warnings list */
    const char *default_text;       /* the default in words, where def does not say it */
    const char *values_text;        /* the values in words, where the kind does not say them */
    const char *doc;                /* what it does, in one line */
} tj_setting_t;

/* The table of every setting, in the order docs/settings.md lists them, then an entry with a
 * NULL name: parsing follows it, `typejit settings` prints it, a new setting is one entry of it
 * (config.c). */
extern const tj_setting_t tj_config_table[];

/* Parse the environment into @p cfg; malformed values get a warning and the default. */
void tj_config_parse(tj_config_t *cfg);

/* The process-wide configuration, parsed on first use. */
const tj_config_t *tj_config_read(void);
/* The settings once read (one load after the first call). */
static inline const tj_config_t *tj_config(void)
{
    return atomic_load_explicit(&tj_util_state.config.ready, memory_order_acquire)
               ? &tj_util_state.config.settings
               : tj_config_read();
}

/* Replace the process-wide configuration (tools apply their command-line flags this way). */
void tj_config_set(const tj_config_t *cfg);

/* Print the warnings about malformed TYPEJIT_* values that parsing collected (parsing itself
 * prints nothing: the library is loaded into every process of a job, launchers and shell
 * commands included). Rank 0 or a negative rank (tools, singletons) prints them as warnings,
 * other ranks at debug level; each warning is flushed once. The MPI_Init wrappers call this
 * after the rank is known. */
void tj_config_flush_warnings(int rank);

/* True for a compile target written sm_XX or compute_XX: two or three digits (the compute
 * capability, not starting with 0) and an optional "a" or "f" feature suffix. */
bool tj_config_arch_valid(const char *arch);

/* Parse all of @p text as a decimal integer in [min, max]: no blanks, no trailing characters,
 * no overflow. False (and *out untouched) otherwise. */
bool tj_config_parse_long(const char *text, long min, long max, long *out);

/* Parse all of @p text as a size in bytes: a whole decimal number, optionally followed by K, M,
 * G or T (either case; powers of 1024), e.g. 500M or 2G. False (and *out untouched) for
 * anything else, or a size of 2^62 bytes or more. */
bool tj_config_parse_size(const char *text, long long *out);

#endif /* TJ_UTIL_CONFIG_H */

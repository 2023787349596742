/* SPDX-License-Identifier: BSD-3-Clause */
/* `typejit settings`: the settings table (util/config.h) as text, one block a setting. */
#include "settings.h"

#include <stdio.h>
#include <string.h>

#include "options.h"
#include "util/config.h"

static const char *usage =
    "usage: typejit settings\n"
    "\n"
    "List every TYPEJIT_* setting: what it does, its default and the values it takes.\n";

static void print_default(const tj_setting_t *t)
{
    if (t->default_text != NULL) {
        fputs(t->default_text, stdout);
        return;
    }
    if (t->kind == TJ_SETTING_WORD) {
        for (const tj_setting_word_t *w = t->words; w->name != NULL; w++) {
            if (w->value == t->def) {
                fputs(w->name, stdout);
                return;
            }
        }
    }
    printf("%lld", t->def);
}

/* Each value of a word setting once, in the table's order, its other spellings after it:
 * "off, error, warn (warning), info, debug". */
static void print_words(const tj_setting_word_t *words)
{
    for (const tj_setting_word_t *w = words; w->name != NULL; w++) {
        const tj_setting_word_t *o;
        int others = 0;

        for (o = words; o != w && o->value != w->value; o++)
            ;
        if (o != w)
            continue; /* another spelling of an earlier value */
        printf("%s%s", w == words ? "" : ", ", w->name);
        for (o = w + 1; o->name != NULL; o++)
            if (o->value == w->value)
                printf("%s%s", others++ == 0 ? " (" : ", ", o->name);
        if (others > 0)
            putchar(')');
    }
}

static void print_values(const tj_setting_t *t)
{
    if (t->values_text != NULL)
        fputs(t->values_text, stdout);
    else if (t->kind == TJ_SETTING_WORD)
        print_words(t->words);
    else if (t->kind == TJ_SETTING_WHOLE)
        printf("%ld to %ld%s%s", t->min, t->max, t->unit != NULL ? " " : "",
               t->unit != NULL ? t->unit : "");
    else if (t->kind == TJ_SETTING_SIZE)
        fputs("a whole number of bytes, optionally followed by K, M, G or T (500M, 2G)", stdout);
}

int tj_settings_run(int argc, char **argv)
{
    if (tj_opt_help(argc, argv)) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "typejit settings: unexpected %s\n%s", argv[1], usage);
        return 2;
    }
    for (const tj_setting_t *t = tj_config_table; t->name != NULL; t++) {
        printf("%s%s\n    %s\n    default: ", t == tj_config_table ? "" : "\n", t->name, t->doc);
        print_default(t);
        fputs("\n    values:  ", stdout);
        print_values(t);
        putchar('\n');
    }
    fputs("\nWords ignore case; an empty value is the default.\n", stdout);
    return 0;
}

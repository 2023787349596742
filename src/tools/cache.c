/* SPDX-License-Identifier: BSD-3-Clause */
/* `typejit cache`: the kernel cache's stats, listing, verification, clearing and trimming, on
 * files alone (no MPI); and how a command keeps the store's own warnings from saying a problem
 * twice. */
#include "cache.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/manifest.h"
#include "cache/store.h"
#include "cache/trim.h"
#include "cache/walk.h"
#include "kernels/key.h"
#include "options.h"
#include "util/config.h"
#include "util/log.h"

static const char *usage_cache =
    "usage: typejit cache stats|list|verify|clear [--cache-dir DIR]\n"
    "       typejit cache trim [--max-size SIZE] [--cache-dir DIR]\n"
    "\n"
    "  stats    number and size of entries, saved sources, manifest lines (and how many are\n"
    "           distinct); entries that fail validation are named, with why\n"
    "  list     one line per entry, least recently used first: hash, folder, bytes, last use,\n"
    "           and what kernel it holds (or why it is invalid)\n"
    "  verify   validate every entry and delete those that fail (exit status 1 if any did)\n"
    "  clear    delete every entry, source, temporary file and the manifest\n"
    "  trim     delete the least recently used entries (and their manifest lines) until entries\n"
    "           and sources take at most SIZE (default: TYPEJIT_CACHE_MAX_SIZE); entries being\n"
    "           compiled by a running process stay (exit status 1 if that leaves it larger)\n"
    "\n"
    "SIZE is a whole number of bytes, optionally followed by K, M, G or T (powers of 1024):\n"
    "500M, 2G. Exit status 1 when a command could not do all it says: a folder it may not look\n"
    "into (not yours, or writable by others), a file it could not delete.\n";

/* The store warns about each problem it meets; where this command reports the problem itself
 * (tj_store_last_problem), the store's warning would say it twice. At the default level the
 * store is quiet in between; TYPEJIT_LOG=info or debug still shows everything. */
static int loud_level = -1;

void tj_cache_quiet(void)
{
    if (tj_log_level() == TJ_LOG_WARN) {
        loud_level = tj_log_level();
        tj_log_set_level(TJ_LOG_ERROR);
    }
}

void tj_cache_loud(void)
{
    if (loud_level >= 0)
        tj_log_set_level((tj_log_level_t)loud_level);
    loud_level = -1;
}

/* What a walk could not see or do, after its counts: one line, and the reason the store gave. */
static void report_walk_problem(const char *cmd, const tj_store_stats_t *stats, tj_status_t st)
{
    const char *why = tj_store_last_problem();

    if (stats->skipped > 0)
        fprintf(stderr, "typejit cache %s: %ld folder%s not %s: %s\n", cmd, stats->skipped,
                stats->skipped == 1 ? "" : "s", strcmp(cmd, "clear") == 0 ? "cleared" : "counted",
                why[0] ? why : "refused");
    else
        fprintf(stderr, "typejit cache %s: %s\n", cmd, why[0] ? why : tj_status_string(st));
}

/* Entries that fail validation, named with why: at most MAX_INVALID_SHOWN lines. */
#define MAX_INVALID_SHOWN 20

typedef struct {
    char lines[MAX_INVALID_SHOWN][PATH_MAX + 300];
    int n, more;
} invalid_t;

static void note_invalid(const tj_store_item_t *item, void *arg)
{
    invalid_t *inv = arg;

    if (item->invalid == NULL)
        return;
    if (inv->n == MAX_INVALID_SHOWN) {
        inv->more++;
        return;
    }
    snprintf(inv->lines[inv->n++], sizeof(inv->lines[0]), "%s/%s: %s", item->folder, item->name,
             item->invalid);
}

static void print_invalid(const char *cmd, const invalid_t *inv)
{
    for (int i = 0; i < inv->n; i++)
        printf("typejit cache %s: invalid entry %s\n", cmd, inv->lines[i]);
    if (inv->more > 0)
        printf("typejit cache %s: %d more invalid entries not shown\n", cmd, inv->more);
}

typedef struct {
    char *line;
    long long last_use;
} listed_t;

typedef struct {
    listed_t *items;
    size_t n, cap;
    bool oom;
} list_t;

static void list_item(const tj_store_item_t *item, void *arg)
{
    list_t *l = arg;
    char what[2048], when[32], line[PATH_MAX + 2400];
    struct tm tm;
    time_t t = (time_t)item->last_use;
    const char *slash = strrchr(item->folder, '/');
    const char *tc_end = slash, *tc = item->folder;
    int n;

    if (l->oom)
        return;
    if (item->key != NULL)
        tj_key_describe(item->key, what, sizeof(what));
    else
        snprintf(what, sizeof(what), "invalid: %s", item->invalid);
    /* The folder is DIR/TOOLCHAIN/ARCH: show TOOLCHAIN/ARCH. */
    if (slash != NULL) {
        for (const char *p = item->folder; p < tc_end; p++)
            if (*p == '/')
                tc = p + 1;
    }
    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    n = snprintf(line, sizeof(line), "%.32s %s %lld %s %s%s", item->name, tc, item->bytes, when,
                 what, item->source ? " (source saved)" : "");
    if (n < 0)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        listed_t *grown = realloc(l->items, cap * sizeof(*grown));
        if (grown == NULL) {
            l->oom = true;
            return;
        }
        l->items = grown;
        l->cap = cap;
    }
    if ((l->items[l->n].line = strdup(line)) == NULL) {
        l->oom = true;
        return;
    }
    l->items[l->n++].last_use = item->last_use;
}

static int by_use(const void *a, const void *b)
{
    const listed_t *x = a, *y = b;
    if (x->last_use != y->last_use)
        return x->last_use < y->last_use ? -1 : 1;
    return strcmp(x->line, y->line);
}

/* One line per entry, least recently used first (the order trim removes them in). */
static int cache_list(tj_store_t *store)
{
    list_t l = {NULL, 0, 0, false};
    tj_store_stats_t stats;
    long skipped = 0;
    tj_status_t st = tj_store_list(store, list_item, &l, &skipped);
    int rc = 0;

    qsort(l.items, l.n, sizeof(*l.items), by_use);
    for (size_t i = 0; i < l.n; i++) {
        printf("%s\n", l.items[i].line);
        free(l.items[i].line);
    }
    free(l.items);
    if (l.oom) {
        fprintf(stderr, "typejit cache list: out of memory\n");
        rc = 1;
    }
    if (st != TJ_OK) {
        memset(&stats, 0, sizeof(stats));
        stats.skipped = skipped;
        report_walk_problem("list", &stats, st);
        rc = 1;
    }
    return rc;
}

static int cache_clear(tj_store_t *store, const char *dir)
{
    tj_store_stats_t left;
    tj_status_t st = tj_store_clear(store), st_left;

    /* Say "cleared" only when nothing is left; else what is left, and why. */
    memset(&left, 0, sizeof(left));
    st_left = tj_store_stats(store, false, &left);
    if (st == TJ_OK && st_left == TJ_OK && left.entries + left.invalid + left.sources == 0) {
        printf("cache %s: cleared\n", dir);
        return 0;
    }
    printf("cache %s: not cleared: %ld entries, %ld invalid, %ld sources left%s\n", dir,
           left.entries, left.invalid, left.sources,
           left.skipped > 0 ? ", and folders that could not be looked into" : "");
    if (left.invalid > 0) {
        invalid_t invalid;
        memset(&invalid, 0, sizeof(invalid));
        tj_store_list(store, note_invalid, &invalid, NULL);
        print_invalid("clear", &invalid);
    }
    if (st != TJ_OK)
        report_walk_problem("clear", &left, st);
    else if (st_left != TJ_OK)
        report_walk_problem("clear", &left, st_left);
    return 1;
}

/* Trim to @p max bytes and say what was removed and what is left. */
static int cache_trim(tj_store_t *store, const char *dir, long long max)
{
    tj_store_trim_t r;
    tj_status_t st = tj_store_trim(store, max, &r);
    int rc = 0;

    printf("cache %s: removed %ld entries (%lld bytes), %ld manifest lines; %ld entries left "
           "(%lld bytes, at most %lld wanted)\n",
           dir, r.removed, r.freed, r.lines_dropped, r.kept, r.kept_bytes, max);
    if (r.kept_bytes > max && r.busy > 0) {
        fprintf(stderr,
                "typejit cache trim: still %lld bytes over: %ld entries are being compiled or "
                "written by running processes\n",
                r.kept_bytes - max, r.busy);
        rc = 1;
    } else if (r.kept_bytes > max) {
        rc = 1; /* entries that could not be removed: the store's reason follows */
    }
    if (st != TJ_OK) {
        tj_store_stats_t stats;
        memset(&stats, 0, sizeof(stats));
        stats.skipped = r.skipped;
        report_walk_problem("trim", &stats, st);
        rc = 1;
    }
    return rc;
}

int tj_cache_run(int argc, char **argv)
{
    const char *dir = NULL, *what = NULL, *size = NULL;
    long long max = tj_config()->cache_max_size;
    tj_store_t *store;
    tj_store_stats_t stats;
    invalid_t invalid;
    long lines = 0, distinct = 0;
    bool verify;
    tj_status_t st, st_manifest;
    int rc;

    if (tj_opt_help(argc, argv)) {
        fputs(usage_cache, stdout);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (tj_opt_value("cache", argc, argv, &i, "--cache-dir", &dir)) {
            if (dir == NULL)
                return 2;
        } else if (tj_opt_value("cache", argc, argv, &i, "--max-size", &size)) {
            if (size == NULL)
                return 2;
            if (!tj_config_parse_size(size, &max)) {
                fprintf(stderr,
                        "typejit cache: --max-size wants a size such as 500M or 2G (a whole "
                        "number of bytes, optionally followed by K, M, G or T), not \"%s\"\n",
                        size);
                return 2;
            }
        } else if (what == NULL && argv[i][0] != '-')
            what = argv[i];
        else {
            fprintf(stderr, "typejit cache: unexpected %s\n%s", argv[i], usage_cache);
            return 2;
        }
    }
    if (what == NULL) {
        fprintf(stderr, "typejit cache: no subcommand given\n%s", usage_cache);
        return 2;
    }
    if (strcmp(what, "stats") && strcmp(what, "list") && strcmp(what, "verify") &&
        strcmp(what, "clear") && strcmp(what, "trim")) {
        fprintf(stderr,
                "typejit cache: unknown subcommand %s (stats, list, verify, clear or trim)\n%s",
                what, usage_cache);
        return 2;
    }
    if (size != NULL && strcmp(what, "trim") != 0) {
        fprintf(stderr, "typejit cache %s: --max-size is for trim only\n", what);
        return 2;
    }
    if (strcmp(what, "trim") == 0 && size == NULL && max <= 0) {
        fprintf(stderr, "typejit cache trim: how large may the cache be? give --max-size SIZE "
                        "(or set TYPEJIT_CACHE_MAX_SIZE)\n");
        return 2;
    }
    if (tj_opt_cache_dir(dir)[0] == '\0') {
        fprintf(stderr, "typejit cache: no cache directory: set TYPEJIT_CACHE_DIR or HOME\n");
        return 1;
    }
    /* stats and list only read: a missing cache is not created for them. */
    tj_cache_quiet(); /* every problem is reported below, once */
    st = tj_store_open(tj_opt_cache_dir(dir),
                       strcmp(what, "stats") == 0 || strcmp(what, "list") == 0 ? TJ_STORE_RO
                                                                               : TJ_STORE_RW,
                       &store);
    if (st == TJ_ERR_NOT_FOUND) {
        printf("cache %s: empty (no directory)\n", tj_opt_cache_dir(dir));
        return 0;
    }
    if (st != TJ_OK) {
        fprintf(stderr, "typejit cache %s: cannot use %s: %s\n", what, tj_opt_cache_dir(dir),
                tj_store_last_problem()[0] ? tj_store_last_problem() : tj_status_string(st));
        return 1;
    }
    if (strcmp(what, "clear") == 0 || strcmp(what, "trim") == 0 || strcmp(what, "list") == 0) {
        rc = strcmp(what, "clear") == 0  ? cache_clear(store, tj_opt_cache_dir(dir))
             : strcmp(what, "trim") == 0 ? cache_trim(store, tj_opt_cache_dir(dir), max)
                                         : cache_list(store);
        tj_store_close(store);
        return rc;
    }
    verify = strcmp(what, "verify") == 0;
    memset(&stats, 0, sizeof(stats));
    memset(&invalid, 0, sizeof(invalid));
    /* Named before verify deletes them. */
    tj_store_list(store, note_invalid, &invalid, NULL);
    st = tj_store_stats(store, verify, &stats);
    st_manifest = tj_store_manifest_count(store, &lines, &distinct);
    tj_store_close(store);
    if (verify)
        printf("cache %s: %ld entries, %ld bytes, %ld invalid (%ld deleted), %ld sources, "
               "%ld manifest lines (%ld distinct)\n",
               tj_opt_cache_dir(dir), stats.entries, stats.bytes, stats.invalid, stats.removed,
               stats.sources, lines, distinct);
    else
        printf("cache %s: %ld entries, %ld bytes, %ld invalid, %ld sources, %ld manifest lines "
               "(%ld distinct)\n",
               tj_opt_cache_dir(dir), stats.entries, stats.bytes, stats.invalid, stats.sources,
               lines, distinct);
    print_invalid(what, &invalid);
    rc = 0;
    if (st != TJ_OK) {
        report_walk_problem(what, &stats, st);
        rc = 1;
    }
    if (st_manifest != TJ_OK) {
        fprintf(stderr, "typejit cache %s: manifest not read: %s\n", what,
                tj_store_last_problem()[0] ? tj_store_last_problem()
                                           : tj_status_string(st_manifest));
        rc = 1;
    }
    return verify && stats.invalid > 0 ? 1 : rc;
}

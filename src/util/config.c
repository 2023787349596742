/* SPDX-License-Identifier: BSD-3-Clause */
/* The TYPEJIT_* settings in one table, and their parsing from the environment into tj_config_t;
 * docs/settings.md documents each one. */
#include "util/config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* This module's part of the layer's state. */
static __typeof__(tj_util_state.config) *const config_state = &tj_util_state.config;

static const tj_setting_word_t bools[] = {
    {"1", 1},  {"yes", 1},   {"true", 1}, {"on", 1}, {"0", 0},
    {"no", 0}, {"false", 0}, {"off", 0},  {NULL, 0},
};
static const tj_setting_word_t levels[] = {
    {"off", TJ_LOG_OFF},
    {"error", TJ_LOG_ERROR},
    {"warn", TJ_LOG_WARN},
    {"warning", TJ_LOG_WARN},
    {"info", TJ_LOG_INFO},
    {"debug", TJ_LOG_DEBUG},
    {NULL, 0},
};
static const tj_setting_word_t hosts[] = {
    {"auto", TJ_HOST_AUTO}, {"system", TJ_HOST_SYSTEM}, {"engine", TJ_HOST_ENGINE}, {NULL, 0}};
static const tj_setting_word_t jits[] = {
    {"off", TJ_JIT_OFF}, {"auto", TJ_JIT_AUTO}, {"always", TJ_JIT_ALWAYS}, {NULL, 0}};
static const tj_setting_word_t caches[] = {
    {"rw", TJ_CACHE_RW}, {"ro", TJ_CACHE_RO}, {"off", TJ_CACHE_OFF}, {NULL, 0}};
static const tj_setting_word_t tristates[] = {
    {"auto", TJ_TRI_AUTO}, {"yes", TJ_TRI_YES}, {"no", TJ_TRI_NO}, {NULL, 0}};
static const tj_setting_word_t methods[] = {{"auto", TJ_FORCE_AUTO},
                                            {"device", TJ_FORCE_DEVICE},
                                            {"oneshot", TJ_FORCE_ONESHOT},
                                            {"staged", TJ_FORCE_STAGED},
                                            {NULL, 0}};
static const tj_setting_word_t progresses[] = {{"off", TJ_PROGRESS_OFF},
                                               {"calls", TJ_PROGRESS_CALLS},
                                               {"thread", TJ_PROGRESS_THREAD},
                                               {NULL, 0}};

/* A word setting stores through an int (or a bool): every enum it fills is int-sized. */
_Static_assert(sizeof(tj_log_level_t) == sizeof(int) && sizeof(tj_host_mode_t) == sizeof(int) &&
                   sizeof(tj_jit_mode_t) == sizeof(int) && sizeof(tj_cache_mode_t) == sizeof(int) &&
                   sizeof(tj_tristate_t) == sizeof(int) &&
                   sizeof(tj_method_setting_t) == sizeof(int) &&
                   sizeof(tj_progress_mode_t) == sizeof(int),
               "word settings fill int-sized fields");

/* The field of tj_config_t an entry fills. */
#define FIELD(_f) .offset = offsetof(tj_config_t, _f), .size = sizeof(((tj_config_t *)0)->_f)

/* An entry's kind and field, with what the kind needs. */
#define WORD(_f, _words, _def) .kind = TJ_SETTING_WORD, FIELD(_f), .words = (_words), .def = (_def)
#define BOOL(_f)               WORD(_f, bools, false)
#define WHOLE(_f, _min, _max, _def, _unit)                                                         \
    .kind = TJ_SETTING_WHOLE, FIELD(_f), .min = (_min), .max = (_max), .def = (_def),              \
    .unit = (_unit)
#define AS(_kind, _f) .kind = (_kind), FIELD(_f)

/* One entry a setting. Warnings about malformed values come in this order, and a misspelt name
 * is matched against the names in this order (the first of equally close ones is suggested). */
const tj_setting_t tj_config_table[] = {
    {"TYPEJIT_DISABLE", BOOL(disable), .doc = "1: pass every call straight to the system MPI"},
    {"TYPEJIT_LOG", WORD(log_level, levels, TJ_LOG_WARN), .doc = "what typejit writes to stderr"},
    {"TYPEJIT_STATS", BOOL(stats), .doc = "1: each rank prints its counters at MPI_Finalize"},
    {"TYPEJIT_HOST", WORD(host, hosts, TJ_HOST_AUTO), .doc = "who packs host buffers"},
    {"TYPEJIT_JIT", WORD(jit, jits, TJ_JIT_AUTO), .doc = "which kernels are compiled, and when"},
    {"TYPEJIT_ARCH", AS(TJ_SETTING_TARGET, arch), .default_text = "the device's sm_XX",
     .values_text = "sm_XX or compute_XX, XX the compute capability, optionally followed by a or f",
     .doc = "the compile target"},
    {"TYPEJIT_CACHE", WORD(cache, caches, TJ_CACHE_RW),
     .doc = "the disk cache: read and write, read only, or not used"},
    {"TYPEJIT_CACHE_DIR", AS(TJ_SETTING_FOLDER, cache_dir),
     .default_text = "$XDG_CACHE_HOME/typejit, else ~/.cache/typejit",
     .values_text = "an absolute path", .doc = "the root of the disk cache"},
    {"TYPEJIT_CACHE_SAVE_SOURCE", BOOL(save_source),
     .doc = "1: keep each kernel's .cu beside its cache entry"},
    {"TYPEJIT_CACHE_PATH", AS(TJ_SETTING_FOLDERS, cache_path), .default_text = "empty",
     .values_text = "DIR:DIR:..., absolute paths",
     .doc = "read-only kernel caches searched after the user's own"},
    {"TYPEJIT_CACHE_MAX_SIZE", AS(TJ_SETTING_SIZE, cache_max_size), .default_text = "none",
     .doc = "the most the disk cache holds (0: no limit); the first store of a process trims it"},
    {"TYPEJIT_JIT_SYNC", BOOL(jit_sync),
     .doc = "1: compile at commit instead of in background threads"},
    {"TYPEJIT_JIT_THREADS", WHOLE(jit_threads, 1, 64, 1, NULL),
     .doc = "background compiles at once, per process"},
    {"TYPEJIT_JIT_DRAIN", WHOLE(jit_drain_s, 0, 3600, 2, "seconds"),
     .doc = "how long MPI_Finalize waits for background compiles"},
    {"TYPEJIT_METHOD", WORD(method, methods, TJ_FORCE_AUTO),
     .doc = "how sends and receives of device buffers move their bytes"},
    {"TYPEJIT_CUDA_AWARE", WORD(cuda_aware, tristates, TJ_TRI_AUTO),
     .doc = "whether the system MPI takes device buffers"},
    {"TYPEJIT_STAGE_CONTIGUOUS", WORD(stage_contiguous, tristates, TJ_TRI_AUTO),
     .doc = "whether contiguous device buffers are staged through host memory"},
    {"TYPEJIT_SYSTEM_TABLE", AS(TJ_SETTING_TEXT, system_table),
     .default_text = "CACHE/system/sm_XX-DEVICE-DRIVER.txt", .values_text = "a file",
     .doc = "the measured system table the method model reads"},
    {"TYPEJIT_PROGRESS", WORD(progress, progresses, TJ_PROGRESS_CALLS),
     .doc = "when non-blocking device sends and collectives whose packs still run reach the "
            "system MPI"},
    {0},
};

static void setting_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void setting_warn(const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&config_state->deferred_lock);
    if (config_state->ndeferred < TJ_CONFIG_MAX_DEFERRED) {
        va_start(ap, fmt);
        vsnprintf(config_state->deferred[config_state->ndeferred++],
                  sizeof(config_state->deferred[0]), fmt, ap);
        va_end(ap);
    } else
        config_state->ndropped++;
    pthread_mutex_unlock(&config_state->deferred_lock);
}

void tj_config_flush_warnings(int rank)
{
    pthread_mutex_lock(&config_state->deferred_lock);
    /* Every rank reads the same environment in the usual launch: rank 0 speaks for all; the
     * others keep their copy at debug level, for the rare job whose ranks differ. */
    for (int i = 0; i < config_state->ndeferred; i++) {
        if (rank <= 0)
            tj_log_warn("%s", config_state->deferred[i]);
        else
            tj_log_debug("%s", config_state->deferred[i]);
    }
    if (config_state->ndropped > 0 && rank <= 0)
        tj_log_warn("%d more warnings about TYPEJIT_* settings not shown", config_state->ndropped);
    config_state->ndeferred = config_state->ndropped = 0;
    pthread_mutex_unlock(&config_state->deferred_lock);
}

/* The word @p s names among the spellings of @p t, else its default with a warning that says
 * what would have been accepted and what is used instead. */
static int parse_word(const tj_setting_t *t, const char *s)
{
    char accepted[160] = "";
    const char *def_name = NULL;
    size_t at = 0, n = 0;

    while (t->words[n].name != NULL)
        n++;
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(s, t->words[i].name) == 0)
            return t->words[i].value;
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(accepted + at, sizeof(accepted) - at, "%s%s",
                         i == 0       ? ""
                         : i + 1 == n ? " or "
                                      : ", ",
                         t->words[i].name);
        if (w > 0 && (size_t)w < sizeof(accepted) - at)
            at += (size_t)w;
        if (def_name == NULL && t->words[i].value == t->def)
            def_name = t->words[i].name;
    }
    setting_warn("ignoring %s=\"%s\": not one of %s; using %s", t->name, s, accepted,
                 def_name != NULL ? def_name : "the default");
    return (int)t->def;
}

/* Edit distance between @p a (of length @p na) and @p b, ignoring case, a swap of two neighbours
 * counting as one edit (the optimal string alignment distance); at most 40 characters of each
 * are compared. */
static int distance(const char *a, size_t na, const char *b)
{
    enum { MAX = 40 };
    size_t nb = strlen(b);
    int d[MAX + 1][MAX + 1];

    if (na > MAX)
        na = MAX;
    if (nb > MAX)
        nb = MAX;
    for (size_t i = 0; i <= na; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        for (size_t j = 1; j <= nb; j++) {
            int ai = toupper((unsigned char)a[i - 1]), bj = toupper((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + (ai != bj);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ai == toupper((unsigned char)b[j - 2]) &&
                toupper((unsigned char)a[i - 2]) == bj && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[na][nb];
}

/* Warn about TYPEJIT_* names (in any case) that are no setting: a typo that would otherwise be
 * ignored silently; with the closest setting when one is close. */
static void check_names(void)
{
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        size_t len = strcspn(*e, "=");
        const char *best = NULL;
        int best_d = 1 << 30;
        bool exact = false;

        if (len < 8 || strncasecmp(*e, "TYPEJIT_", 8) != 0)
            continue;
        for (const tj_setting_t *t = tj_config_table; t->name != NULL && !exact; t++) {
            int d = distance(*e, len, t->name);
            exact = strlen(t->name) == len && strncmp(*e, t->name, len) == 0;
            if (d < best_d) {
                best_d = d;
                best = t->name;
            }
        }
        if (exact)
            continue;
        /* A suggestion only when it is close (an edit for every three characters after the
         * prefix), or when a setting's name begins the name given (TYPEJIT_LOGLEVEL). */
        if (best != NULL && (size_t)best_d * 3 > len - 8 + 1) {
            size_t longest = 0;
            best = NULL;
            for (const tj_setting_t *t = tj_config_table; t->name != NULL; t++) {
                size_t n = strlen(t->name);
                if (n > longest && n < len && strncasecmp(*e, t->name, n) == 0) {
                    longest = n;
                    best = t->name;
                }
            }
        }
        if (best != NULL)
            setting_warn("ignoring %.*s: not a typejit setting; did you mean %s?", (int)len, *e,
                         best);
        else
            setting_warn("ignoring %.*s: not a typejit setting (docs/settings.md lists them)",
                         (int)len, *e);
    }
}

static void copy_string(char *dst, size_t len, const char *var, const char *src)
{
    if (strlen(src) >= len) {
        setting_warn("ignoring %s: value longer than %zu characters", var, len - 1);
        return;
    }
    strcpy(dst, src);
}

static void default_cache_dir(char *dst, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n = -1;

    if (xdg != NULL && xdg[0] == '/')
        n = snprintf(dst, len, "%s/typejit", xdg);
    else if (home != NULL && home[0] == '/')
        n = snprintf(dst, len, "%s/.cache/typejit", home);
    if (n < 0 || (size_t)n >= len)
        dst[0] = '\0';
}

/* The absolute folders of a ':'-separated list, in order. Empty elements are skipped silently (a
 * trailing ':' is common in shell-built lists); a relative one is dropped with a warning, since
 * it would name a different cache in every working directory. */
static void parse_folders(char *dst, size_t len, const char *var, const char *s)
{
    size_t at = 0;

    if (strlen(s) >= len) {
        setting_warn("ignoring %s: value longer than %zu characters", var, len - 1);
        return;
    }
    while (*s != '\0') {
        size_t n = strcspn(s, ":");
        if (n > 0 && s[0] != '/')
            setting_warn("ignoring \"%.*s\" in %s: not an absolute path", (int)n, s, var);
        else if (n > 0) {
            if (at > 0)
                dst[at++] = ':';
            memcpy(dst + at, s, n);
            at += n;
        }
        s += n;
        if (*s == ':')
            s++;
    }
    dst[at] = '\0';
}

/* Store @p v in a bool, int or long long field of @p size bytes. */
static void store(void *field, size_t size, long long v)
{
    bool b = v != 0;
    int i = (int)v;

    if (size == sizeof(bool))
        memcpy(field, &b, size);
    else if (size == sizeof(int))
        memcpy(field, &i, size);
    else if (size == sizeof(long long))
        memcpy(field, &v, size);
}

/* Fill the field of @p t in @p cfg from the environment: the value, or the default when it is
 * unset or empty, or (with a warning) malformed. */
static void parse_setting(const tj_setting_t *t, tj_config_t *cfg)
{
    char *field = (char *)cfg + t->offset;
    const char *s = getenv(t->name);
    bool set = s != NULL && *s != '\0';
    long whole;
    long long size;

    switch (t->kind) {
    case TJ_SETTING_WORD:
        store(field, t->size, set ? parse_word(t, s) : t->def);
        break;
    case TJ_SETTING_WHOLE:
        if (set && tj_config_parse_long(s, t->min, t->max, &whole)) {
            store(field, t->size, whole);
            break;
        }
        if (set)
            setting_warn("ignoring %s=\"%s\": expected a whole number%s%s from %ld to %ld, "
                         "using %lld",
                         t->name, s, t->unit != NULL ? " of " : "", t->unit != NULL ? t->unit : "",
                         t->min, t->max, t->def);
        store(field, t->size, t->def);
        break;
    case TJ_SETTING_SIZE:
        store(field, t->size, t->def);
        if (!set)
            break;
        if (tj_config_parse_size(s, &size))
            store(field, t->size, size);
        else
            setting_warn("ignoring %s=\"%s\": expected a size such as 500M or 2G (a whole number "
                         "of bytes, optionally followed by K, M, G or T), using no limit",
                         t->name, s);
        break;
    case TJ_SETTING_TEXT:
        if (set)
            copy_string(field, t->size, t->name, s);
        break;
    case TJ_SETTING_TARGET:
        if (set && tj_config_arch_valid(s))
            copy_string(field, t->size, t->name, s);
        else if (set)
            setting_warn("ignoring %s=\"%s\": expected sm_XX or compute_XX (XX the compute "
                         "capability, e.g. sm_90, compute_80, sm_90a), using the device's",
                         t->name, s);
        break;
    case TJ_SETTING_FOLDER:
        /* Absolute paths only, as in a list of folders: a relative one names a different cache
         * in every working directory (the ranks of a job may start in different ones, a program
         * may change its own, and `typejit warm` runs elsewhere). */
        if (set && s[0] != '/') {
            default_cache_dir(field, t->size);
            setting_warn("ignoring %s=\"%s\": not an absolute path (each process would resolve "
                         "it in its own working directory); using %s",
                         t->name, s, field[0] != '\0' ? field : "no disk cache");
        } else if (set)
            copy_string(field, t->size, t->name, s);
        if (field[0] == '\0')
            default_cache_dir(field, t->size);
        break;
    case TJ_SETTING_FOLDERS:
        if (set)
            parse_folders(field, t->size, t->name, s);
        break;
    }
}

void tj_config_parse(tj_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (const tj_setting_t *t = tj_config_table; t->name != NULL; t++)
        parse_setting(t, cfg);
    /* Parsing prints nothing: the deferred warnings obey the level when they are flushed. */
    tj_log_set_level(cfg->log_level);
    check_names();
}

bool tj_config_arch_valid(const char *arch)
{
    const char *p;
    size_t digits;

    if (strncmp(arch, "sm_", 3) == 0)
        p = arch + 3;
    else if (strncmp(arch, "compute_", 8) == 0)
        p = arch + 8;
    else
        return false;
    /* Two or three decimal digits, the first not 0 (sm_75, sm_100), then an optional feature
     * suffix: "a" (arch-specific) or "f" (family). */
    digits = strspn(p, "0123456789");
    if (digits < 2 || digits > 3 || p[0] == '0')
        return false;
    p += digits;
    return p[0] == '\0' || ((p[0] == 'a' || p[0] == 'f') && p[1] == '\0');
}

bool tj_config_parse_long(const char *text, long min, long max, long *out)
{
    char *end;
    long v;

    /* strtol alone accepts leading blanks, a trailing rest and wraps nothing but saturates:
     * each of those is a malformed value here. */
    if (text == NULL || *text == '\0' || isspace((unsigned char)*text))
        return false;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool tj_config_parse_size(const char *text, long long *out)
{
    static const char units[] = "KMGT";
    long long v = 0;
    const char *p = text;
    int shift = 0;

    if (text == NULL || !isdigit((unsigned char)*p))
        return false;
    for (; isdigit((unsigned char)*p); p++) {
        if (v > (LLONG_MAX / 4 - (*p - '0')) / 10)
            return false;
        v = v * 10 + (*p - '0');
    }
    if (*p != '\0') {
        const char *u = strchr(units, toupper((unsigned char)*p));
        if (u == NULL || p[1] != '\0')
            return false;
        shift = 10 * (int)(u - units + 1);
    }
    /* 2^62 bytes is beyond any disk, and keeps sums of sizes far from overflowing. */
    if (v > (LLONG_MAX / 2) >> shift)
        return false;
    *out = v << shift;
    return true;
}

static void config_init(void)
{
    tj_config_parse(&config_state->settings);
}

const tj_config_t *tj_config_read(void)
{
    pthread_once(&config_state->once, config_init);
    atomic_store_explicit(&config_state->ready, true, memory_order_release);
    return &config_state->settings;
}

void tj_config_set(const tj_config_t *cfg)
{
    pthread_once(&config_state->once, config_init);
    config_state->settings = *cfg;
    tj_log_set_level(cfg->log_level);
}

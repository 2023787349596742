/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing of the TYPEJIT_* environment variables; docs/settings.md documents each one. */
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

typedef struct {
    const char *name;
    int value;
} choice_t;

/* Warnings about the settings are kept, not printed, while the environment is parsed: the
 * library is loaded into every process of a job (mpirun, a shell's `ls`), and only MPI
 * processes should speak, once (tj_config_flush_warnings). */
#define MAX_DEFERRED 16
static char deferred[MAX_DEFERRED][320];
static int ndeferred, ndropped;
static pthread_mutex_t deferred_lock = PTHREAD_MUTEX_INITIALIZER;

static void setting_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void setting_warn(const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&deferred_lock);
    if (ndeferred < MAX_DEFERRED) {
        va_start(ap, fmt);
        vsnprintf(deferred[ndeferred++], sizeof(deferred[0]), fmt, ap);
        va_end(ap);
    } else
        ndropped++;
    pthread_mutex_unlock(&deferred_lock);
}

void tj_config_flush_warnings(int rank)
{
    pthread_mutex_lock(&deferred_lock);
    /* Every rank reads the same environment in the usual launch: rank 0 speaks for all; the
     * others keep their copy at debug level, for the rare job whose ranks differ. */
    for (int i = 0; i < ndeferred; i++) {
        if (rank <= 0)
            tj_log_warn("%s", deferred[i]);
        else
            tj_log_debug("%s", deferred[i]);
    }
    if (ndropped > 0 && rank <= 0)
        tj_log_warn("%d more warnings about TYPEJIT_* settings not shown", ndropped);
    ndeferred = ndropped = 0;
    pthread_mutex_unlock(&deferred_lock);
}

static const choice_t bool_choices[] = {
    {"1", 1}, {"yes", 1}, {"true", 1}, {"on", 1}, {"0", 0}, {"no", 0}, {"false", 0}, {"off", 0},
};

static int parse_choice(const char *var, const choice_t *choices, size_t n, int def)
{
    const char *s = getenv(var);
    char accepted[160] = "";
    const char *def_name = NULL;
    size_t at = 0;

    if (s == NULL || *s == '\0')
        return def;
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(s, choices[i].name) == 0)
            return choices[i].value;
    /* Say what would have been accepted, and what is used instead. */
    if (choices == bool_choices) {
        snprintf(accepted, sizeof(accepted), "1, yes, true, on, 0, no, false or off");
        def_name = def ? "1" : "0";
    } else {
        for (size_t i = 0; i < n; i++) {
            int w = snprintf(accepted + at, sizeof(accepted) - at, "%s%s",
                             i == 0       ? ""
                             : i + 1 == n ? " or "
                                          : ", ",
                             choices[i].name);
            if (w > 0 && (size_t)w < sizeof(accepted) - at)
                at += (size_t)w;
            if (def_name == NULL && choices[i].value == def)
                def_name = choices[i].name;
        }
    }
    setting_warn("ignoring %s=\"%s\": not one of %s; using %s", var, s, accepted,
                 def_name != NULL ? def_name : "the default");
    return def;
}

static bool parse_bool(const char *var, bool def)
{
    return parse_choice(var, bool_choices, sizeof(bool_choices) / sizeof(bool_choices[0]), def);
}

/* Every setting typejit reads; a TYPEJIT_* name in the environment that is not here is a typo
 * that would otherwise be ignored silently. */
static const char *const known_names[] = {
    "TYPEJIT_DISABLE",
    "TYPEJIT_LOG",
    "TYPEJIT_STATS",
    "TYPEJIT_HOST",
    "TYPEJIT_JIT",
    "TYPEJIT_ARCH",
    "TYPEJIT_CACHE",
    "TYPEJIT_CACHE_DIR",
    "TYPEJIT_CACHE_SAVE_SOURCE",
    "TYPEJIT_CACHE_PATH",
    "TYPEJIT_CACHE_MAX_SIZE",
    "TYPEJIT_JIT_SYNC",
    "TYPEJIT_JIT_THREADS",
    "TYPEJIT_JIT_DRAIN",
    "TYPEJIT_METHOD",
    "TYPEJIT_CUDA_AWARE",
    "TYPEJIT_STAGE_CONTIGUOUS",
    "TYPEJIT_SYSTEM_TABLE",
};

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

/* Warn about TYPEJIT_* names (in any case) that are no setting, with the closest one. */
static void check_names(void)
{
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        size_t len = strcspn(*e, "=");
        const char *best = NULL;
        int best_d = 1 << 30;
        bool exact = false;

        if (len < 8 || strncasecmp(*e, "TYPEJIT_", 8) != 0)
            continue;
        for (size_t i = 0; i < sizeof(known_names) / sizeof(known_names[0]) && !exact; i++) {
            int d = distance(*e, len, known_names[i]);
            exact = strlen(known_names[i]) == len && strncmp(*e, known_names[i], len) == 0;
            if (d < best_d) {
                best_d = d;
                best = known_names[i];
            }
        }
        if (exact)
            continue;
        /* A suggestion only when it is close (an edit for every three characters after the
         * prefix), or when a setting's name begins the name given (TYPEJIT_LOGLEVEL). */
        if (best != NULL && (size_t)best_d * 3 > len - 8 + 1) {
            size_t longest = 0;
            best = NULL;
            for (size_t i = 0; i < sizeof(known_names) / sizeof(known_names[0]); i++) {
                size_t n = strlen(known_names[i]);
                if (n > longest && n < len && strncasecmp(*e, known_names[i], n) == 0) {
                    longest = n;
                    best = known_names[i];
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

/* A whole number from @p lo to @p hi (@p unit, e.g. " of seconds", names what it counts);
 * @p def, with a warning, for anything else. */
static int parse_whole(const char *var, long lo, long hi, long def, const char *unit)
{
    const char *s = getenv(var);
    long v;

    if (s == NULL || *s == '\0')
        return (int)def;
    if (tj_config_parse_long(s, lo, hi, &v))
        return (int)v;
    setting_warn("ignoring %s=\"%s\": expected a whole number%s from %ld to %ld, using %ld", var, s,
                 unit, lo, hi, def);
    return (int)def;
}

static void copy_string(char *dst, size_t len, const char *var, const char *src)
{
    if (strlen(src) >= len) {
        setting_warn("ignoring %s: value longer than %zu characters", var, len - 1);
        return;
    }
    strcpy(dst, src);
}

static void default_cache_dir(tj_config_t *cfg)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n = -1;

    if (xdg != NULL && xdg[0] == '/')
        n = snprintf(cfg->cache_dir, sizeof(cfg->cache_dir), "%s/typejit", xdg);
    else if (home != NULL && home[0] == '/')
        n = snprintf(cfg->cache_dir, sizeof(cfg->cache_dir), "%s/.cache/typejit", home);
    if (n < 0 || (size_t)n >= sizeof(cfg->cache_dir))
        cfg->cache_dir[0] = '\0';
}

/* TYPEJIT_CACHE_PATH: the absolute folders of a ':'-separated list, in order. Empty elements
 * are skipped silently (a trailing ':' is common in shell-built lists); a relative one is
 * dropped with a warning, since it would name a different cache in every working directory. */
static void parse_cache_path(tj_config_t *cfg, const char *s)
{
    size_t at = 0;

    if (strlen(s) >= sizeof(cfg->cache_path)) {
        setting_warn("ignoring TYPEJIT_CACHE_PATH: value longer than %zu characters",
                     sizeof(cfg->cache_path) - 1);
        return;
    }
    while (*s != '\0') {
        size_t n = strcspn(s, ":");
        if (n > 0 && s[0] != '/')
            setting_warn("ignoring \"%.*s\" in TYPEJIT_CACHE_PATH: not an absolute path", (int)n,
                         s);
        else if (n > 0) {
            if (at > 0)
                cfg->cache_path[at++] = ':';
            memcpy(cfg->cache_path + at, s, n);
            at += n;
        }
        s += n;
        if (*s == ':')
            s++;
    }
    cfg->cache_path[at] = '\0';
}

void tj_config_parse(tj_config_t *cfg)
{
    static const choice_t levels[] = {
        {"off", TJ_LOG_OFF},      {"error", TJ_LOG_ERROR}, {"warn", TJ_LOG_WARN},
        {"warning", TJ_LOG_WARN}, {"info", TJ_LOG_INFO},   {"debug", TJ_LOG_DEBUG},
    };
    static const choice_t hosts[] = {
        {"auto", TJ_HOST_AUTO}, {"system", TJ_HOST_SYSTEM}, {"engine", TJ_HOST_ENGINE}};
    static const choice_t jits[] = {
        {"off", TJ_JIT_OFF}, {"auto", TJ_JIT_AUTO}, {"always", TJ_JIT_ALWAYS}};
    static const choice_t caches[] = {
        {"rw", TJ_CACHE_RW}, {"ro", TJ_CACHE_RO}, {"off", TJ_CACHE_OFF}};
    static const choice_t tristates[] = {
        {"auto", TJ_TRI_AUTO}, {"yes", TJ_TRI_YES}, {"no", TJ_TRI_NO}};
    static const choice_t methods[] = {{"auto", TJ_FORCE_AUTO},
                                       {"device", TJ_FORCE_DEVICE},
                                       {"oneshot", TJ_FORCE_ONESHOT},
                                       {"staged", TJ_FORCE_STAGED}};
    const char *s;

    memset(cfg, 0, sizeof(*cfg));
    /* The level first, so that warnings about the other variables obey it. */
    cfg->log_level = (tj_log_level_t)parse_choice("TYPEJIT_LOG", levels, 6, TJ_LOG_WARN);
    tj_log_set_level(cfg->log_level);

    cfg->disable = parse_bool("TYPEJIT_DISABLE", false);
    cfg->stats = parse_bool("TYPEJIT_STATS", false);
    cfg->host = (tj_host_mode_t)parse_choice("TYPEJIT_HOST", hosts, 3, TJ_HOST_AUTO);
    cfg->jit = (tj_jit_mode_t)parse_choice("TYPEJIT_JIT", jits, 3, TJ_JIT_AUTO);
    cfg->cache = (tj_cache_mode_t)parse_choice("TYPEJIT_CACHE", caches, 3, TJ_CACHE_RW);
    cfg->save_source = parse_bool("TYPEJIT_CACHE_SAVE_SOURCE", false);
    cfg->method = (tj_method_setting_t)parse_choice("TYPEJIT_METHOD", methods, 4, TJ_FORCE_AUTO);
    cfg->cuda_aware = (tj_tristate_t)parse_choice("TYPEJIT_CUDA_AWARE", tristates, 3, TJ_TRI_AUTO);
    cfg->stage_contiguous =
        (tj_tristate_t)parse_choice("TYPEJIT_STAGE_CONTIGUOUS", tristates, 3, TJ_TRI_AUTO);
    cfg->jit_sync = parse_bool("TYPEJIT_JIT_SYNC", false);
    cfg->jit_threads = parse_whole("TYPEJIT_JIT_THREADS", 1, 64, 1, "");
    cfg->jit_drain_s = parse_whole("TYPEJIT_JIT_DRAIN", 0, 3600, 2, " of seconds");
    s = getenv("TYPEJIT_SYSTEM_TABLE");
    if (s != NULL && *s != '\0')
        copy_string(cfg->system_table, sizeof(cfg->system_table), "TYPEJIT_SYSTEM_TABLE", s);

    s = getenv("TYPEJIT_ARCH");
    if (s != NULL && *s != '\0') {
        if (tj_config_arch_valid(s))
            copy_string(cfg->arch, sizeof(cfg->arch), "TYPEJIT_ARCH", s);
        else
            setting_warn("ignoring TYPEJIT_ARCH=\"%s\": expected sm_XX or compute_XX (XX the "
                         "compute capability, e.g. sm_90, compute_80, sm_90a), using the "
                         "device's",
                         s);
    }

    /* Absolute paths only, as in TYPEJIT_CACHE_PATH: a relative one names a different cache
     * in every working directory (the ranks of a job may start in different ones, a program
     * may change its own, and `typejit warm` runs elsewhere). */
    s = getenv("TYPEJIT_CACHE_DIR");
    if (s != NULL && *s != '\0' && s[0] != '/') {
        default_cache_dir(cfg);
        setting_warn("ignoring TYPEJIT_CACHE_DIR=\"%s\": not an absolute path (each process "
                     "would resolve it in its own working directory); using %s",
                     s, cfg->cache_dir[0] != '\0' ? cfg->cache_dir : "no disk cache");
    } else if (s != NULL && *s != '\0')
        copy_string(cfg->cache_dir, sizeof(cfg->cache_dir), "TYPEJIT_CACHE_DIR", s);
    if (cfg->cache_dir[0] == '\0')
        default_cache_dir(cfg);
    s = getenv("TYPEJIT_CACHE_PATH");
    if (s != NULL && *s != '\0')
        parse_cache_path(cfg, s);
    s = getenv("TYPEJIT_CACHE_MAX_SIZE");
    if (s != NULL && *s != '\0' && !tj_config_parse_size(s, &cfg->cache_max_size))
        setting_warn("ignoring TYPEJIT_CACHE_MAX_SIZE=\"%s\": expected a size such as 500M or 2G "
                     "(a whole number of bytes, optionally followed by K, M, G or T), using no "
                     "limit",
                     s);
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

tj_config_t tj_config_settings;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void config_init(void)
{
    tj_config_parse(&tj_config_settings);
}

atomic_bool tj_config_ready;

const tj_config_t *tj_config_read(void)
{
    pthread_once(&config_once, config_init);
    atomic_store_explicit(&tj_config_ready, true, memory_order_release);
    return &tj_config_settings;
}

void tj_config_set(const tj_config_t *cfg)
{
    pthread_once(&config_once, config_init);
    tj_config_settings = *cfg;
    tj_log_set_level(cfg->log_level);
}

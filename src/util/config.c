/* Parsing of the TYPEJIT_* environment variables; the README documents each one. */
#include "util/config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *name;
    int value;
} choice_t;

static int parse_choice(const char *var, const choice_t *choices, size_t n, int def)
{
    const char *s = getenv(var);
    if (s == NULL || *s == '\0')
        return def;
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(s, choices[i].name) == 0)
            return choices[i].value;
    tj_log_warn("ignoring %s=\"%s\": not a recognised value, using the default", var, s);
    return def;
}

static const choice_t bool_choices[] = {
    {"1", 1}, {"yes", 1}, {"true", 1}, {"on", 1}, {"0", 0}, {"no", 0}, {"false", 0}, {"off", 0},
};

static bool parse_bool(const char *var, bool def)
{
    return parse_choice(var, bool_choices, sizeof(bool_choices) / sizeof(bool_choices[0]), def);
}

static void copy_string(char *dst, size_t len, const char *var, const char *src)
{
    if (strlen(src) >= len) {
        tj_log_warn("ignoring %s: value longer than %zu characters", var, len - 1);
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

void tj_config_parse(tj_config_t *cfg)
{
    static const choice_t levels[] = {
        {"off", TJ_LOG_OFF},      {"error", TJ_LOG_ERROR}, {"warn", TJ_LOG_WARN},
        {"warning", TJ_LOG_WARN}, {"info", TJ_LOG_INFO},   {"debug", TJ_LOG_DEBUG},
    };
    static const choice_t hosts[] = {{"system", TJ_HOST_SYSTEM}, {"engine", TJ_HOST_ENGINE}};
    static const choice_t jits[] = {
        {"off", TJ_JIT_OFF}, {"auto", TJ_JIT_AUTO}, {"always", TJ_JIT_ALWAYS}};
    static const choice_t caches[] = {
        {"rw", TJ_CACHE_RW}, {"ro", TJ_CACHE_RO}, {"off", TJ_CACHE_OFF}};
    const char *s;

    memset(cfg, 0, sizeof(*cfg));
    /* The level first, so that warnings about the other variables obey it. */
    cfg->log_level = (tj_log_level_t)parse_choice("TYPEJIT_LOG", levels, 6, TJ_LOG_WARN);
    tj_log_set_level(cfg->log_level);

    cfg->disable = parse_bool("TYPEJIT_DISABLE", false);
    cfg->stats = parse_bool("TYPEJIT_STATS", false);
    cfg->host = (tj_host_mode_t)parse_choice("TYPEJIT_HOST", hosts, 2, TJ_HOST_SYSTEM);
    cfg->jit = (tj_jit_mode_t)parse_choice("TYPEJIT_JIT", jits, 3, TJ_JIT_AUTO);
    cfg->cache = (tj_cache_mode_t)parse_choice("TYPEJIT_CACHE", caches, 3, TJ_CACHE_RW);
    cfg->save_source = parse_bool("TYPEJIT_CACHE_SAVE_SOURCE", false);

    s = getenv("TYPEJIT_ARCH");
    if (s != NULL && *s != '\0') {
        if (strncmp(s, "sm_", 3) == 0 || strncmp(s, "compute_", 8) == 0)
            copy_string(cfg->arch, sizeof(cfg->arch), "TYPEJIT_ARCH", s);
        else
            tj_log_warn("ignoring TYPEJIT_ARCH=\"%s\": expected sm_XX or compute_XX", s);
    }

    s = getenv("TYPEJIT_CACHE_DIR");
    if (s != NULL && *s != '\0')
        copy_string(cfg->cache_dir, sizeof(cfg->cache_dir), "TYPEJIT_CACHE_DIR", s);
    if (cfg->cache_dir[0] == '\0')
        default_cache_dir(cfg);
}

static tj_config_t config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void config_init(void)
{
    tj_config_parse(&config);
}

const tj_config_t *tj_config(void)
{
    pthread_once(&config_once, config_init);
    return &config;
}

void tj_config_set(const tj_config_t *cfg)
{
    pthread_once(&config_once, config_init);
    config = *cfg;
    tj_log_set_level(cfg->log_level);
}

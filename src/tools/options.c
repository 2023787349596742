/* SPDX-License-Identifier: BSD-3-Clause */
/* Command-line options of the `typejit` commands: `--name VALUE` and `--name=VALUE` alike, as
 * getopt_long reads them, and the values several commands take. */
#include "options.h"

#include <stdio.h>
#include <string.h>

#include "jit/nvrtc.h"
#include "util/config.h"

bool tj_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                  const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);

    if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
        return false;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return true;
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "typejit %s: %s needs a value\n", cmd, name);
        *value = NULL;
        return true;
    }
    *value = argv[++*i];
    return true;
}

bool tj_opt_flag(const char *cmd, char **argv, int i, const char *name, bool *bad)
{
    size_t n = strlen(name);

    if (strncmp(argv[i], name, n) != 0)
        return false;
    if (argv[i][n] == '\0')
        return true;
    if (argv[i][n] != '=')
        return false;
    fprintf(stderr, "typejit %s: %s takes no value\n", cmd, name);
    *bad = true;
    return true;
}

bool tj_opt_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

/* A whole decimal number in [min, max] for option @p opt, or false after saying what is wrong. */
bool tj_opt_number(const char *cmd, const char *opt, const char *text, long min, long max,
                   long *out)
{
    if (tj_config_parse_long(text, min, max, out))
        return true;
    fprintf(stderr, "typejit %s: %s wants a whole number from %ld to %ld, not \"%s\"\n", cmd, opt,
            min, max, text);
    return false;
}

/* A target this NVRTC can compile for, or false after one line that says why not (a malformed
 * name, or an arch this NVRTC dropped or never had). Without NVRTC only the form is checked. */
bool tj_opt_target(const char *cmd, const char *arch)
{
    char why[256];

    if (!tj_config_arch_valid(arch)) {
        fprintf(stderr,
                "typejit %s: \"%s\" is not a target: write sm_XX or compute_XX, XX the compute "
                "capability (sm_90, compute_80, sm_90a)\n",
                cmd, arch);
        return false;
    }
    if (tj_nvrtc_check_target(arch, why, sizeof(why)) == TJ_ERR_UNSUPPORTED) {
        fprintf(stderr, "typejit %s: %s\n", cmd, why);
        return false;
    }
    return true;
}

const char *tj_opt_cache_dir(const char *given)
{
    return given != NULL ? given : tj_config()->cache_dir;
}

/* Split a comma-separated list of targets, each checked by target_ok; -1 after a message. */
int tj_opt_targets(const char *cmd, const char *list, char (*archs)[32], int max)
{
    int n = 0;
    const char *s = list;

    if (*s == '\0') {
        fprintf(stderr, "typejit %s: --arch needs at least one target\n", cmd);
        return -1;
    }
    while (*s) {
        size_t len = strcspn(s, ",");
        if (n == max) {
            fprintf(stderr, "typejit %s: more than %d targets\n", cmd, max);
            return -1;
        }
        if (len == 0 || len >= 32) {
            fprintf(stderr, "typejit %s: --arch wants sm_XX or compute_XX, comma-separated\n", cmd);
            return -1;
        }
        memcpy(archs[n], s, len);
        archs[n][len] = '\0';
        if (!tj_opt_target(cmd, archs[n]))
            return -1;
        n++;
        s += len;
        if (*s == ',' && *++s == '\0') {
            fprintf(stderr, "typejit %s: --arch list ends in a comma\n", cmd);
            return -1;
        }
    }
    return n;
}

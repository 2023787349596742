/* SPDX-License-Identifier: BSD-3-Clause */
/* The system table's text format (parser, validator, writer) and its interpolation. A table is
 * untrusted input: a file anyone could have edited, so the parser checks every field and
 * bound and rejects the whole file on the first fault. */
#include "move/systable.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/common.h"
#include "util/log.h"

#define MAX_FILE  (1 << 20) /* bytes: a full table is about 10 KiB */
#define MAX_LINE  512
#define MAX_BYTES ((int64_t)1 << 40) /* a row's size: 1 TiB */
#define MAX_US    1e9                /* a row's time: 1000 s */
#define MAX_RUN   ((int64_t)1 << 30)

static const char *const quantity_names[TJ_Q_COUNT] = {
    "pack_device", "pack_mapped", "unpack_device", "unpack_mapped",
    "copy_d2h",    "copy_h2d",    "pingpong_host", "pingpong_device",
};

const char *tj_systable_quantity_name(tj_quantity_t q)
{
    return (unsigned)q < TJ_Q_COUNT ? quantity_names[q] : NULL;
}

static bool is_kernel(tj_quantity_t q)
{
    return q <= TJ_Q_UNPACK_MAPPED;
}

static bool is_pingpong(tj_quantity_t q)
{
    return q == TJ_Q_PINGPONG_HOST || q == TJ_Q_PINGPONG_DEVICE;
}

static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (why == NULL || len == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

const tj_curve_t *tj_systable_find(const tj_systable_t *table, tj_quantity_t q, int64_t param)
{
    for (int i = 0; i < table->ncurves; i++)
        if (table->curves[i].quantity == q && table->curves[i].param == param)
            return &table->curves[i];
    return NULL;
}

tj_curve_t *tj_systable_add(tj_systable_t *table, tj_quantity_t q, int64_t param)
{
    tj_curve_t *c;

    if (table->ncurves >= TJ_SYSTABLE_MAX || tj_systable_find(table, q, param) != NULL)
        return NULL;
    c = &table->curves[table->ncurves++];
    memset(c, 0, sizeof(*c));
    c->quantity = q;
    c->param = param;
    return c;
}

/* --- validation --------------------------------------------------------------------------- */

static bool printable(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            return false;
    return true;
}

tj_status_t tj_systable_check(const tj_systable_t *t, char *why, size_t why_len)
{
    if (t->device[0] == '\0' || !printable(t->device) || !printable(t->typejit) ||
        !printable(t->nvrtc) || !printable(t->date)) {
        say(why, why_len, "device, typejit, nvrtc or date missing or not printable");
        return TJ_ERR_INVALID;
    }
    if (t->sm < 10 || t->sm > 999 || t->driver < 1000 || t->driver > 999999) {
        say(why, why_len, "sm %d or driver %d out of range", t->sm, t->driver);
        return TJ_ERR_INVALID;
    }
    if (!(t->launch_us >= 0 && t->launch_us < MAX_US)) {
        say(why, why_len, "launch_us out of range");
        return TJ_ERR_INVALID;
    }
    if (t->ncurves < 0 || t->ncurves > TJ_SYSTABLE_MAX) {
        say(why, why_len, "too many tables");
        return TJ_ERR_INVALID;
    }
    for (int i = 0; i < t->ncurves; i++) {
        const tj_curve_t *c = &t->curves[i];
        const char *name = tj_systable_quantity_name(c->quantity);
        if (name == NULL) {
            say(why, why_len, "table %d: unknown quantity", i + 1);
            return TJ_ERR_INVALID;
        }
        if ((is_kernel(c->quantity) && (c->param < 1 || c->param > MAX_RUN)) ||
            (is_pingpong(c->quantity) && c->param != TJ_PEER_NODE && c->param != TJ_PEER_NET) ||
            (!is_kernel(c->quantity) && !is_pingpong(c->quantity) && c->param != 0)) {
            say(why, why_len, "table %s: bad run or peer", name);
            return TJ_ERR_INVALID;
        }
        if (c->n < 1 || c->n > TJ_SYSTABLE_MAX_ROWS) {
            say(why, why_len, "table %s: %d rows (1 to %d allowed)", name, c->n,
                TJ_SYSTABLE_MAX_ROWS);
            return TJ_ERR_INVALID;
        }
        for (int r = 0; r < c->n; r++) {
            if (c->bytes[r] < 1 || c->bytes[r] > MAX_BYTES ||
                (r > 0 && c->bytes[r] <= c->bytes[r - 1])) {
                say(why, why_len, "table %s: sizes must increase, from 1 B to 1 TiB", name);
                return TJ_ERR_INVALID;
            }
            if (!(c->us[r] >= 0 && c->us[r] < MAX_US)) {
                say(why, why_len, "table %s: time out of range", name);
                return TJ_ERR_INVALID;
            }
        }
        for (int j = 0; j < i; j++)
            if (t->curves[j].quantity == c->quantity && t->curves[j].param == c->param) {
                say(why, why_len, "table %s given twice", name);
                return TJ_ERR_INVALID;
            }
    }
    /* Every method must be predictable from the table alone; ping-pong may be missing (one
     * rank measured), and the model then compares the device side only. */
    for (int q = 0; q < TJ_Q_COUNT; q++) {
        bool have = false;
        if (is_pingpong((tj_quantity_t)q))
            continue;
        for (int i = 0; i < t->ncurves; i++)
            have |= t->curves[i].quantity == (tj_quantity_t)q;
        if (!have) {
            say(why, why_len, "no %s table", quantity_names[q]);
            return TJ_ERR_INVALID;
        }
    }
    return TJ_OK;
}

/* --- parsing -------------------------------------------------------------------------------- */

static bool parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    long long v;

    if (*s == '\0' || *s == '+' || *s == ' ')
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

static bool parse_us(const char *s, double *out)
{
    char *end;
    double v;

    /* Decimal only: strtod would also take hex floats, "inf" and "nan". */
    if (*s == '\0' || strspn(s, "0123456789.eE+-") != strlen(s))
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v >= 0 && v < MAX_US))
        return false;
    *out = v;
    return true;
}

static bool copy_value(char *dst, size_t len, const char *src)
{
    if (strlen(src) >= len || !printable(src))
        return false;
    strcpy(dst, src);
    return true;
}

/* One `table NAME [run=N|peer=node|net]` line. */
static tj_curve_t *open_table(tj_systable_t *t, char *rest, char *why, size_t why_len)
{
    char *name = rest, *attr = strchr(rest, ' ');
    int64_t param = 0;
    int q;

    if (attr != NULL)
        *attr++ = '\0';
    for (q = 0; q < TJ_Q_COUNT; q++)
        if (strcmp(name, quantity_names[q]) == 0)
            break;
    if (q == TJ_Q_COUNT) {
        say(why, why_len, "unknown table \"%.40s\"", name);
        return NULL;
    }
    if (is_kernel((tj_quantity_t)q)) {
        if (attr == NULL || strncmp(attr, "run=", 4) != 0 ||
            !parse_i64(attr + 4, 1, MAX_RUN, &param)) {
            say(why, why_len, "table %s needs run=BYTES", name);
            return NULL;
        }
    } else if (is_pingpong((tj_quantity_t)q)) {
        if (attr != NULL && strcmp(attr, "peer=node") == 0)
            param = TJ_PEER_NODE;
        else if (attr != NULL && strcmp(attr, "peer=net") == 0)
            param = TJ_PEER_NET;
        else {
            say(why, why_len, "table %s needs peer=node or peer=net", name);
            return NULL;
        }
    } else if (attr != NULL) {
        say(why, why_len, "table %s takes no attribute", name);
        return NULL;
    }
    tj_curve_t *c = tj_systable_add(t, (tj_quantity_t)q, param);
    if (c == NULL)
        say(why, why_len, "table %s given twice, or more than %d tables", name, TJ_SYSTABLE_MAX);
    return c;
}

/* One line, without its newline; comments and blank lines are already gone. */
static tj_status_t parse_line(tj_systable_t *t, char *line, tj_curve_t **cur, unsigned *seen,
                              char *why, size_t why_len)
{
    static const char *const keys[] = {"typejit", "device", "sm",         "driver",
                                       "nvrtc",   "date",   "cuda_aware", "launch_us"};
    char *sp = strchr(line, ' ');
    char *value = sp != NULL ? sp + 1 : NULL;
    int64_t v;
    int k;

    if (sp != NULL)
        *sp = '\0';
    if (strcmp(line, "table") == 0) {
        if (value == NULL) {
            say(why, why_len, "table without a name");
            return TJ_ERR_INVALID;
        }
        *cur = open_table(t, value, why, why_len);
        return *cur != NULL ? TJ_OK : TJ_ERR_INVALID;
    }
    if (line[0] >= '0' && line[0] <= '9') { /* a row: BYTES MICROSECONDS */
        tj_curve_t *c = *cur;
        if (c == NULL) {
            say(why, why_len, "a row before any table");
            return TJ_ERR_INVALID;
        }
        if (value == NULL || strchr(value, ' ') != NULL) {
            say(why, why_len, "a row is BYTES MICROSECONDS");
            return TJ_ERR_INVALID;
        }
        if (c->n >= TJ_SYSTABLE_MAX_ROWS) {
            say(why, why_len, "more than %d rows in one table", TJ_SYSTABLE_MAX_ROWS);
            return TJ_ERR_INVALID;
        }
        if (!parse_i64(line, 1, MAX_BYTES, &c->bytes[c->n]) || !parse_us(value, &c->us[c->n])) {
            say(why, why_len, "bad row \"%.40s %.40s\"", line, value);
            return TJ_ERR_INVALID;
        }
        if (c->n > 0 && c->bytes[c->n] <= c->bytes[c->n - 1]) {
            say(why, why_len, "sizes must increase within a table");
            return TJ_ERR_INVALID;
        }
        c->n++;
        return TJ_OK;
    }
    if (*cur != NULL) {
        say(why, why_len, "key \"%.40s\" after the first table", line);
        return TJ_ERR_INVALID;
    }
    for (k = 0; k < (int)TJ_ARRAY_SIZE(keys); k++)
        if (strcmp(line, keys[k]) == 0)
            break;
    if (k == (int)TJ_ARRAY_SIZE(keys)) {
        say(why, why_len, "unknown key \"%.40s\"", line);
        return TJ_ERR_INVALID;
    }
    if (*seen & (1u << k)) {
        say(why, why_len, "key %s given twice", keys[k]);
        return TJ_ERR_INVALID;
    }
    *seen |= 1u << k;
    if (value == NULL)
        value = line + strlen(line); /* an empty value, refused below where it matters */
    bool ok = true;
    switch (k) {
    case 0:
        ok = copy_value(t->typejit, sizeof(t->typejit), value);
        break;
    case 1:
        ok = value[0] != '\0' && copy_value(t->device, sizeof(t->device), value);
        break;
    case 2:
        if ((ok = parse_i64(value, 10, 999, &v)))
            t->sm = (int)v;
        break;
    case 3:
        if ((ok = parse_i64(value, 1000, 999999, &v)))
            t->driver = (int)v;
        break;
    case 4:
        ok = copy_value(t->nvrtc, sizeof(t->nvrtc), value);
        break;
    case 5:
        ok = copy_value(t->date, sizeof(t->date), value);
        break;
    case 6:
        ok = strcmp(value, "yes") == 0 || strcmp(value, "no") == 0;
        t->cuda_aware = strcmp(value, "yes") == 0;
        break;
    default:
        ok = parse_us(value, &t->launch_us);
        break;
    }
    if (!ok) {
        say(why, why_len, "bad value of %s", keys[k]);
        return TJ_ERR_INVALID;
    }
    return TJ_OK;
}

tj_status_t tj_systable_parse(const char *text, size_t len, tj_systable_t *table, char *why,
                              size_t why_len)
{
    char line[MAX_LINE + 1], magic[64];
    tj_systable_t *t;
    tj_curve_t *cur = NULL;
    unsigned seen = 0;
    size_t pos = 0;
    int lineno = 0;
    tj_status_t st = TJ_OK;

    if (len > MAX_FILE) {
        say(why, why_len, "larger than %d bytes", MAX_FILE);
        return TJ_ERR_INVALID;
    }
    if ((t = calloc(1, sizeof(*t))) == NULL)
        return TJ_ERR_NOMEM;
    while (pos < len && st == TJ_OK) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = (nl != NULL ? (size_t)(nl - text) : len) - pos;
        lineno++;
        if (n > MAX_LINE) {
            say(why, why_len, "line %d: longer than %d characters", lineno, MAX_LINE);
            st = TJ_ERR_INVALID;
            break;
        }
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos += n + 1;
        if (memchr(line, '\0', n) != NULL || memchr(line, '\r', n) != NULL ||
            memchr(line, '\t', n) != NULL) {
            say(why, why_len, "line %d: NUL, CR or TAB character", lineno);
            st = TJ_ERR_INVALID;
            break;
        }
        if (lineno == 1) {
            /* The magic and the format version, nothing else. */
            int version;
            char rest;
            if (sscanf(line, "%63s %d%c", magic, &version, &rest) != 2 ||
                strcmp(magic, TJ_SYSTABLE_MAGIC) != 0) {
                say(why, why_len, "line 1: not a typejit system table (expected \"%s %d\")",
                    TJ_SYSTABLE_MAGIC, TJ_SYSTABLE_VERSION);
                st = TJ_ERR_INVALID;
            } else if (version != TJ_SYSTABLE_VERSION) {
                say(why, why_len, "format version %d, this typejit reads version %d", version,
                    TJ_SYSTABLE_VERSION);
                st = TJ_ERR_INVALID;
            }
            continue;
        }
        if (line[0] == '#' || line[0] == '\0')
            continue;
        if (line[0] == ' ' || line[n - 1] == ' ' || strstr(line, "  ") != NULL) {
            say(why, why_len, "line %d: fields are separated by exactly one space", lineno);
            st = TJ_ERR_INVALID;
            break;
        }
        if ((st = parse_line(t, line, &cur, &seen, why, why_len)) != TJ_OK) {
            /* Prefix the line number to the reason. */
            char reason[256];
            snprintf(reason, sizeof(reason), "%s", why != NULL ? why : "");
            say(why, why_len, "line %d: %s", lineno, reason);
        }
    }
    if (st == TJ_OK && lineno == 0) {
        say(why, why_len, "empty file");
        st = TJ_ERR_INVALID;
    }
    if (st == TJ_OK && (seen & 0x3f) != 0x3f) { /* typejit, device, sm, driver, nvrtc, date */
        say(why, why_len, "a key of typejit, device, sm, driver, nvrtc, date is missing");
        st = TJ_ERR_INVALID;
    }
    if (st == TJ_OK && !(seen & (1u << 7))) {
        say(why, why_len, "launch_us is missing");
        st = TJ_ERR_INVALID;
    }
    if (st == TJ_OK)
        st = tj_systable_check(t, why, why_len);
    if (st == TJ_OK)
        *table = *t;
    free(t);
    return st;
}

tj_status_t tj_systable_load(const char *path, tj_systable_t *table, char *why, size_t why_len)
{
    struct stat sb;
    char *text;
    ssize_t got;
    size_t len;
    tj_status_t st;
    int fd;

    /* Non-blocking, so that a FIFO in its place cannot hang the process; it is refused below. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT)
            return TJ_ERR_NOT_FOUND;
        say(why, why_len, "cannot open: %s", strerror(errno));
        return TJ_ERR_IO;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > MAX_FILE) {
        say(why, why_len, "not a regular file of at most %d bytes", MAX_FILE);
        close(fd);
        return TJ_ERR_INVALID;
    }
    len = (size_t)sb.st_size;
    if ((text = malloc(len + 1)) == NULL) {
        close(fd);
        return TJ_ERR_NOMEM;
    }
    got = read(fd, text, len + 1);
    close(fd);
    if (got < 0 || (size_t)got != len) {
        say(why, why_len, "short read (the file changed while read)");
        free(text);
        return TJ_ERR_IO;
    }
    st = tj_systable_parse(text, len, table, why, why_len);
    free(text);
    return st;
}

/* --- writing -------------------------------------------------------------------------------- */

static void mkdirs(const char *path)
{
    char dir[4096];
    size_t n = strlen(path);

    if (n >= sizeof(dir))
        return;
    memcpy(dir, path, n + 1);
    /* Every proper prefix that ends before a '/', then the directory of the file itself. The
     * final open reports what fails on the way. */
    for (char *p = dir + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return;
        *p = '/';
    }
}

tj_status_t tj_systable_write(const tj_systable_t *t, const char *path)
{
    char tmp[4096];
    FILE *f;
    int fd, n;
    bool ok;

    n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return TJ_ERR_INVALID;
    mkdirs(path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
        tj_log_error("cannot write %s: %s", tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
        return TJ_ERR_IO;
    }
    fprintf(f, "%s %d\n", TJ_SYSTABLE_MAGIC, TJ_SYSTABLE_VERSION);
    fprintf(
        f,
        "# Measured by `typejit measure`; typejit's docs/system-table.md documents this format.\n");
    fprintf(f, "# Rows are BYTES MICROSECONDS.\n");
    fprintf(f, "typejit %s\ndevice %s\nsm %d\ndriver %d\nnvrtc %s\ndate %s\ncuda_aware %s\n",
            t->typejit, t->device, t->sm, t->driver, t->nvrtc, t->date,
            t->cuda_aware ? "yes" : "no");
    fprintf(f, "launch_us %.3f\n", t->launch_us);
    for (int i = 0; i < t->ncurves; i++) {
        const tj_curve_t *c = &t->curves[i];
        fprintf(f, "\ntable %s", quantity_names[c->quantity]);
        if (is_kernel(c->quantity))
            fprintf(f, " run=%lld", (long long)c->param);
        else if (is_pingpong(c->quantity))
            fprintf(f, " peer=%s", c->param == TJ_PEER_NODE ? "node" : "net");
        fputc('\n', f);
        for (int r = 0; r < c->n; r++)
            fprintf(f, "%lld %.3f\n", (long long)c->bytes[r], c->us[r]);
    }
    ok = !ferror(f);
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        tj_log_error("cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return TJ_ERR_IO;
    }
    return TJ_OK;
}

/* --- interpolation -------------------------------------------------------------------------- */

double tj_curve_eval(const tj_curve_t *c, int64_t bytes)
{
    int i;

    if (c->n < 1)
        return 0;
    if (bytes <= c->bytes[0])
        return c->us[0];
    if (bytes >= c->bytes[c->n - 1])
        return c->us[c->n - 1] * ((double)bytes / (double)c->bytes[c->n - 1]);
    for (i = 1; i < c->n - 1 && c->bytes[i] < bytes; i++)
        ;
    double x0 = log((double)c->bytes[i - 1]), x1 = log((double)c->bytes[i]);
    double f = (log((double)bytes) - x0) / (x1 - x0);
    return c->us[i - 1] + f * (c->us[i] - c->us[i - 1]);
}

double tj_systable_kernel(const tj_systable_t *t, tj_quantity_t q, int64_t run, int64_t bytes)
{
    const tj_curve_t *below = NULL, *above = NULL;

    /* The nearest measured runs on each side of `run`. */
    for (int i = 0; i < t->ncurves; i++) {
        const tj_curve_t *c = &t->curves[i];
        if (c->quantity != q)
            continue;
        if (c->param <= run && (below == NULL || c->param > below->param))
            below = c;
        if (c->param >= run && (above == NULL || c->param < above->param))
            above = c;
    }
    if (below == NULL && above == NULL)
        return -1;
    if (below == NULL || above == NULL || below == above)
        return tj_curve_eval(below != NULL ? below : above, bytes);
    double f = (log((double)run) - log((double)below->param)) /
               (log((double)above->param) - log((double)below->param));
    double a = tj_curve_eval(below, bytes), b = tj_curve_eval(above, bytes);
    return a + f * (b - a);
}

int tj_systable_file_name(const char *device, int sm, int driver, char *buf, size_t len)
{
    char name[128];
    size_t n = 0;

    /* Runs of other characters become one '_', and none leads or trails. */
    for (const char *p = device; *p != '\0' && n < sizeof(name) - 1; p++) {
        char ch = *p;
        bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
        if (keep)
            name[n++] = ch;
        else if (n > 0 && name[n - 1] != '_')
            name[n++] = '_';
    }
    while (n > 0 && name[n - 1] == '_')
        n--;
    name[n] = '\0';
    /* A name of dots alone would make a path component "." or "..". */
    if (n == 0 || strspn(name, ".") == n)
        snprintf(name, sizeof(name), "device");
    return snprintf(buf, len, "sm_%d-%s-%d.txt", sm, name, driver);
}

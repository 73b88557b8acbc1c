/* json.c: streaming JSON writer. Strings are escaped per RFC 8259 and
 * bytes that are not valid UTF-8 (environment values may hold anything)
 * become U+FFFD, so the output always parses. */
#include "shmem_config.h"

#include <stddef.h>
#include <stdlib.h>

static void indent(struct sc_json *j)
{
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->out);
}

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_length(const unsigned char *s)
{
    size_t n;
    unsigned min;
    unsigned cp;
    if (s[0] < 0x80) return 1;
    if ((s[0] & 0xE0) == 0xC0) { n = 2; min = 0x80; cp = s[0] & 0x1F; }
    else if ((s[0] & 0xF0) == 0xE0) { n = 3; min = 0x800; cp = s[0] & 0x0F; }
    else if ((s[0] & 0xF8) == 0xF0) { n = 4; min = 0x10000; cp = s[0] & 0x07; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0; /* also stops at the terminating NUL */
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

static void write_string(FILE *out, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    fputc('"', out);
    while (*s) {
        switch (*s) {
        case '"': fputs("\\\"", out); s++; continue;
        case '\\': fputs("\\\\", out); s++; continue;
        case '\n': fputs("\\n", out); s++; continue;
        case '\r': fputs("\\r", out); s++; continue;
        case '\t': fputs("\\t", out); s++; continue;
        default: break;
        }
        if (*s < 0x20) {
            fprintf(out, "\\u%04x", *s);
            s++;
            continue;
        }
        size_t n = utf8_length(s);
        if (n == 0) {
            fputs("\\ufffd", out);
            s++;
            continue;
        }
        fwrite(s, 1, n, out);
        s += n;
    }
    fputc('"', out);
}

/* Separator, indentation and key before a value. */
static void member(struct sc_json *j, const char *key)
{
    if (j->depth > 0) {
        if (j->members[j->depth - 1]++) fputc(',', j->out);
        indent(j);
    }
    if (key) {
        write_string(j->out, key);
        fputs(": ", j->out);
    }
}

void sc_json_begin(struct sc_json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
}

void sc_json_open(struct sc_json *j, const char *key, char bracket)
{
    member(j, key);
    fputc(bracket, j->out);
    if (j->depth == SC_JSON_MAX_DEPTH) { /* a bug in this tool, not in the input */
        fputs("shmem-config: JSON nested too deeply\n", stderr);
        abort();
    }
    j->members[j->depth++] = 0;
}

void sc_json_close(struct sc_json *j, char bracket)
{
    int had_members = j->members[j->depth - 1] > 0;
    j->depth--;
    if (had_members) indent(j);
    fputc(bracket == '{' ? '}' : ']', j->out);
}

void sc_json_str(struct sc_json *j, const char *key, const char *value)
{
    member(j, key);
    if (value)
        write_string(j->out, value);
    else
        fputs("null", j->out);
}

void sc_json_int(struct sc_json *j, const char *key, long long value)
{
    member(j, key);
    fprintf(j->out, "%lld", value);
}

void sc_json_uint(struct sc_json *j, const char *key, unsigned long long value)
{
    member(j, key);
    fprintf(j->out, "%llu", value);
}

void sc_json_bool(struct sc_json *j, const char *key, int value)
{
    member(j, key);
    fputs(value ? "true" : "false", j->out);
}

void sc_json_null(struct sc_json *j, const char *key)
{
    member(j, key);
    fputs("null", j->out);
}

void sc_json_end(struct sc_json *j)
{
    fputc('\n', j->out);
    fflush(j->out);
}

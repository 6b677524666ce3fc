/* ranks.c - the serving ranks' reports (cli/ranks.h).
 *
 * The report is text, a line each:
 *   s BATCHES ITEMS BYTES_IN BYTES_OUT BUSY_NS SERIAL LINE \t KIND \t SMAP \t NAME
 *   e STAGE ITEMS START_NS DUR_NS
 *   d DROPPED
 * (the strings with tabs and newlines made spaces). */
#include "ranks.h"

#include <stdlib.h>
#include <string.h>

/* Appends s to the growing text *t (length *n, capacity *cap); false when
 * memory runs out. */
static bool put(char **t, size_t *n, size_t *cap, const char *s, size_t len)
{
    if (*n + len + 1 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (*n + len + 1 > c) c *= 2;
        char *m = realloc(*t, c);
        if (!m) return false;
        *t = m, *cap = c;
    }
    memcpy(*t + *n, s, len);
    *n += len;
    (*t)[*n] = '\0';
    return true;
}

/* s without tabs and newlines (they separate the report's fields). */
static bool put_field(char **t, size_t *n, size_t *cap, const char *s)
{
    size_t at = *n;
    if (!put(t, n, cap, s, strlen(s))) return false;
    for (size_t i = at; i < *n; i++)
        if ((*t)[i] == '\t' || (*t)[i] == '\n' || (*t)[i] == '\r') (*t)[i] = ' ';
    return true;
}

char *cli_ranks_encode(const stc_remote_server *s, unsigned long long t0_ns, size_t *len)
{
    char *t = NULL, line[160];
    size_t n = 0, cap = 0;
    bool ok = put(&t, &n, &cap, "", 0);
    for (size_t i = 0; ok && i < stc_remote_server_stage_count(s); i++) {
        stc_remote_stage_stats st = stc_remote_server_stage(s, i);
        int k = snprintf(line, sizeof line, "s %lld %lld %lld %lld %lld %d %d\t", st.batches, st.items, st.bytes_in,
                         st.bytes_out, (long long)(st.busy_ms * 1e6 + 0.5), st.serial, st.line);
        ok = put(&t, &n, &cap, line, (size_t)k) && put_field(&t, &n, &cap, st.kind) && put(&t, &n, &cap, "\t", 1) &&
             put_field(&t, &n, &cap, st.smap) && put(&t, &n, &cap, "\t", 1) && put_field(&t, &n, &cap, st.name) &&
             put(&t, &n, &cap, "\n", 1);
    }
    for (size_t i = 0; ok && i < stc_remote_server_span_count(s); i++) {
        stc_remote_span sp = stc_remote_server_span(s, i);
        long long start = sp.start_ns >= t0_ns ? (long long)(sp.start_ns - t0_ns) : 0;
        int k = snprintf(line, sizeof line, "e %zu %lld %lld %lld\n", sp.stage, sp.items, start,
                         (long long)(sp.end_ns - sp.start_ns));
        ok = put(&t, &n, &cap, line, (size_t)k);
    }
    if (ok) {
        int k = snprintf(line, sizeof line, "d %lld\n", stc_remote_server_spans_dropped(s));
        ok = put(&t, &n, &cap, line, (size_t)k);
    }
    if (!ok) {
        free(t);
        return NULL;
    }
    *len = n;
    return t;
}

/* The next number of the line at *p (ending before end); false if none. */
static bool num(const char **p, const char *end, long long *v)
{
    while (*p < end && **p == ' ') (*p)++;
    char *after;
    if (*p >= end || !((**p >= '0' && **p <= '9') || **p == '-')) return false;
    *v = strtoll(*p, &after, 10);
    if (after > end || after == *p) return false;
    *p = after;
    return true;
}

/* The next tab-ended (or line-ended) field of [*p, end), malloc'd. */
static char *field(const char **p, const char *end)
{
    const char *q = *p;
    while (q < end && *q != '\t') q++;
    char *s = malloc((size_t)(q - *p) + 1);
    if (s) {
        memcpy(s, *p, (size_t)(q - *p));
        s[q - *p] = '\0';
    }
    *p = q < end ? q + 1 : q;
    return s;
}

static int decode_line(cli_rank_report *rr, const char *p, const char *end, size_t *scap, size_t *ecap)
{
    char tag = *p++;
    long long v[7];
    if (tag == 's') {
        for (int i = 0; i < 7; i++)
            if (!num(&p, end, &v[i])) return -1;
        if (p >= end || *p != '\t') return -1;
        p++;
        if (rr->nstages == *scap) {
            size_t c = *scap ? 2 * *scap : 8;
            cli_rank_stage *m = realloc(rr->stages, c * sizeof *m);
            if (!m) return -1;
            rr->stages = m, *scap = c;
        }
        cli_rank_stage *st = &rr->stages[rr->nstages];
        *st = (cli_rank_stage){.batches = v[0], .items = v[1], .bytes_in = v[2], .bytes_out = v[3],
                               .busy_ns = v[4], .serial = v[5] != 0, .line = (int)v[6]};
        st->kind = field(&p, end), st->smap = field(&p, end), st->name = field(&p, end);
        rr->nstages++;
        return st->kind && st->smap && st->name ? 0 : -1;
    }
    if (tag == 'e') {
        for (int i = 0; i < 4; i++)
            if (!num(&p, end, &v[i])) return -1;
        if (v[0] < 0 || (size_t)v[0] >= rr->nstages) return -1;
        if (rr->nspans == *ecap) {
            size_t c = *ecap ? 2 * *ecap : 256;
            cli_rank_span *m = realloc(rr->spans, c * sizeof *m);
            if (!m) return -1;
            rr->spans = m, *ecap = c;
        }
        rr->spans[rr->nspans++] = (cli_rank_span){(size_t)v[0], v[1], v[2], v[3]};
        return 0;
    }
    if (tag == 'd') return num(&p, end, &rr->dropped) ? 0 : -1;
    return -1;
}

int cli_ranks_decode(cli_rank_report *rr, const char *text, size_t len)
{
    *rr = (cli_rank_report){.came = true};
    size_t scap = 0, ecap = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || decode_line(rr, p, nl, &scap, &ecap) != 0) return -1;
        p = nl + 1;
    }
    return 0;
}

void cli_ranks_free(cli_rank_report *rr)
{
    for (size_t i = 0; i < rr->nstages; i++) free(rr->stages[i].name), free(rr->stages[i].kind), free(rr->stages[i].smap);
    free(rr->stages);
    free(rr->spans);
    *rr = (cli_rank_report){0};
}

void cli_ranks_print_stats(FILE *f, int rank, const cli_rank_report *rr)
{
    for (size_t i = 0; i < rr->nstages; i++) {
        const cli_rank_stage *st = &rr->stages[i];
        fprintf(f, "stats: rank %d: stage %s%s%s: batches %lld, items %lld, bytes sent %lld, received %lld, busy %.3f ms\n",
                rank, st->name, *st->smap ? " at " : "", st->smap, st->batches, st->items, st->bytes_in, st->bytes_out,
                (double)st->busy_ns / 1e6);
    }
}

void cli_ranks_print_profile(FILE *f, int rank, const cli_rank_report *rr)
{
    long long batches = 0, busy = 0, in = 0, out = 0;
    int wname = 5, wkind = 4;
    for (size_t i = 0; i < rr->nstages; i++) {
        const cli_rank_stage *st = &rr->stages[i];
        batches += st->batches, busy += st->busy_ns, in += st->bytes_in, out += st->bytes_out;
        int nl = (int)strlen(st->name), kl = (int)strlen(st->kind);
        if (nl > wname) wname = nl;
        if (kl > wkind) wkind = kl;
    }
    fprintf(f, "\nrank %d: answered %lld batch%s of rank 0's, busy %.3f ms (bytes in %lld, out %lld)\n", rank, batches,
            batches == 1 ? "" : "es", (double)busy / 1e6, in, out);
    if (!rr->nstages) return;
    fprintf(f, "  %-*s %-*s %10s %10s %6s %10s %10s  %s\n", wname, "stage", wkind, "kind", "items", "busy ms", "share",
            "us/item", "batches", "smap");
    for (size_t i = 0; i < rr->nstages; i++) {
        const cli_rank_stage *st = &rr->stages[i];
        fprintf(f, "  %-*s %-*s %10lld %10.3f %5.1f%% %10.3f %10lld%s%s\n", wname, st->name, wkind, st->kind, st->items,
                (double)st->busy_ns / 1e6, busy ? 100.0 * (double)st->busy_ns / (double)busy : 0.0,
                st->items ? (double)st->busy_ns / 1e3 / (double)st->items : 0.0, st->batches, *st->smap ? "  " : "",
                st->smap);
    }
}

/* s as a JSON string's body (the names are the program's: identifiers and
 * a file name). */
static void json_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
}

/* ns as microseconds with 3 decimals (negative: 0, a clock's skew). */
static void json_us(FILE *f, long long ns)
{
    if (ns < 0) ns = 0;
    fprintf(f, "%lld.%03lld", ns / 1000, ns % 1000);
}

int cli_ranks_trace(const char *path, const cli_rank_report *rr, int nranks, long long shift_ns)
{
    static const char tail[] = "\n]}\n";
    FILE *f = fopen(path, "r+b");
    char end[sizeof tail - 1];
    if (!f) return -1;
    if (fseek(f, -(long)(sizeof end), SEEK_END) != 0 || fread(end, 1, sizeof end, f) != sizeof end ||
        memcmp(end, tail, sizeof end) != 0 || fseek(f, -(long)(sizeof end), SEEK_END) != 0) {
        fclose(f);
        return -1;
    }
    for (int r = 1; r < nranks; r++) {
        const cli_rank_report *p = &rr[r];
        if (!p->came) continue;
        fprintf(f, ",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"name\": \"rank %d", r + 1, r);
        if (p->dropped) fprintf(f, " (its first %zu batches; %lld more not recorded)", p->nspans, p->dropped);
        fprintf(f, "\"}},\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
                   "\"args\": {\"name\": \"rank %d serving\"}}",
                r + 1, r);
        for (size_t i = 0; i < p->nspans; i++) {
            const cli_rank_span *sp = &p->spans[i];
            fputs(",\n{\"name\": \"", f);
            json_str(f, p->stages[sp->stage].name);
            fputs("\", \"cat\": \"remote\", \"ph\": \"X\", \"ts\": ", f);
            json_us(f, sp->start_ns - shift_ns);
            fputs(", \"dur\": ", f);
            json_us(f, sp->dur_ns);
            fprintf(f, ", \"pid\": %d, \"tid\": 0, \"args\": {\"items\": %lld, \"batch\": %zu}}", r + 1, sp->items, i);
        }
    }
    fputs(tail, f);
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0) failed = true;
    return failed ? -1 : 0;
}

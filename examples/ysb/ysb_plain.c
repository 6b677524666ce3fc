/* ysb_plain: the ysb example's computation as a plain sequential C loop,
 * the baseline of bench/ysb.sh (and a third check of ysb.stc in its test).
 *
 *   ysb_plain < events     (the output of gen_events)
 *
 * Same input, same output as `stc run examples/ysb/ysb.stc` without the
 * `ads` state line: each window's lines "WINDOW_START CAMPAIGN VIEWS" when
 * it closes, then "windows = (SEEN, {W: {C: N, ...}, ...}, LATE)".  The
 * table goes into an open-addressing hash table, campaigns get indexes in
 * byte order, and the open windows (at most a few at a time, since events
 * are at most 2 s late) are kept in a small array. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 10000
#define LATENESS 2000
#define MAX_ADS 4096      /* table size: a power of two, over twice the ads */
#define MAX_CAMPAIGNS 1024
#define MAX_OPEN 64

typedef struct { char *ad; int campaign; } ad_slot;
static ad_slot ads[MAX_ADS];
static char *campaigns[MAX_CAMPAIGNS];
static int ncampaigns, order[MAX_CAMPAIGNS]; /* order: campaign indexes in byte order */
typedef struct { long long start; long long *count; } window;
static window open_w[MAX_OPEN];
static int nopen;

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static int campaign_index(const char *c)
{
    for (int i = 0; i < ncampaigns; i++)
        if (!strcmp(campaigns[i], c)) return i;
    if (ncampaigns == MAX_CAMPAIGNS) exit(71);
    campaigns[ncampaigns] = strdup(c);
    return ncampaigns++;
}

/* The value of "key": "VALUE" in line, its length in *n; NULL if absent. */
static const char *field(const char *line, const char *key, size_t *n)
{
    const char *p = strstr(line, key);
    if (!p) return NULL;
    p += strlen(key);
    const char *q = strchr(p, '"');
    if (!q) return NULL;
    *n = (size_t)(q - p);
    return p;
}

static int by_name(const void *a, const void *b) { return strcmp(campaigns[*(const int *)a], campaigns[*(const int *)b]); }

static void print_window(const window *w)
{
    for (int k = 0; k < ncampaigns; k++)
        if (w->count[order[k]]) printf("%lld %s %lld\n", w->start, campaigns[order[k]], w->count[order[k]]);
}

int main(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long long seen = 0, late = 0;
    int sorted = 0;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        if (line[len - 1] == '\n') line[--len] = 0;
        if (line[0] != '{') { /* a table line: AD CAMPAIGN */
            char ad[128], camp[128];
            if (sscanf(line, "%127s %127s", ad, camp) != 2) continue;
            size_t j = hash(ad, strlen(ad)) & (MAX_ADS - 1);
            while (ads[j].ad && strcmp(ads[j].ad, ad)) j = (j + 1) & (MAX_ADS - 1);
            if (!ads[j].ad) ads[j].ad = strdup(ad);
            ads[j].campaign = campaign_index(camp);
            continue;
        }
        if (!sorted) { /* the table is complete: campaigns in byte order */
            for (int i = 0; i < ncampaigns; i++) order[i] = i;
            qsort(order, (size_t)ncampaigns, sizeof *order, by_name);
            sorted = 1;
        }
        size_t n;
        const char *v = field(line, "\"event_type\": \"", &n);
        if (!v || n != 4 || memcmp(v, "view", 4)) continue;
        const char *ad = field(line, "\"ad_id\": \"", &n);
        if (!ad) continue;
        size_t j = hash(ad, n) & (MAX_ADS - 1);
        while (ads[j].ad && (strlen(ads[j].ad) != n || memcmp(ads[j].ad, ad, n))) j = (j + 1) & (MAX_ADS - 1);
        if (!ads[j].ad) continue; /* an ad not in the table */
        const char *ts = field(line, "\"event_time\": \"", &n);
        if (!ts) continue;
        long long t = strtoll(ts, NULL, 10), w = t - t % WINDOW, now = t > seen ? t : seen;
        if (w + WINDOW + LATENESS <= seen) {
            late++;
            seen = now;
            continue;
        }
        seen = now;
        int k = 0;
        while (k < nopen && open_w[k].start != w) k++;
        if (k == nopen) { /* a new window, kept in start order */
            if (nopen == MAX_OPEN) return 71;
            int at = nopen;
            while (at > 0 && open_w[at - 1].start > w) at--;
            memmove(open_w + at + 1, open_w + at, (size_t)(nopen - at) * sizeof *open_w);
            open_w[at] = (window){w, calloc(MAX_CAMPAIGNS, sizeof(long long))};
            if (!open_w[at].count) return 71;
            nopen++;
            k = at;
        }
        open_w[k].count[ads[j].campaign]++;
        int closed = 0;
        while (closed < nopen && open_w[closed].start + WINDOW + LATENESS <= now) {
            print_window(&open_w[closed]);
            free(open_w[closed].count);
            closed++;
        }
        memmove(open_w, open_w + closed, (size_t)(nopen - closed) * sizeof *open_w);
        nopen -= closed;
    }
    printf("windows = (%lld, {", seen);
    for (int i = 0; i < nopen; i++) {
        printf("%s%lld: {", i ? ", " : "", open_w[i].start);
        int first = 1;
        for (int k = 0; k < ncampaigns; k++)
            if (open_w[i].count[order[k]]) {
                printf("%s\"%s\": %lld", first ? "" : ", ", campaigns[order[k]], open_w[i].count[order[k]]);
                first = 0;
            }
        printf("}");
    }
    printf("}, %lld)\n", late);
    free(line);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 74;
}

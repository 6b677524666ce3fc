/* gen_events: a deterministic generator of Yahoo Streaming Benchmark input
 * for the ysb example.
 *
 *   gen_events N [SEED]    writes the ad table, then N events, to stdout
 *
 * The output starts with the join table: 1000 lines "AD_ID CAMPAIGN_ID"
 * (100 campaigns of 10 ads each, as in YSB), then N events, one JSON
 * object per line, its keys always in this order:
 *
 *   {"user_id": "...", "page_id": "...", "ad_id": "...", "ad_type": "banner",
 *    "event_type": "view", "event_time": "1700000000123", "ip_address": "10.1.2.3"}
 *
 * (on one line).  event_type is view, click or purchase (a third each);
 * event_time is in milliseconds, as a string as in YSB.  Event i happens at
 * T0 + i ms, and arrives up to LATENESS_MS (2000) late: its event_time is
 * T0 + i - U with U uniform in [0, 2000), so events come in time order but
 * for a bounded lateness, and no event is older than the largest time seen
 * before it minus 2000 ms.  The same N and SEED give the same bytes
 * anywhere (integer arithmetic only).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define CAMPAIGNS 100
#define ADS_PER_CAMPAIGN 10
#define LATENESS_MS 2000
#define T0 1700000000000ull

static uint64_t rng_state;
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}
static uint64_t rng_below(uint64_t n) { return rng_next() % n; }

/* A uuid-like id of 32 hex digits with dashes, from a number. */
static void uuid(char out[37], uint64_t a, uint64_t b)
{
    snprintf(out, 37, "%08" PRIx32 "-%04" PRIx32 "-%04" PRIx32 "-%04" PRIx32 "-%012" PRIx64, (uint32_t)(a >> 32),
             (uint32_t)(a >> 16) & 0xffff, (uint32_t)a & 0xffff, (uint32_t)(b >> 48), (uint64_t)(b & 0xffffffffffffull));
}

int main(int argc, char **argv)
{
    char *end;
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: gen_events N [SEED]\n");
        return 64;
    }
    unsigned long long n = strtoull(argv[1], &end, 10), seed = 1;
    if (*end || argv[1][0] == '-' || !argv[1][0]) return 64;
    if (argc > 2) {
        seed = strtoull(argv[2], &end, 10);
        if (*end || !argv[2][0]) return 64;
    }
    rng_state = seed * 0x2545F4914F6CDD1Du + 7;
    char ads[CAMPAIGNS * ADS_PER_CAMPAIGN][37];
    for (int c = 0; c < CAMPAIGNS; c++) {
        char camp[37];
        uuid(camp, rng_next(), rng_next());
        for (int k = 0; k < ADS_PER_CAMPAIGN; k++) {
            char *ad = ads[c * ADS_PER_CAMPAIGN + k];
            uuid(ad, rng_next(), rng_next());
            printf("%s %s\n", ad, camp);
        }
    }
    static const char *const types[] = {"banner", "modal", "sponsored-search", "mail", "mobile"};
    static const char *const events[] = {"view", "click", "purchase"};
    for (unsigned long long i = 0; i < n; i++) {
        char user[37], page[37];
        uuid(user, rng_below(100000), 0x5eed);
        uuid(page, rng_below(1000), 0xfa9e);
        uint64_t late = rng_below(LATENESS_MS);
        uint64_t t = T0 + i >= late ? T0 + i - late : 0;
        uint64_t ip = rng_next();
        printf("{\"user_id\": \"%s\", \"page_id\": \"%s\", \"ad_id\": \"%s\", \"ad_type\": \"%s\", "
               "\"event_type\": \"%s\", \"event_time\": \"%" PRIu64 "\", \"ip_address\": \"%u.%u.%u.%u\"}\n",
               user, page, ads[rng_below(CAMPAIGNS * ADS_PER_CAMPAIGN)], types[rng_below(5)], events[rng_below(3)],
               t, (unsigned)(ip & 255), (unsigned)(ip >> 8 & 255), (unsigned)(ip >> 16 & 255), (unsigned)(ip >> 24 & 255));
    }
    if (fflush(stdout) != 0 || ferror(stdout)) return 74;
    return 0;
}

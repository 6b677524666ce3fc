/* gen_log: a deterministic generator of web access-log lines for the
 * logstats example.
 *
 *   gen_log N [SEED]     writes N lines to standard output
 *
 * A line has 7 fields separated by single spaces:
 *
 *   2026-11-22T10:00:03Z host07 GET /api/items/123 200 5123 12.5
 *   timestamp            host   method path        status bytes latency-ms
 *
 * Timestamps never decrease; the request rate follows a daily cycle, so
 * some minutes are busier than others. About 1 line in 2000 is malformed
 * on purpose (empty, blank, cut at a field boundary, an extra field, or the
 * status "000" of an aborted request); logstats counts those as bad.
 * The same N and SEED give the same bytes on every platform: all numbers
 * come from a 64-bit integer generator and are printed as integers (the
 * latency as tenths of a millisecond), never through floating point.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: tiny, fast, and good enough for synthetic data. */
typedef struct {
  uint64_t s;
} rng;

static uint64_t rng_next(rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

/* A uniform integer in [0, n); the modulo bias is irrelevant here. */
static uint32_t rng_below(rng *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }

/* Days since 1970-01-01 to a civil date (H. Hinnant's algorithm), so the
 * timestamps roll over days, months and years correctly for any N. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static const char *const methods[] = {"GET", "POST", "PUT", "DELETE"};

/* Paths: a few dozen distinct ones; "%" marks where an id goes. */
static const char *const paths[] = {
    "/",                    "/index.html",         "/favicon.ico",
    "/static/app.js",       "/static/app.css",     "/static/logo.png",
    "/api/items",           "/api/items/%",        "/api/items/%/reviews",
    "/api/users/%",         "/api/users/%/orders", "/api/orders/%",
    "/api/search",          "/api/cart",           "/api/cart/items/%",
    "/api/login",           "/api/logout",         "/api/health",
    "/docs/getting-started", "/docs/api",          "/blog/%",
    "/images/%.jpg",        "/feed.xml",           "/robots.txt",
};
#define NPATHS (sizeof paths / sizeof paths[0])

/* Per hour of day (UTC), the per-mille chance that a line advances the
 * clock by one second: 100 = ~10 lines/s at night, 8 = ~125 lines/s at
 * the afternoon peak. */
static const unsigned advance_permille[24] = {
    100, 110, 120, 120, 110, 90, 70, 50, 30, 20, 15, 12,
    10,  9,   8,   8,   9,   10, 12, 15, 20, 30, 50, 80,
};

typedef struct {
  int status;
  unsigned long bytes;
  unsigned latency_tenths; /* latency in tenths of a millisecond */
} response;

/* Status with a realistic skew (per 1000): 200 80.0%, 201 4.5%, 301 4%,
 * 404 7.5%, 500 2%, 503 2%; POST creates (201) more often. */
static response make_response(rng *r, const char *method) {
  response x;
  unsigned p = rng_below(r, 1000);
  int post = strcmp(method, "POST") == 0;
  if (p < 800) x.status = post && p < 300 ? 201 : 200;
  else if (p < 845) x.status = 201;
  else if (p < 885) x.status = 301;
  else if (p < 960) x.status = 404;
  else if (p < 980) x.status = 500;
  else x.status = 503;

  switch (x.status) {
  case 200: x.bytes = 200 + rng_below(r, 60000); break;
  case 201: x.bytes = 50 + rng_below(r, 400); break;
  case 301: x.bytes = 0; break;
  case 404: x.bytes = 150 + rng_below(r, 350); break;
  default:  x.bytes = 100 + rng_below(r, 200); break;
  }

  /* Latency: mostly 1-60 ms, a slow tail up to 3 s, and 503s that time
   * out at the gateway after ~30 s. */
  unsigned q = rng_below(r, 1000);
  if (x.status == 503) x.latency_tenths = 300000 + rng_below(r, 5000);
  else if (q < 900) x.latency_tenths = 10 + rng_below(r, 600);
  else if (q < 990) x.latency_tenths = 600 + rng_below(r, 4400);
  else x.latency_tenths = 5000 + rng_below(r, 25000);
  return x;
}

/* Writes the path, filling a "%" with an id. */
static void put_path(FILE *out, rng *r, const char *path) {
  const char *pct = strchr(path, '%');
  if (!pct) {
    fputs(path, out);
    return;
  }
  fwrite(path, 1, (size_t)(pct - path), out);
  fprintf(out, "%" PRIu32, 1 + rng_below(r, 5000));
  fputs(pct + 1, out);
}

/* Writes a malformed line of one of five kinds. `fields` are the 7 fields
 * of a good line, already formatted. */
static void put_malformed(FILE *out, rng *r, char fields[7][64]) {
  switch (rng_below(r, 5)) {
  case 0: /* empty line */
    break;
  case 1: /* only blanks */
    fputs("   \t ", out);
    break;
  case 2: { /* cut after 1 to 6 fields, as a crashed writer leaves it */
    unsigned k = 1 + rng_below(r, 6);
    for (unsigned i = 0; i < k; i++) fprintf(out, "%s%s", i ? " " : "", fields[i]);
    break;
  }
  case 3: /* an extra field (a user agent that should have been quoted) */
    for (unsigned i = 0; i < 7; i++) fprintf(out, "%s ", fields[i]);
    fputs("curl/8.5.0", out);
    break;
  default: /* the request was aborted: status 000 */
    fprintf(out, "%s %s %s %s 000 0 %s", fields[0], fields[1], fields[2], fields[3],
            fields[6]);
    break;
  }
  fputc('\n', out);
}

static int parse_u64(const char *s, uint64_t *v) {
  char *end;
  errno = 0;
  if (*s < '0' || *s > '9') return -1;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *v = (uint64_t)x;
  return 0;
}

int main(int argc, char **argv) {
  uint64_t n, seed = 1;
  if (argc < 2 || argc > 3 || parse_u64(argv[1], &n) != 0 ||
      (argc == 3 && parse_u64(argv[2], &seed) != 0)) {
    fprintf(stderr, "usage: gen_log N [SEED]   (N lines to stdout; N, SEED >= 0)\n");
    return 64;
  }

  /* A big stdout buffer: writing 10M lines is then bound by formatting.
   * Allocated, not automatic: stdout outlives main's frame at exit. */
  char *buf = malloc(1 << 16);
  if (buf) setvbuf(stdout, buf, _IOFBF, 1 << 16);

  rng r = {seed * 0x2545F4914F6CDD1Du + 0x1234567u};
  int64_t t = 1795305600; /* 2026-11-22T00:00:00Z */
  int64_t day = -1, y = 0, stamped = -1;
  unsigned mo = 0, d = 0;
  char fields[7][64];
  for (uint64_t i = 0; i < n; i++) {
    unsigned hour = (unsigned)((t % 86400) / 3600);
    if (rng_below(&r, 1000) < advance_permille[hour]) t++;
    if (t / 86400 != day) {
      day = t / 86400;
      civil_from_days(day, &y, &mo, &d);
    }
    if (t != stamped) { /* many lines share a second: format it once */
      unsigned sec = (unsigned)(t % 86400);
      snprintf(fields[0], sizeof fields[0], "%04" PRId64 "-%02u-%02uT%02u:%02u:%02uZ", y, mo,
               d, sec / 3600, sec / 60 % 60, sec % 60);
      stamped = t;
    }
    /* ~20 hosts, the first ones busier (a load balancer's skew). */
    unsigned h = rng_below(&r, 400);
    snprintf(fields[1], sizeof fields[1], "host%02u", 1 + (h < 200 ? h % 10 : h % 20));
    unsigned m = rng_below(&r, 100);
    const char *method = methods[m < 70 ? 0 : m < 90 ? 1 : m < 95 ? 2 : 3];
    snprintf(fields[2], sizeof fields[2], "%s", method);

    if (rng_below(&r, 2000) == 0) {
      /* Plausible fields for put_malformed to cut or extend. */
      snprintf(fields[3], sizeof fields[3], "/api/items/%" PRIu32, rng_below(&r, 5000));
      snprintf(fields[4], sizeof fields[4], "200");
      snprintf(fields[5], sizeof fields[5], "512");
      snprintf(fields[6], sizeof fields[6], "%u.%u", 1 + rng_below(&r, 99), rng_below(&r, 10));
      put_malformed(stdout, &r, fields);
      continue;
    }

    response x = make_response(&r, method);
    fputs(fields[0], stdout);
    putchar(' ');
    fputs(fields[1], stdout);
    putchar(' ');
    fputs(method, stdout);
    putchar(' ');
    put_path(stdout, &r, paths[rng_below(&r, NPATHS)]);
    printf(" %d %lu %u.%u\n", x.status, x.bytes, x.latency_tenths / 10, x.latency_tenths % 10);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("gen_log: write");
    return 74;
  }
  return 0;
}

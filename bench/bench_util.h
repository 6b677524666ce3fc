/* bench_util.h - small helpers shared by the benchmark programs (C and C++):
 * a monotonic clock, the median of a few runs, and option parsing.
 * Header-only so each benchmark stays one file plus this one. */
#ifndef STC_BENCH_UTIL_H
#define STC_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n-1] (sorts v in place); the mean of the two middle values
 * when n is even. n >= 1. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Parses a positive int option value or exits with usage status 64. */
static inline int bench_int_arg(const char *prog, const char *opt, const char *s, int max)
{
    char *end = NULL;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || *end != '\0' || v < 1 || v > max) {
        fprintf(stderr, "%s: %s needs a number from 1 to %d\n", prog, opt, max);
        exit(64);
    }
    return (int)v;
}

static inline double bench_double_arg(const char *prog, const char *opt, const char *s)
{
    char *end = NULL;
    double v = s ? strtod(s, &end) : 0.0;
    if (!s || *end != '\0' || !(v > 0.0)) {
        fprintf(stderr, "%s: %s needs a positive number\n", prog, opt);
        exit(64);
    }
    return v;
}

#endif /* STC_BENCH_UTIL_H */

/* vcpu_speed.c - how fast each CPU this process may use runs cache-bound code now.
 *
 *   vcpu_speed [MB]      (default 8)
 *
 * Pins itself to each CPU of its affinity mask in turn and follows a
 * random cycle of pointers through an MB-sized array (one load depends on
 * the last, so each is a cache or memory latency), printing the mean ns a
 * load per CPU: "cpu0 20.1 cpu1 125.3".  On our 2-vCPU VMs the two CPUs
 * have run the same at some times and 1.5-6x apart at others (a smaller
 * share of the last-level cache on one, or a busy neighbour): a 2-worker
 * figure, and a 1-worker one too, depends on it beside xcore's cache line
 * between the CPUs, so the benchmark scripts print it (bench/README.md,
 * "Cross-core moves"). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LOADS 2000000L

static volatile size_t sink;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* A random cycle through all n slots (Sattolo's shuffle), with a
 * deterministic xorshift so every run walks the same cycle. */
static void make_cycle(size_t *next, size_t n)
{
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) next[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t j = (size_t)(x % i);
        size_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
}

int main(int argc, char **argv)
{
    long mb = argc > 1 ? strtol(argv[1], NULL, 10) : 8;
    if (argc > 2 || mb < 1 || mb > 4096) {
        fprintf(stderr, "usage: vcpu_speed [MB]   (1 to 4096, default 8)\n");
        return 64;
    }
    size_t n = (size_t)mb * 1024 * 1024 / sizeof(size_t);
    size_t *next = malloc(n * sizeof *next);
    cpu_set_t allowed;
    if (!next || sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        fprintf(stderr, "vcpu_speed: %s\n", next ? "cannot read the CPU affinity" : "out of memory");
        free(next);
        return 71;
    }
    make_cycle(next, n);
    const char *sep = "";
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) continue;
        size_t p = 0;
        for (long i = 0; i < LOADS / 4; i++) p = next[p]; /* warm this CPU's caches */
        double t0 = now_ns();
        for (long i = 0; i < LOADS; i++) p = next[p];
        double ns = (now_ns() - t0) / (double)LOADS;
        sink = p; /* the chase's end is used: the loop stays */
        printf("%scpu%d %.1f", sep, cpu, ns);
        sep = " ";
    }
    printf("\n");
    sched_setaffinity(0, sizeof allowed, &allowed);
    free(next);
    return 0;
}

/* xcore.c - how long one cache line takes to move between two CPUs now.
 *
 *   xcore [CPU_A CPU_B]      (default 0 1)
 *
 * Two threads, pinned to the two CPUs, pass a counter back and forth
 * through one shared cache line, 100,000 times each way; prints the mean
 * time of one move in ns.  On our 2-vCPU VMs this is 25-60 ns at some
 * times and 170-290 ns at others (the hypervisor places the vCPUs near or
 * far apart, and moves them): every 2-worker figure depends on it, so the
 * benchmark scripts print it before and after their runs (bench/README.md,
 * "Cross-core moves"). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 100000L

static _Alignas(64) atomic_long ball;
static _Alignas(64) atomic_bool stop; /* the run took too long (both CPUs not ours) */

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* unpinned if it fails */
}

static void *other(void *arg)
{
    pin(*(const int *)arg);
    for (long i = 0; i < ROUNDS; i++) {
        while (atomic_load_explicit(&ball, memory_order_acquire) != 2 * i + 1)
            if (atomic_load_explicit(&stop, memory_order_relaxed)) return NULL;
        atomic_store_explicit(&ball, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int a = argc == 3 ? atoi(argv[1]) : 0, b = argc == 3 ? atoi(argv[2]) : 1;
    if (argc != 1 && argc != 3) {
        fprintf(stderr, "usage: xcore [CPU_A CPU_B]\n");
        return 64;
    }
    pin(a);
    pthread_t t;
    if (pthread_create(&t, NULL, other, &b) != 0) {
        fprintf(stderr, "xcore: cannot start a thread\n");
        return 71;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < ROUNDS && !atomic_load(&stop); i++) {
        atomic_store_explicit(&ball, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&ball, memory_order_acquire) != 2 * i + 2 && !atomic_load(&stop)) {
        }
        if (i % 4096 == 0) { /* two threads spinning on one CPU would take minutes */
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (t1.tv_sec - t0.tv_sec > 2) atomic_store(&stop, true);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    if (atomic_load(&stop)) {
        printf("-\n");
        return 0;
    }
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (2.0 * ROUNDS);
    printf("%.0f\n", ns);
    return 0;
}

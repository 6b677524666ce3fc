/* peak_rss.c - the exact peak resident set of a command, for
 * bench/stream_mem.sh.
 *
 *   peak_rss [--interval-us N | --no-sample] COMMAND [ARG...]
 *
 * Runs COMMAND (its stdout and stderr are inherited) and reads
 * /proc/PID/smaps_rollup every N microseconds (default 500) while it runs
 * (not at all with --no-sample); then prints on stderr
 *
 *   peak_rss: exact KB, kernel KB, samples S, wall SECONDS, cpu SECONDS, status X
 *
 * exact is the largest Rss seen: smaps_rollup walks the page tables, so
 * each sample is exact, though a peak shorter than the interval can be
 * missed (0 with --no-sample).  wall is from fork to exit, to the
 * microsecond (GNU time gives hundredths); cpu is user + system time.  kernel is ru_maxrss from
 * wait4(), what /usr/bin/time -v prints as its maximum resident set size:
 * since Linux 6.2 it is computed from per-CPU counters that each hold up
 * to 32 pages (128 KB) not yet added in, so on a multi-threaded process it
 * can be off by that much per CPU.  Exits with the command's status (128 +
 * signal if it was killed), or 127 if it could not be started. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The Rss line of /proc/PID/smaps_rollup in KB, or -1 (the process is gone). */
static long rss_now(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Rss: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    long interval_us = 500;
    int first = 1;
    bool sample = true;
    if (argc > 1 && !strcmp(argv[1], "--no-sample")) {
        sample = false;
        first = 2;
    } else if (argc > 2 && !strcmp(argv[1], "--interval-us")) {
        char *end;
        interval_us = strtol(argv[2], &end, 10);
        if (*end || interval_us < 1) {
            fprintf(stderr, "peak_rss: --interval-us needs a positive number, not '%s'\n", argv[2]);
            return 64;
        }
        first = 3;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: peak_rss [--interval-us N | --no-sample] COMMAND [ARG...]\n");
        return 64;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "peak_rss: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        execvp(argv[first], argv + first);
        fprintf(stderr, "peak_rss: cannot run '%s': %s\n", argv[first], strerror(errno));
        _exit(127);
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
    long peak = 0, samples = 0;
    int status = 0;
    struct rusage ru;
    struct timespec pause = {interval_us / 1000000, (interval_us % 1000000) * 1000};
    for (;;) {
        pid_t r = wait4(pid, &status, sample ? WNOHANG : 0, &ru);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) {
            fprintf(stderr, "peak_rss: wait4: %s\n", strerror(errno));
            return 127;
        }
        if (!sample) continue; /* interrupted: wait again */
        long kb = rss_now(path);
        if (kb > peak) peak = kb;
        if (kb >= 0) samples++;
        nanosleep(&pause, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    fprintf(stderr, "peak_rss: exact %ld KB, kernel %ld KB, samples %ld, wall %.6f, cpu %.3f, status %d\n", peak,
            ru.ru_maxrss, samples, wall, cpu, code);
    return code;
}

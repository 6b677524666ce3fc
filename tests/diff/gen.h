/* gen.h - a seeded generator of random, well-typed STCLang programs built
 * around state threads, for differential testing (tests/diff/README.md).
 *
 * The same seed and size always give the same program text. Every program
 * must compile: one that does not is a generator bug. */
#ifndef STC_DIFF_GEN_H
#define STC_DIFF_GEN_H

#include <stdbool.h>
#include <stdint.h>

/* Size parameters; the shrinker regenerates a failing seed with smaller ones. */
typedef struct gen_size {
    int threads; /* at most this many state threads (1..12) */
    int items;   /* range(0, N) lists have N <= items (up to ~300) */
    int depth;   /* expression depth of an smap body */
    int stages;  /* top-level stages of main (smaps, tuples of thread calls) */
} gen_size;

/* What a generated program contains (for the driver's coverage counts). */
typedef struct gen_info {
    int threads;         /* thread declarations */
    bool error_injected; /* a data-dependent runtime error site was placed */
    int chains;          /* chains of lets outside smap (candidates for let tasks) */
} gen_info;

/* The default (largest) size: 12 threads, 300 items, depth 4, 4 stages. */
gen_size gen_default_size(void);

/* The program for seed at size; malloc'd, NUL-terminated; NULL when out of
 * memory. info may be NULL. */
char *gen_program(uint64_t seed, gen_size size, gen_info *info);

#endif

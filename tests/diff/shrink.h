/* shrink.h - a greedy, text-level shrinker for STCLang programs
 * (tests/diff/README.md, "Shrinking").
 *
 * shrink_text() repeatedly tries smaller variants of a program and keeps a
 * variant whenever `still_fails` says it still shows the failure (which
 * includes that it compiles). The passes, repeated until none makes
 * progress or the budget is spent:
 *   1. delete one line (unused declarations, `let rI = ... in` lines);
 *   2. replace a parenthesized or bracketed group: by 0; a call by one of
 *      its arguments; a tuple or list by one item, or without one item;
 *      `(if c then a else b)` by a or b; `(case ...)` by one arm or without
 *      one alternative, or by its scrutinee; `(let v = e1 in e2)` by e2, or
 *      e2 with v := (e1);
 *      any group by a group or call nested in it;
 *   3. remove a `let v = e1 in` that is not in parentheses (substituting v);
 *   4. lower an integer literal to 0, 1, half or one less.
 * Every accepted variant is shorter, or has a smaller literal, so the loop
 * ends. */
#ifndef STC_DIFF_SHRINK_H
#define STC_DIFF_SHRINK_H

#include <stdbool.h>

typedef bool (*shrink_pred)(const char *src, void *ud);

typedef struct shrink_budget {
    int max_tries;      /* calls of still_fails at most */
    double max_seconds; /* wall-clock time at most */
} shrink_budget;

/* Returns the smallest variant of src found (malloc'd; src itself, copied,
 * when nothing smaller fails); *tries receives the number of variants
 * tried. NULL when out of memory. */
char *shrink_text(const char *src, shrink_pred still_fails, void *ud, shrink_budget budget, int *tries);

#endif

/* arena.h - bump allocator for everything a compiled program owns (IR
 * nodes, types, names).  Freed all at once with the program. */
#ifndef STC_UTIL_ARENA_H
#define STC_UTIL_ARENA_H
#include <stddef.h>

typedef struct arena arena;

arena *stc__arena_new(void);
void stc__arena_free(arena *a);                       /* NULL is a no-op */
/* Zeroed memory aligned for any type; NULL when out of memory. */
void *stc__arena_alloc(arena *a, size_t size);
char *stc__arena_strndup(arena *a, const char *s, size_t n);
char *stc__arena_strdup(arena *a, const char *s);
/* Runs fn(ptr) when the arena is freed (e.g. to release literal values).
 * Returns 0, or -1 when out of memory (fn is then called at once). */
int stc__arena_on_free(arena *a, void (*fn)(void *ptr), void *ptr);

#endif

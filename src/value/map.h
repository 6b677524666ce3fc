/* map.h - maps ({K: V}) as persistent AVL trees in key order, and the
 * total order of keys (docs/LANGUAGE.md, maps; docs/DESIGN.md, map
 * representation).
 *
 * A map value (STC_T_MAP) is a header holding the item count and the root
 * of a binary search tree whose nodes carry their own reference counts, so
 * trees share subtrees.  An update walks one path: a node held once (count
 * 1) on that path is changed in place, a shared one is copied (its children
 * then gain a reference), so putting into a map held by one reference costs
 * O(log n) and no allocation beyond the new node, and putting into a
 * shared map copies O(log n) nodes and leaves the original unchanged.
 *
 * Ownership: the functions taking a map "consumed" take over the caller's
 * reference (the result reuses it when it was the only one); keys and
 * values passed in are consumed as well, also on error. */
#ifndef STC_VALUE_MAP_H
#define STC_VALUE_MAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "value/value.h"

typedef struct val_map_node val_map_node;
struct val_map_node {
    atomic_size_t refs; /* atomic: shared nodes are released from any thread */
    int height;                /* AVL: 1 for a leaf */
    uint64_t pre; /* val_key_prefix(key): most comparisons on a walk end there */
    stc_value key, val;
    val_map_node *left, *right;
};

typedef struct val_map {
    stc_obj hdr;
    size_t n;
    val_map_node *root;
} val_map;

/* The total order of keys (and of sort): <0, 0, >0.  () ; false < true;
 * ints numerically; floats by IEEE 754 totalOrder; strings bytewise (a
 * proper prefix first); tuples and lists lexicographically (a proper
 * prefix first); inl < inr, two of one side by their payloads; maps by
 * their item lists.  Values of different tags (never met in a well-typed
 * program except inl/inr) order by tag.  Reusable: any code ordering
 * values of one type may call it. */
int stc__val_key_compare(stc_value a, stc_value b);

/* A hash of a key agreeing with stc__val_key_compare (equal keys hash
 * alike; keyhash.c); the runtime shards keyed threads by it. */
uint64_t stc__val_key_hash(stc_value v);

/* An empty map; INVALID when out of memory. */
stc_value stc__val_map_new(void);
static inline size_t val_map_len(stc_value m) { return ((const val_map *)m.as.obj)->n; }
/* The value at key k (borrowed), or NULL. */
const stc_value *stc__val_map_find(stc_value m, stc_value k);
/* When m and the nodes on k's path are held once (by the caller), moves
 * the value at k out into *v (owned), leaving unit there until the
 * caller puts k again; else false and nothing changes.  So a keyed
 * thread's per-key state is held once while its function updates it. */
bool stc__val_map_take(stc_value m, stc_value k, stc_value *v);
/* stc__val_map_take returning the place of k's value, where the caller
 * stores k's new value itself (no second walk; the unit left there is
 * dropped) while m stays held once and unchanged; NULL when take fails,
 * and then *absent says that every node was held once and k is not in m
 * (so a lookup would find nothing either). */
stc_value *stc__val_map_take_slot(stc_value m, stc_value k, stc_value *v, bool *absent);
/* m with k bound to v (m, k, v consumed); 0 or STC_ENOMEM (*out INVALID). */
int stc__val_map_put(stc_value m, stc_value k, stc_value v, stc_value *out);
/* m without k (m consumed, k borrowed); unchanged when k is absent. 0 or
 * STC_ENOMEM. */
int stc__val_map_remove(stc_value m, stc_value k, stc_value *out);
/* The map of the n items keys[i] -> vals[i] (in strictly increasing key
 * order, the caller's word), built balanced in O(n); the items are
 * consumed, also on error (the arrays then hold unit).  0 or STC_ENOMEM
 * (*out INVALID). */
int stc__val_map_from_sorted(stc_value *keys, stc_value *vals, size_t n, stc_value *out);
/* The items of the maps ins[0..nin) (consumed; their keys disjoint)
 * regrouped into nout (<= 127) maps outs[0..nout): an item of key k goes
 * to outs[pick(k, ud)] (pick NULL: all to outs[0]), each in key order.  A
 * map held once whose nodes are all held once gives its nodes themselves,
 * relinked into balanced trees: no allocation and no count per item (a
 * keyed thread's split among its shards and merge back, src/flow/shards.c);
 * the nodes of any other map are copied.  O(items x nin) key compares for
 * nin > 1, none for nin == 1.  STC_ENOMEM (or STC_EINVAL: a non-map, a
 * bad count) with the inputs as they were and outs units. */
int stc__val_map_regroup(stc_value *ins, int nin, stc_value *outs, int nout, int (*pick)(stc_value key, void *ud),
                         void *ud);
/* Whether a and b hold equal keys (stc__val_key_compare) bound to equal values
 * (stc_value_equal), in the same number. */
bool stc__val_map_equal(stc_value a, stc_value b);
/* Frees the tree of a map whose header is being destroyed. */
void stc__val_map_destroy(val_map *m);
/* stc__val_mark_shared on every key and value of m (value.c marks m itself). */
void stc__val_map_mark_items(const val_map *m);
/* Checks the tree's invariants (order, AVL heights and balance, the
 * count): for tests. */
bool stc__val_map_check(stc_value m);

/* In-order iteration: stc__val_map_iter_init, then stc__val_map_iter_next until it
 * returns false; *k and *v are borrowed from the map, which must stay
 * alive and unchanged meanwhile.  An AVL tree of n nodes has height below
 * 1.45 log2(n + 2), so 96 levels hold any map memory can. */
#define VAL_MAP_MAX_HEIGHT 96
typedef struct val_map_iter {
    const val_map_node *stack[VAL_MAP_MAX_HEIGHT];
    int top;
} val_map_iter;
void stc__val_map_iter_init(val_map_iter *it, stc_value m);
bool stc__val_map_iter_next(val_map_iter *it, stc_value *k, stc_value *v);

#endif

/* map.c - persistent AVL maps with in-place updates when uniquely held,
 * and the total order of keys (map.h). */
#include "value/map.h"

#include "value/cache.h"

#include <stdlib.h>
#include <string.h>

/* ---- The order of keys ------------------------------------------------------- */

/* IEEE 754 totalOrder as a signed integer order: negative floats have
 * their magnitude bits flipped so that larger magnitudes come first. */
static int64_t val_float_order_key(double f)
{
    int64_t x;
    memcpy(&x, &f, sizeof x);
    return x < 0 ? x ^ INT64_MAX : x;
}

static int val_cmp3(int64_t a, int64_t b) { return (a > b) - (a < b); }

static int val_map_compare(stc_value a, stc_value b);

/* Strings bytewise, a proper prefix first: a byte loop, as keys are
 * mostly short words that differ early (a call of memcmp costs more). */
static int val_str_order(const val_str *x, const val_str *y)
{
    size_t n = x->len < y->len ? x->len : y->len;
    if (n > 32) {
        int c = memcmp(x->data, y->data, n);
        if (c) return c < 0 ? -1 : 1;
    } else {
        const unsigned char *a = (const unsigned char *)x->data, *b = (const unsigned char *)y->data;
        for (size_t i = 0; i < n; i++)
            if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    }
    return (x->len > y->len) - (x->len < y->len);
}

/* A string's first 8 bytes as a big-endian number, zero-padded (0 for
 * other keys).  When two strings' prefixes differ they order as their
 * prefixes do (a string ending inside the 8 bytes pads with 0, below any
 * byte that continues the other, or equal to a 0 byte, then not decisive),
 * so a walk compares one number per node for most nodes. */
static inline uint64_t val_key_prefix(stc_value k)
{
    if (k.tag != STC_T_STR) return 0;
    const val_str *s = val_as_str(k);
    size_t n = s->len < 8 ? s->len : 8;
    uint64_t p = 0;
    for (size_t i = 0; i < 8; i++) p = p << 8 | (i < n ? (unsigned char)s->data[i] : 0);
    return p;
}

/* stc__val_key_compare with the common keys (strings, ints) inline, given
 * kp = val_key_prefix(k): the tree walks below call it once per level. */
static inline int val_key_cmp(stc_value k, uint64_t kp, const val_map_node *n)
{
    stc_value b = n->key;
    if (k.tag == b.tag) {
        if (k.tag == STC_T_STR) {
            if (kp != n->pre) return kp < n->pre ? -1 : 1;
            return val_str_order(val_as_str(k), val_as_str(b));
        }
        if (k.tag == STC_T_INT) return val_cmp3(k.as.i, b.as.i);
    }
    return stc__val_key_compare(k, b);
}

int stc__val_key_compare(stc_value a, stc_value b)
{
    /* The last item of a sequence and a sum's payload are compared by
     * looping, not recursing, so a value nested through its last items
     * (a cons list) costs no stack. */
    for (;;) {
        if (a.tag != b.tag) return a.tag < b.tag ? -1 : 1; /* inl < inr */
        switch (a.tag) {
        case STC_T_INVALID:
        case STC_T_UNIT: return 0;
        case STC_T_BOOL: return (int)a.as.b - (int)b.as.b;
        case STC_T_INT: return val_cmp3(a.as.i, b.as.i);
        case STC_T_FLOAT: return val_cmp3(val_float_order_key(a.as.f), val_float_order_key(b.as.f));
        case STC_T_STR: return val_str_order(val_as_str(a), val_as_str(b));
        case STC_T_LIST:
        case STC_T_TUPLE: {
            size_t na = val_seq_len(a), nb = val_seq_len(b), n = na < nb ? na : nb;
            if (n == 0) return (na > nb) - (na < nb);
            for (size_t i = 0; i + 1 < n; i++) {
                int c = stc__val_key_compare(val_seq_items(a)[i], val_seq_items(b)[i]);
                if (c) return c;
            }
            if (na != nb) {
                int c = stc__val_key_compare(val_seq_items(a)[n - 1], val_seq_items(b)[n - 1]);
                return c ? c : (na > nb) - (na < nb);
            }
            a = val_seq_items(a)[n - 1];
            b = val_seq_items(b)[n - 1];
            continue;
        }
        case STC_T_INL:
        case STC_T_INR:
            a = val_box_get(a);
            b = val_box_get(b);
            continue;
        case STC_T_MAP: return val_map_compare(a, b);
        default: /* functions and user objects are no keys: by identity */
            return (a.as.obj > b.as.obj) - (a.as.obj < b.as.obj);
        }
    }
}

/* Maps by their lists of (key, value) items. */
static int val_map_compare(stc_value a, stc_value b)
{
    val_map_iter ia, ib;
    stc__val_map_iter_init(&ia, a);
    stc__val_map_iter_init(&ib, b);
    for (;;) {
        stc_value ka, va, kb, vb;
        bool ha = stc__val_map_iter_next(&ia, &ka, &va), hb = stc__val_map_iter_next(&ib, &kb, &vb);
        if (!ha || !hb) return (int)ha - (int)hb;
        int c = stc__val_key_compare(ka, kb);
        if (!c) c = stc__val_key_compare(va, vb);
        if (c) return c;
    }
}

bool stc__val_map_equal(stc_value a, stc_value b)
{
    if (val_map_len(a) != val_map_len(b)) return false;
    val_map_iter ia, ib;
    stc__val_map_iter_init(&ia, a);
    stc__val_map_iter_init(&ib, b);
    stc_value ka, va, kb, vb;
    while (stc__val_map_iter_next(&ia, &ka, &va) && stc__val_map_iter_next(&ib, &kb, &vb))
        if (stc__val_key_compare(ka, kb) != 0 || !stc_value_equal(va, vb)) return false;
    return true;
}

/* ---- Nodes ------------------------------------------------------------------- */

static int val_node_height(const val_map_node *n) { return n ? n->height : 0; }

static void val_node_fix(val_map_node *n)
{
    int l = val_node_height(n->left), r = val_node_height(n->right);
    n->height = 1 + (l > r ? l : r);
}

static val_map_node *val_node_new(stc_value k, stc_value v)
{
    val_map_node *n = malloc(sizeof *n);
    if (!n) return NULL;
    atomic_init(&n->refs, 1);
    n->height = 1;
    n->pre = val_key_prefix(k);
    n->key = k;
    n->val = v;
    n->left = n->right = NULL;
    return n;
}

static val_map_node *val_node_retain(val_map_node *n)
{
    if (n) atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
    return n;
}

/* Recursion is bounded by the tree's height. */
static void val_node_release(val_map_node *n)
{
    if (!n || atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) != 1) return;
    val_release(n->key);
    val_release(n->val);
    val_node_release(n->left);
    val_node_release(n->right);
    free(n);
}

/* n (one reference held by the caller's pointer) as a node that pointer
 * alone holds: n itself when its count is 1, else a copy sharing n's
 * children (the caller's reference to n is dropped).  NULL when out of
 * memory, n untouched. */
static val_map_node *val_node_own(val_map_node *n)
{
    if (atomic_load_explicit(&n->refs, memory_order_acquire) == 1) return n;
    val_map_node *c = malloc(sizeof *c);
    if (!c) return NULL;
    atomic_init(&c->refs, 1);
    c->height = n->height;
    c->pre = n->pre;
    c->key = val_retain(n->key);
    c->val = val_retain(n->val);
    c->left = val_node_retain(n->left);
    c->right = val_node_retain(n->right);
    val_node_release(n);
    return c;
}

/* Rotations on owned nodes (n and the child that rises). */
static val_map_node *val_rot_right(val_map_node *n)
{
    val_map_node *l = n->left;
    n->left = l->right;
    l->right = n;
    val_node_fix(n);
    val_node_fix(l);
    return l;
}

static val_map_node *val_rot_left(val_map_node *n)
{
    val_map_node *r = n->right;
    n->right = r->left;
    r->left = n;
    val_node_fix(n);
    val_node_fix(r);
    return r;
}

/* Restores the AVL balance at owned node n whose subtrees differ in
 * height by at most 2.  On out of memory sets *err and returns n
 * unbalanced but a valid search tree (the map is then dropped). */
static val_map_node *val_balance(val_map_node *n, bool *err)
{
    val_node_fix(n);
    int bf = val_node_height(n->left) - val_node_height(n->right);
    if (bf > 1) {
        val_map_node *l = val_node_own(n->left);
        if (!l) { *err = true; return n; }
        n->left = l;
        if (val_node_height(l->left) < val_node_height(l->right)) {
            val_map_node *lr = val_node_own(l->right);
            if (!lr) { *err = true; return n; }
            l->right = lr;
            n->left = val_rot_left(l);
        }
        return val_rot_right(n);
    }
    if (bf < -1) {
        val_map_node *r = val_node_own(n->right);
        if (!r) { *err = true; return n; }
        n->right = r;
        if (val_node_height(r->right) < val_node_height(r->left)) {
            val_map_node *rl = val_node_own(r->left);
            if (!rl) { *err = true; return n; }
            r->left = rl;
            n->right = val_rot_right(r);
        }
        return val_rot_left(n);
    }
    return n;
}

/* Inserts or replaces k -> v (consumed) under n; *added when k is new. */
static val_map_node *val_insert(val_map_node *n, stc_value k, uint64_t kp, stc_value v, bool *added, bool *err)
{
    if (!n) {
        val_map_node *leaf = val_node_new(k, v);
        if (!leaf) {
            val_release(k);
            val_release(v);
            *err = true;
            return NULL;
        }
        *added = true;
        return leaf;
    }
    val_map_node *o = val_node_own(n);
    if (!o) {
        val_release(k);
        val_release(v);
        *err = true;
        return n;
    }
    int c = val_key_cmp(k, kp, o);
    if (c == 0) {
        val_release(o->val);
        o->val = v;
        val_release(k);
        return o;
    }
    if (c < 0) o->left = val_insert(o->left, k, kp, v, added, err);
    else o->right = val_insert(o->right, k, kp, v, added, err);
    /* a replaced value leaves every height as it was */
    return *err || !*added ? o : val_balance(o, err);
}

/* Detaches the leftmost node of n (non-NULL) into *min. */
static val_map_node *val_remove_min(val_map_node *n, val_map_node **min, bool *err)
{
    val_map_node *o = val_node_own(n);
    if (!o) { *err = true; return n; }
    if (!o->left) {
        val_map_node *r = o->right;
        o->right = NULL;
        *min = o;
        return r;
    }
    o->left = val_remove_min(o->left, min, err);
    return *err ? o : val_balance(o, err);
}

/* Removes k (present under n) from n. */
static val_map_node *val_delete(val_map_node *n, stc_value k, uint64_t kp, bool *err)
{
    val_map_node *o = val_node_own(n);
    if (!o) { *err = true; return n; }
    int c = val_key_cmp(k, kp, o);
    if (c < 0) o->left = val_delete(o->left, k, kp, err);
    else if (c > 0) o->right = val_delete(o->right, k, kp, err);
    else if (!o->left || !o->right) {
        val_map_node *child = o->left ? o->left : o->right;
        o->left = o->right = NULL;
        val_node_release(o);
        return child;
    } else {
        val_map_node *min = NULL;
        o->right = val_remove_min(o->right, &min, err);
        if (*err) return o;
        val_release(o->key);
        val_release(o->val);
        o->key = min->key;
        o->pre = min->pre;
        o->val = min->val;
        min->key = min->val = (stc_value){.tag = STC_T_UNIT};
        val_node_release(min);
    }
    return *err ? o : val_balance(o, err);
}

/* ---- Maps -------------------------------------------------------------------- */

static const stc_value val_map_invalid = {.tag = STC_T_INVALID};

static val_map *val_map_alloc(void)
{
    uint8_t cls, owner;
    val_map *m = stc__val_block_alloc(sizeof *m, &cls, &owner);
    if (!m) return NULL;
    m->hdr.refs = 1;
    m->hdr.shared = VAL_LOCAL;
    m->hdr.tag = STC_T_MAP;
    m->hdr.cls = cls;
    m->hdr.owner = owner;
    m->n = 0;
    m->root = NULL;
    return m;
}

stc_value stc__val_map_new(void)
{
    val_map *m = val_map_alloc();
    return m ? (stc_value){.tag = STC_T_MAP, .as.obj = &m->hdr} : val_map_invalid;
}

void stc__val_map_destroy(val_map *m) { val_node_release(m->root); }

void stc__val_map_mark_items(const val_map *m)
{
    stc_map_iter it;
    stc_value k, v;
    stc_map_iter_init(&it, (stc_value){.tag = STC_T_MAP, .as.obj = (stc_obj *)&m->hdr});
    while (stc_map_iter_next(&it, &k, &v)) {
        stc__val_mark_shared(k);
        stc__val_mark_shared(v);
    }
}

/* m (consumed) as a header its caller alone holds: m itself, or a new
 * header sharing m's tree.  NULL when out of memory (m released). */
static val_map *val_map_own(stc_value m)
{
    val_map *h = (val_map *)m.as.obj;
    /* (a marked map is never changed in place: see value.h, VAL_SHARED) */
    if (__atomic_load_n(&h->hdr.refs, __ATOMIC_ACQUIRE) == 1 && !val_obj_is_shared(&h->hdr)) return h;
    val_map *c = val_map_alloc();
    if (c) {
        c->n = h->n;
        c->root = val_node_retain(h->root);
    }
    val_release(m);
    return c;
}

const stc_value *stc__val_map_find(stc_value m, stc_value k)
{
    const val_map_node *n = ((const val_map *)m.as.obj)->root;
    uint64_t kp = val_key_prefix(k);
    while (n) {
        int c = val_key_cmp(k, kp, n);
        if (c == 0) return &n->val;
        n = c < 0 ? n->left : n->right;
    }
    return NULL;
}

stc_value *stc__val_map_take_slot(stc_value m, stc_value k, stc_value *v, bool *absent)
{
    *absent = false;
    val_map *h = (val_map *)m.as.obj;
    if (__atomic_load_n(&h->hdr.refs, __ATOMIC_ACQUIRE) != 1 || val_obj_is_shared(&h->hdr)) return NULL;
    val_map_node *n = h->root;
    uint64_t kp = val_key_prefix(k);
    while (n) {
        /* a node shared with another map: its value is that map's too */
        if (atomic_load_explicit(&n->refs, memory_order_acquire) != 1) return NULL;
        int c = val_key_cmp(k, kp, n);
        if (c == 0) {
            *v = n->val;
            n->val = stc_value_unit();
            return &n->val;
        }
        n = c < 0 ? n->left : n->right;
    }
    *absent = true;
    return NULL;
}

bool stc__val_map_take(stc_value m, stc_value k, stc_value *v)
{
    bool absent;
    return stc__val_map_take_slot(m, k, v, &absent) != NULL;
}

int stc__val_map_put(stc_value m, stc_value k, stc_value v, stc_value *out)
{
    *out = val_map_invalid;
    val_map *h = val_map_own(m);
    if (!h) {
        val_release(k);
        val_release(v);
        return STC_ENOMEM;
    }
    stc_value r = {.tag = STC_T_MAP, .as.obj = &h->hdr};
    bool added = false, err = false;
    h->root = val_insert(h->root, k, val_key_prefix(k), v, &added, &err);
    if (err) {
        val_release(r);
        return STC_ENOMEM;
    }
    h->n += added;
    *out = r;
    return 0;
}

int stc__val_map_remove(stc_value m, stc_value k, stc_value *out)
{
    *out = val_map_invalid;
    if (!stc__val_map_find(m, k)) {
        *out = m;
        return 0;
    }
    val_map *h = val_map_own(m);
    if (!h) return STC_ENOMEM;
    stc_value r = {.tag = STC_T_MAP, .as.obj = &h->hdr};
    bool err = false;
    h->root = val_delete(h->root, k, val_key_prefix(k), &err);
    if (err) {
        val_release(r);
        return STC_ENOMEM;
    }
    h->n--;
    *out = r;
    return 0;
}

/* A balanced tree of items[lo, hi) (sorted, distinct keys), the items
 * moved in; NULL with *err when out of memory (the items not yet moved
 * are the caller's).  Recursion depth is log2 of the count. */
static val_map_node *val_build(stc_value *keys, stc_value *vals, size_t lo, size_t hi, bool *err)
{
    if (lo >= hi || *err) return NULL;
    size_t mid = lo + (hi - lo) / 2;
    val_map_node *n = malloc(sizeof *n);
    if (!n) {
        *err = true;
        return NULL;
    }
    atomic_init(&n->refs, 1);
    n->left = val_build(keys, vals, lo, mid, err);
    n->right = val_build(keys, vals, mid + 1, hi, err);
    if (*err) { /* give back what this subtree took: the caller releases the rest */
        n->key = n->val = stc_value_unit();
        val_node_release(n);
        return NULL;
    }
    n->pre = val_key_prefix(keys[mid]);
    n->key = keys[mid];
    n->val = vals[mid];
    keys[mid] = vals[mid] = stc_value_unit();
    val_node_fix(n);
    return n;
}

int stc__val_map_from_sorted(stc_value *keys, stc_value *vals, size_t n, stc_value *out)
{
    bool err = false;
    val_map *h = val_map_alloc();
    if (h) h->root = val_build(keys, vals, 0, n, &err);
    for (size_t i = 0; i < n; i++) { /* the items left after an error */
        val_release(keys[i]);
        val_release(vals[i]);
        keys[i] = vals[i] = stc_value_unit();
    }
    if (!h || err) {
        if (h) val_release((stc_value){.tag = STC_T_MAP, .as.obj = &h->hdr});
        *out = val_map_invalid;
        return STC_ENOMEM;
    }
    h->n = n;
    *out = (stc_value){.tag = STC_T_MAP, .as.obj = &h->hdr};
    return 0;
}

void stc__val_map_iter_init(val_map_iter *it, stc_value m)
{
    it->top = 0;
    for (const val_map_node *n = ((const val_map *)m.as.obj)->root; n && it->top < VAL_MAP_MAX_HEIGHT; n = n->left)
        it->stack[it->top++] = n;
}

bool stc__val_map_iter_next(val_map_iter *it, stc_value *k, stc_value *v)
{
    if (it->top == 0) return false;
    const val_map_node *n = it->stack[--it->top];
    *k = n->key;
    *v = n->val;
    for (const val_map_node *c = n->right; c && it->top < VAL_MAP_MAX_HEIGHT; c = c->left)
        it->stack[it->top++] = c;
    return true;
}

/* The height of n when it is a valid AVL tree with keys strictly between
 * lo and hi (NULL: unbounded) and *count nodes added, else -1. */
static int val_node_check(const val_map_node *n, const stc_value *lo, const stc_value *hi, size_t *count)
{
    if (!n) return 0;
    if (n->pre != val_key_prefix(n->key)) return -1;
    if ((lo && stc__val_key_compare(*lo, n->key) >= 0) || (hi && stc__val_key_compare(n->key, *hi) >= 0)) return -1;
    int l = val_node_check(n->left, lo, &n->key, count);
    int r = val_node_check(n->right, &n->key, hi, count);
    if (l < 0 || r < 0 || l - r > 1 || r - l > 1) return -1;
    int h = 1 + (l > r ? l : r);
    if (h != n->height) return -1;
    ++*count;
    return h;
}

bool stc__val_map_check(stc_value m)
{
    const val_map *h = (const val_map *)m.as.obj;
    size_t count = 0;
    return val_node_check(h->root, NULL, NULL, &count) >= 0 && count == h->n;
}

/* ---- Regrouping maps (a keyed thread's shards) ------------------------------------ */

/* The next node of an in-order walk (the iterator of stc__val_map_iter_*). */
static val_map_node *val_iter_node(val_map_iter *it)
{
    if (it->top == 0) return NULL;
    const val_map_node *n = it->stack[--it->top];
    for (const val_map_node *c = n->right; c && it->top < VAL_MAP_MAX_HEIGHT; c = c->left) it->stack[it->top++] = c;
    return (val_map_node *)n;
}

/* Whether map m and every node of it are held once: its nodes may then be
 * taken out and relinked. */
static bool val_map_all_own(stc_value m)
{
    if (__atomic_load_n(&m.as.obj->refs, __ATOMIC_ACQUIRE) != 1 || val_obj_is_shared(m.as.obj)) return false;
    val_map_iter it;
    stc__val_map_iter_init(&it, m);
    for (val_map_node *n; (n = val_iter_node(&it));)
        if (atomic_load_explicit(&n->refs, memory_order_acquire) != 1) return false;
    return true;
}

/* A balanced tree of the nodes nodes[lo, hi) (in key order), relinked. */
static val_map_node *val_relink(val_map_node **nodes, size_t lo, size_t hi)
{
    if (lo >= hi) return NULL;
    size_t mid = lo + (hi - lo) / 2;
    val_map_node *n = nodes[mid];
    n->left = val_relink(nodes, lo, mid);
    n->right = val_relink(nodes, mid + 1, hi);
    val_node_fix(n);
    return n;
}

/* Which input map's head is lowest, or -1 (the inputs' keys are disjoint). */
static int val_lowest(val_map_node *const *head, int nin)
{
    int lo = -1;
    for (int i = 0; i < nin; i++) {
        if (!head[i]) continue;
        if (lo < 0) {
            lo = i;
            continue;
        }
        const val_map_node *a = head[i], *b = head[lo];
        if (a->pre != b->pre ? a->pre < b->pre : stc__val_key_compare(a->key, b->key) < 0) lo = i;
    }
    return lo;
}

int stc__val_map_regroup(stc_value *ins, int nin, stc_value *outs, int nout, int (*pick)(stc_value key, void *ud),
                         void *ud)
{
    size_t total = 0;
    for (int o = 0; o < nout; o++) outs[o] = stc_value_unit();
    if (nin < 1 || nout < 1 || nout > 127) return STC_EINVAL;
    for (int i = 0; i < nin; i++) {
        if (ins[i].tag != STC_T_MAP) return STC_EINVAL;
        total += val_map_len(ins[i]);
    }
    /* everything allocated before any input is touched: on failure the
     * inputs are the caller's as they were */
    val_map_node **order = malloc((total + 1) * sizeof *order), **sorted = malloc((total + 1) * sizeof *sorted);
    unsigned char *tag = malloc(total + 1); /* bits 0-6 the output, bit 7 a copied node */
    val_map_iter *its = malloc((size_t)nin * sizeof *its);
    val_map_node **head = malloc((size_t)nin * sizeof *head);
    bool *own = malloc((size_t)nin * sizeof *own);
    size_t *start = calloc((size_t)nout + 1, sizeof *start);
    val_map **maps = calloc((size_t)nout, sizeof *maps);
    bool ok = order && sorted && tag && its && head && own && start && maps;
    for (int o = 0; ok && o < nout; o++) ok = (maps[o] = val_map_alloc()) != NULL;
    size_t k = 0;
    if (ok) {
        for (int i = 0; i < nin; i++) {
            own[i] = val_map_all_own(ins[i]);
            stc__val_map_iter_init(&its[i], ins[i]);
            head[i] = val_iter_node(&its[i]);
        }
        /* the items in key order: each input's are, and for one input
         * (a split) no comparison is made */
        for (int lo; ok && (lo = nin == 1 ? (head[0] ? 0 : -1) : val_lowest(head, nin)) >= 0; k++) {
            val_map_node *n = head[lo];
            head[lo] = val_iter_node(&its[lo]);
            int to = pick ? pick(n->key, ud) : 0;
            if (to < 0 || to >= nout) to = 0;
            tag[k] = (unsigned char)to;
            if (!own[lo]) { /* shared: a copy of the node, the input keeps its own */
                val_map_node *c = malloc(sizeof *c);
                if (!(ok = c != NULL)) break;
                atomic_init(&c->refs, 1);
                c->pre = n->pre;
                c->key = val_retain(n->key);
                c->val = val_retain(n->val);
                n = c;
                tag[k] |= 0x80;
            }
            order[k] = n;
            start[to + 1]++;
        }
    }
    if (!ok) {
        for (size_t j = 0; j < k; j++)
            if (tag[j] & 0x80) {
                val_release(order[j]->key);
                val_release(order[j]->val);
                free(order[j]);
            }
        for (int o = 0; maps && o < nout; o++)
            if (maps[o]) val_release((stc_value){.tag = STC_T_MAP, .as.obj = &maps[o]->hdr});
    } else {
        for (int i = 0; i < nin; i++) {
            if (own[i]) { /* its nodes are the outputs' now: the empty map goes */
                ((val_map *)ins[i].as.obj)->root = NULL;
                ((val_map *)ins[i].as.obj)->n = 0;
            }
            val_release(ins[i]);
            ins[i] = stc_value_unit();
        }
        for (int o = 0; o < nout; o++) start[o + 1] += start[o];
        for (size_t j = 0; j < total; j++) sorted[start[tag[j] & 0x7f]++] = order[j]; /* stable: key order kept */
        size_t from = 0;
        for (int o = 0; o < nout; o++) { /* start[o] is now the end of output o */
            maps[o]->root = val_relink(sorted, from, start[o]);
            maps[o]->n = start[o] - from;
            outs[o] = (stc_value){.tag = STC_T_MAP, .as.obj = &maps[o]->hdr};
            from = start[o];
        }
    }
    free(order);
    free(sorted);
    free(tag);
    free(its);
    free(head);
    free(own);
    free(start);
    free(maps);
    return ok ? 0 : STC_ENOMEM;
}

/* tasks.c - independent items as parallel tasks (the seed's products): the
 * items of a tuple, and the bound expressions of a chain of independent
 * lets, evaluated by main (not inside a pipeline).
 *
 * Tuples: the items of `(e1, e2, ...)`.
 * Lets: `let p1 = e1 in let p2 = e2 in ... body`: the chain starts at the
 * let main offers and takes the lets below it while their bound
 * expressions are independent: it ends before the first let whose bound
 * expression reads a binder of the chain (it needs that value first), may
 * run an smap, or calls through a function value, and after
 * FLOW_LET_CHAIN_MAX lets.  e1, e2, ... run as tasks; then the binders are
 * bound in chain order and main evaluates the body as the evaluator would.
 * The let that ended the chain is in that body, so main offers it in turn:
 * it may start a chain of its own.
 *
 * Both are cut into groups of items: items that write a common thread
 * share a group and run in item order within it; different groups write
 * disjoint states and run at once on the pool.  Used when there are two
 * groups or more that call something, and no item may run an smap (an
 * smap is better off with the whole pool to itself; the pool runs one job
 * at a time).  Each group is one batch of a one-stage replicated pipeline;
 * a group stops at its first failing item.  The items share main's frame:
 * each binds only its own let slots (every binder of a function has a slot
 * of its own), and reads what was bound before the tuple or the chain.
 * If several items fail, the earliest is reported, as the evaluator would:
 * it evaluates the items in order and stops at the first failure. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "flow/flow_internal.h"
#include "sched/sched.h"
#include "trace/trace.h"
#include "value/value.h"

/* Starting tasks costs 15-20 us (waking a parked worker on our VMs):
 * a plan whose runs keep finishing within FLOW_TASK_MIN_NS gains nothing
 * from them, so after FLOW_TASK_CHEAP_RUNS such runs in a row it is left
 * to the evaluator (main recursing through a chain of tiny calls would
 * otherwise run 4x slower at 2 workers than at 1).  Which way a plan runs
 * never changes a result. */
#define FLOW_TASK_MIN_NS 100000u
#define FLOW_TASK_CHEAP_RUNS 3

/* Lets per chain at most: bounds the work of deciding (a chain that is
 * declined is offered again from its second let, and so on). */
#define FLOW_LET_CHAIN_MAX 64

typedef struct flow_tasks {
    flow_runtime *rt;      /* first: stc__flow_on_worker finds the runtime there */
    const flow_task_plan *plan;
    eval_frame *fr;
    stc_value *out;        /* item i's value goes to out[i] */
    int base_depth;
    long long item;        /* main's smap item and thread, for errors */
    const char *thread;
    int next;              /* next group to hand out (the source is serial) */
    pthread_mutex_t lock;
    int err_index;         /* earliest failing item, -1 (lock) */
    eval_err err;          /* (lock) */
} flow_tasks;

/* ---- Plans ------------------------------------------------------------------ */

/* The index of the lowest set bit of bits (not 0). */
static int flow_low_bit(uint64_t bits)
{
#if defined(__GNUC__)
    return __builtin_ctzll(bits);
#else
    int b = 0;
    while (!(bits & 1)) {
        bits >>= 1;
        b++;
    }
    return b;
#endif
}

/* The root of item i in the union-find forest parent[] (path halving). */
static int flow_task_root(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* Groups the items: items whose write sets meet share a group.  A
 * union-find over the items: each thread joins the items writing it to
 * the first one that does, so grouping is linear in the items (times the
 * words of a thread set), not quadratic.  Groups are numbered in order of
 * their first item.  Returns the number of groups that call something,
 * with tp->group filled; 0 when not worth it. */
static int flow_task_group(flow_runtime *rt, flow_task_plan *tp)
{
    flow_info *fi = rt->fi;
    int n = tp->n, *group = tp->group, nthreads = fi->p->nthreads;
    int *parent = malloc(((size_t)n + 1) * sizeof *parent);
    int *owner = malloc(((size_t)nthreads + 1) * sizeof *owner); /* per thread: first item writing it */
    int *gid = malloc(((size_t)n + 1) * sizeof *gid);            /* per root: its group, -1 */
    bool *busy = calloc((size_t)n + 1, sizeof *busy);            /* per group: calls something */
    int ngroups = 0, nbusy = 0;
    bool ok = parent && owner && gid && busy && flow_parallel_workers(rt) > 1 && n >= 2;
    for (int t = 0; ok && t < nthreads; t++) owner[t] = -1;
    for (int i = 0; i < n && ok; i++) {
        const ir_expr *item = tp->items[i];
        flow_set set = stc__flow_expr_set(fi, item);
        ok = !set.all && !stc__flow_expr_smaps(fi, item);
        parent[i] = i;
        gid[i] = -1;
        for (int w = 0; ok && set.bits && w < fi->nwords; w++)
            for (uint64_t bits = set.bits[w]; bits; bits &= bits - 1) {
                int t = w * 64 + flow_low_bit(bits);
                if (owner[t] < 0) {
                    owner[t] = i;
                    continue;
                }
                int a = flow_task_root(parent, owner[t]), b = flow_task_root(parent, i);
                if (a < b) parent[b] = a; /* the root stays the group's first item */
                else parent[a] = b;
            }
    }
    for (int i = 0; i < n && ok; i++) {
        int r = flow_task_root(parent, i);
        if (gid[r] < 0) gid[r] = ngroups++;
        group[i] = gid[r];
        if (!busy[group[i]] && stc__flow_expr_calls(fi, tp->items[i])) {
            busy[group[i]] = true;
            nbusy++;
        }
    }
    free(parent);
    free(owner);
    free(gid);
    free(busy);
    return ok && ngroups >= 2 && nbusy >= 2 ? ngroups : 0;
}

/* Whether e reads a binder of lets[0..n-1]. */
static bool flow_reads_binders(const ir_expr *e, const ir_expr *const *lets, int n)
{
    for (int j = 0; j < n; j++)
        for (int v = 0; v < lets[j]->u.let.nbinders; v++)
            if (lets[j]->u.let.binders[v] && stc__ir_expr_uses(e, lets[j]->u.let.binders[v])) return true;
    return false;
}

/* The chain of independent lets from e into lets[]; returns its length.
 * A let whose item may run an smap or calls through a function value
 * ends the chain rather than spoil it: the lets before it may still run
 * as tasks (it can only be the first item of a chain, which then is
 * declined by flow_task_group). */
static int flow_let_chain(flow_info *fi, const ir_expr *e, const ir_expr **lets)
{
    int n = 0;
    for (const ir_expr *l = e; l && (l->kind == IR_LET || l->kind == IR_LETTUPLE) && n < FLOW_LET_CHAIN_MAX;
         l = l->b) {
        if (n > 0 && (flow_reads_binders(l->a, lets, n) || stc__flow_expr_smaps(fi, l->a) || stc__flow_expr_set(fi, l->a).all))
            break;
        lets[n++] = l;
    }
    return n;
}

static flow_task_plan *flow_task_plan_new(flow_runtime *rt, const ir_expr *e)
{
    arena *mem = rt->fi->mem;
    flow_task_plan *tp = stc__arena_alloc(mem, sizeof *tp);
    if (!tp) return NULL;
    *tp = (flow_task_plan){.e = e};
    if (e->kind == IR_TUPLE) {
        tp->n = e->u.agg.nitems;
        tp->items = e->u.agg.items;
    } else {
        const ir_expr **lets = stc__arena_alloc(mem, FLOW_LET_CHAIN_MAX * sizeof *lets);
        ir_expr **items = stc__arena_alloc(mem, FLOW_LET_CHAIN_MAX * sizeof *items);
        if (!lets || !items) return NULL;
        tp->n = flow_let_chain(rt->fi, e, lets);
        for (int i = 0; i < tp->n; i++) items[i] = lets[i]->a;
        tp->lets = lets;
        tp->items = items;
    }
    if (!(tp->group = stc__arena_alloc(mem, ((size_t)tp->n + 1) * sizeof *tp->group))) return NULL;
    tp->ngroups = flow_task_group(rt, tp);
    return tp;
}

/* Where e's plan is, or goes, in the open-addressing table rt->tasks. */
static flow_task_plan **flow_task_slot(flow_task_plan **tab, int cap, const ir_expr *e)
{
    size_t mask = (size_t)cap - 1, i = (size_t)(((uint64_t)(uintptr_t)e * 0x9E3779B97F4A7C15u) >> 32) & mask;
    while (tab[i] && tab[i]->e != e) i = (i + 1) & mask;
    return &tab[i];
}

/* e's plan, made at its first offer (main offers every tuple and let it
 * evaluates, so the lookup is a hash); NULL when out of memory. */
static flow_task_plan *flow_task_plan_get(flow_runtime *rt, const ir_expr *e)
{
    if (rt->tasks_cap) {
        flow_task_plan *tp = *flow_task_slot(rt->tasks, rt->tasks_cap, e);
        if (tp) return tp;
    }
    if (2 * (rt->ntasks + 1) > rt->tasks_cap) { /* at most half full */
        int ncap = rt->tasks_cap ? 2 * rt->tasks_cap : 64;
        flow_task_plan **tab = calloc((size_t)ncap, sizeof *tab);
        if (!tab) return NULL;
        for (int i = 0; i < rt->tasks_cap; i++)
            if (rt->tasks[i]) *flow_task_slot(tab, ncap, rt->tasks[i]->e) = rt->tasks[i];
        free(rt->tasks);
        rt->tasks = tab;
        rt->tasks_cap = ncap;
    }
    flow_task_plan *tp = flow_task_plan_new(rt, e);
    if (!tp) return NULL;
    *flow_task_slot(rt->tasks, rt->tasks_cap, e) = tp;
    rt->ntasks++;
    return tp;
}

/* ---- Running the groups ----------------------------------------------------- */

static int flow_task_source(void *ud, sched_batch *b, int worker)
{
    (void)b;
    (void)worker;
    flow_tasks *t = ud;
    if (t->next >= t->plan->ngroups) return 0;
    t->next++; /* batch b->seq runs group b->seq */
    return 1;
}

static void flow_task_release(void *ud, sched_batch *b, int worker)
{
    (void)ud;
    (void)b;
    (void)worker;
}

/* A chain's item must fit its let's binders (the evaluator checks that
 * before the next let, so its error comes before any later item's). */
static int flow_task_shape(eval_ctx *cx, const flow_task_plan *tp, int i, stc_value *v)
{
    int rc = tp->lets ? eval_let_check(cx, tp->lets[i], *v) : 0;
    if (rc) {
        val_release(*v);
        *v = stc_value_unit();
    }
    return rc;
}

static sched_status flow_task_run(void *ud, int stage, sched_batch *b, int worker)
{
    (void)stage;
    flow_tasks *t = ud;
    const flow_task_plan *tp = t->plan;
    eval_ctx *cx = &t->rt->wcx[worker].cx;
    cx->stack_base = 0;
    cx->item = t->item;
    cx->thread = t->thread;
    uint64_t t0 = t->rt->trace ? stc__sched_now_ns() : 0;
    int ran = 0;
    for (int i = 0; i < tp->n; i++) {
        if (tp->group[i] != (int)b->seq) continue;
        /* The evaluator reaches a chain's item i inside i more lets. */
        cx->depth = t->base_depth + (tp->lets ? i : 0);
        ran++;
        if (stc__eval_expr(cx, tp->items[i], t->fr, &t->out[i]) == 0 && flow_task_shape(cx, tp, i, &t->out[i]) == 0)
            continue;
        eval_err err = stc__eval_error_take(cx);
        pthread_mutex_lock(&t->lock);
        if (t->err_index < 0 || i < t->err_index) {
            free(t->err.message);
            t->err = err;
            t->err_index = i;
        } else {
            free(err.message);
        }
        pthread_mutex_unlock(&t->lock);
        /* Not SCHED_STOP: that would drop the groups after this one, but
         * their items may come before the failed one. */
        break;
    }
    /* One slice per group: its items, and the group number as the batch. */
    if (t->rt->trace)
        stc__trace_slice(t->rt->trace, worker, tp->lets ? "let task" : "tuple task", "task", t0, stc__sched_now_ns(), ran,
                    (long long)b->seq);
    return SCHED_CONTINUE;
}

static void flow_task_idle(void *ud, int worker, uint64_t t0, uint64_t t1)
{
    flow_tasks *t = ud;
    stc__trace_slice(t->rt->trace, worker, "parked", "sched", t0, t1, -1, -1);
}

/* Runs tp's groups on the pool, item i's value into out[i] (unit before;
 * the caller releases them on error).  0, or the earliest failing item's
 * error code with its error in cx. */
static int flow_task_run_all(flow_runtime *rt, eval_ctx *cx, flow_task_plan *tp, eval_frame *fr, stc_value *out)
{
    if (stc__flow_start_pool(rt) != 0) return stc__eval_oom(cx, tp->e->loc);
    for (int i = 0; i < rt->workers; i++) stc__eval_ctx_share(&rt->wcx[i].cx, cx);
    flow_tasks t = {.rt = rt, .plan = tp, .fr = fr, .out = out, .base_depth = cx->depth, .item = cx->item,
                    .thread = cx->thread, .err_index = -1};
    pthread_mutex_init(&t.lock, NULL);
    static const bool parallel[1] = {false};
    sched_pipeline pl = {.nstages = 1, .serial = parallel, .run = flow_task_run, .source = flow_task_source,
                         .release = flow_task_release, .ud = &t, .max_batches = tp->ngroups,
                         .perturb_seed = rt->perturb_seed, .watchdog_ms = rt->watchdog_ms,
                         .on_idle = rt->trace ? flow_task_idle : NULL, .on_worker = stc__flow_on_worker};
    uint64_t start = stc__sched_now_ns();
    int rc = stc__sched_run(rt->pool, &pl);
    tp->cheap_runs = stc__sched_now_ns() - start < FLOW_TASK_MIN_NS ? tp->cheap_runs + 1 : 0;
    pthread_mutex_destroy(&t.lock);
    rt->stats.task_groups++;
    if (t.err_index >= 0) return stc__eval_error_adopt(cx, t.err);
    return rc != 0 ? stc__eval_oom(cx, tp->e->loc) : 0;
}

/* ---- The hooks -------------------------------------------------------------- */

int stc__flow_tuple(void *ud, eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    flow_runtime *rt = ud;
    if (flow_parallel_workers(rt) < 2) return EVAL_DECLINED; /* spare the lookup */
    flow_task_plan *tp = flow_task_plan_get(rt, e);
    if (!tp) return stc__eval_oom(cx, e->loc);
    if (tp->ngroups == 0 || tp->cheap_runs >= FLOW_TASK_CHEAP_RUNS) return EVAL_DECLINED;
    stc_value tuple = stc__val_seq_alloc(STC_T_TUPLE, (size_t)tp->n);
    if (tuple.tag == STC_T_INVALID) return stc__eval_oom(cx, e->loc);
    int rc = flow_task_run_all(rt, cx, tp, fr, val_seq_items(tuple));
    if (rc != 0) {
        val_release(tuple); /* the items not made are unit */
        return rc;
    }
    *out = tuple;
    return 0;
}

/* Runs the chain's items as tasks and binds their values in chain order.
 * Apart from stc__flow_lets so that vals is off the stack while the body runs
 * (a recursion through chains nests stc__flow_lets frames). */
static FLOW_NOINLINE int flow_lets_bind(flow_runtime *rt, eval_ctx *cx, flow_task_plan *tp, eval_frame *fr)
{
    stc_value vals[FLOW_LET_CHAIN_MAX];
    for (int i = 0; i < tp->n; i++) vals[i] = stc_value_unit();
    int rc = flow_task_run_all(rt, cx, tp, fr, vals);
    if (rc != 0) {
        for (int i = 0; i < tp->n; i++) val_release(vals[i]);
        return rc;
    }
    for (int i = 0; i < tp->n; i++) { /* each checked by its task: binding cannot fail */
        if (rc == 0) rc = eval_let_bind(cx, tp->lets[i], fr, vals[i]);
        else val_release(vals[i]);
    }
    return rc;
}

int stc__flow_lets(void *ud, eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    flow_runtime *rt = ud;
    if (flow_parallel_workers(rt) < 2) return EVAL_DECLINED; /* spare the lookup */
    flow_task_plan *tp = flow_task_plan_get(rt, e);
    if (!tp) return stc__eval_oom(cx, e->loc);
    if (tp->ngroups == 0 || tp->cheap_runs >= FLOW_TASK_CHEAP_RUNS) return EVAL_DECLINED;
    int rc = flow_lets_bind(rt, cx, tp, fr);
    if (rc != 0) return rc;
    /* The body, at the depth it has inside the chain's last let; a let in
     * it is offered to stc__flow_lets again. */
    int inner = tp->n - 1;
    cx->depth += inner;
    rc = stc__eval_expr(cx, tp->lets[inner]->b, fr, out);
    cx->depth -= inner;
    for (int i = inner; i >= 0; i--) eval_let_unbind(fr, tp->lets[i]);
    return rc;
}

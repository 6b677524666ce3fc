/* describe.c - names for plans and stages, as users see them in graphs,
 * traces and profiles: a stage is named after the threads it runs (or the
 * functions a replicated stage calls) and the source line it starts at. */
#include <stdio.h>
#include <string.h>

#include "flow/flow.h"
#include "util/buf.h"

/* The name a step contributes: a thread, a function, a builtin, "if",
 * "case", or NULL (plain arithmetic and the like). */
static const char *flow_step_label(const flow_info *fi, const flow_step *s, bool *is_thread)
{
    const ir_program *p = fi->p;
    *is_thread = false;
    switch (s->kind) {
    case FS_SELECT_IF: return "if";
    case FS_SELECT_CASE: return "case";
    case FS_DESTRUCT: return NULL;
    case FS_SPLIT_OUT:
    case FS_SPLIT_STATE:
    case FS_CALL_C:
    case FS_KEYED:
    case FS_IKEYED: *is_thread = true; return p->threads[s->thread]->name;
    case FS_SHARD:
    case FS_ISHARD: return "shard";
    case FS_EVAL: break;
    }
    const ir_expr *e = s->e;
    if (e->kind != IR_CALL) return NULL;
    int idx = e->u.call.callee.index;
    switch (e->u.call.kind) {
    case CALL_THREAD: *is_thread = true; return p->threads[idx]->name;
    case CALL_FUN: return p->funs[idx]->name;
    case CALL_BUILTIN: return stc__ir_builtins[idx].name;
    default: return "call";
    }
}

void stc__flow_stage_describe(const flow_info *fi, const flow_plan *pl, int stage, buf *out)
{
    const flow_stage *st = &pl->stages[stage];
    const char *seen[8];
    int nseen = 0;
    bool more = false;
    for (int k = st->first; k < st->first + st->count; k++) {
        const flow_step *s = &pl->steps[k];
        bool is_thread;
        const char *name = flow_step_label(fi, s, &is_thread);
        if (s->kind == FS_SPLIT_OUT && st->serial) name = NULL; /* named by its state step */
        if (!name) continue;
        bool dup = false;
        for (int i = 0; i < nseen; i++) dup |= !strcmp(seen[i], name);
        if (dup) continue;
        if (nseen < 8) seen[nseen++] = name;
        else more = true;
    }
    for (int i = 0; i < nseen; i++) stc__buf_printf(out, "%s%s", i ? " + " : "", seen[i]);
    if (more) stc__buf_printf(out, " + ...");
    if (!nseen) stc__buf_printf(out, st->serial ? "serial" : "pure");
    if (st->nshards) stc__buf_printf(out, " [shard %d/%d]", st->shard + 1, st->nshards);
}

/* Short words for what kind of stage this is. */
const char *stc__flow_stage_kind(const flow_info *fi, const flow_plan *pl, int stage)
{
    const flow_stage *st = &pl->stages[stage];
    int thread_steps = 0, splits = 0, selects = 0;
    for (int k = st->first; k < st->first + st->count; k++) {
        const flow_step *s = &pl->steps[k];
        bool is_thread;
        flow_step_label(fi, s, &is_thread);
        thread_steps += is_thread && s->kind != FS_SPLIT_OUT;
        splits += s->kind == FS_SPLIT_STATE || s->kind == FS_SPLIT_OUT;
        selects += s->kind == FS_SELECT_IF || s->kind == FS_SELECT_CASE;
    }
    if (st->nshards) return "serial, keyed shard";
    if (st->serial) {
        if (thread_steps > 1 || (st->count > 1 && thread_steps == 1 && selects)) return "serial, fused segment";
        if (splits) return "serial, state fold (g x h)";
        return "serial";
    }
    if (selects) return "replicated, split";
    if (splits) return "replicated, output (g x h)";
    return "replicated";
}

/* Why a serial stage's step could not be planned through: it calls a
 * recursive function or a function value, or runs an smap. */
static bool flow_step_why(const flow_info *fi, const flow_step *s, buf *out)
{
    const ir_expr *e = s->e;
    if (s->kind != FS_EVAL || !e || stc__flow_set_empty(fi, s->writes)) return false;
    if (e->kind == IR_CALL && e->u.call.kind == CALL_FUN && fi->fun_recursive[e->u.call.callee.index]) {
        stc__buf_printf(out, "calls recursive function %s", fi->p->funs[e->u.call.callee.index]->name);
        return true;
    }
    if (s->writes.all) {
        stc__buf_printf(out, "calls a function value");
        return true;
    }
    if (e->kind == IR_CALL && e->u.call.kind == CALL_BUILTIN && e->u.call.callee.index == BI_SMAP) {
        stc__buf_printf(out, "runs an smap");
        return true;
    }
    if (e->kind == IR_CALL && e->u.call.kind == CALL_FUN) {
        stc__buf_printf(out, "calls function %s", fi->p->funs[e->u.call.callee.index]->name);
        return true;
    }
    return false;
}

void stc__flow_stage_kind_why(const flow_info *fi, const flow_plan *pl, int stage, buf *out)
{
    const flow_stage *st = &pl->stages[stage];
    stc__buf_puts(out, stc__flow_stage_kind(fi, pl, stage));
    if (!st->serial) return;
    if (st->why) { /* a keyed call that is not sharded (shards.c) */
        stc__buf_printf(out, " (keyed thread %s %s)", st->why_thread >= 0 ? fi->p->threads[st->why_thread]->name : "?",
                        st->why);
        return;
    }
    for (int k = st->first; k < st->first + st->count; k++) {
        buf why = BUF_INIT;
        bool found = flow_step_why(fi, &pl->steps[k], &why);
        if (found) stc__buf_printf(out, " (%s)", why.data ? why.data : "?");
        if (!buf_ok(&why)) out->failed = true;
        stc__buf_free(&why);
        if (found) return;
    }
}

int stc__flow_stage_line(const flow_plan *pl, int stage)
{
    const flow_stage *st = &pl->stages[stage];
    for (int k = st->first; k < st->first + st->count; k++)
        if (pl->steps[k].e && pl->steps[k].e->loc.line > 0) return pl->steps[k].e->loc.line;
    return pl->smap ? pl->smap->loc.line : 0;
}

/* Whether a branch flag guards any step of the stage: the stage runs only
 * for some items (a branch of a split). */
bool stc__flow_stage_guarded(const flow_plan *pl, int stage)
{
    const flow_stage *st = &pl->stages[stage];
    for (int k = st->first; k < st->first + st->count; k++)
        if (pl->steps[k].guard >= 0) return true;
    return false;
}

/* The type of what the stage's last value-producing step computes. */
const ir_expr *stc__flow_stage_output(const flow_plan *pl, int stage)
{
    const flow_stage *st = &pl->stages[stage];
    for (int k = st->first + st->count - 1; k >= st->first; k--) {
        const flow_step *s = &pl->steps[k];
        if (s->dst >= 0 && s->e) return s->e;
        /* a select or let-tuple on a variable reads its slot (compile.c):
         * the variable is what it hands on, as a step copying it would */
        if ((s->kind == FS_SELECT_IF || s->kind == FS_SELECT_CASE || s->kind == FS_DESTRUCT) && s->e &&
            s->e->a && s->e->a->kind == IR_VAR)
            return s->e->a;
    }
    return NULL;
}

static void flow_walk(const ir_expr *e, void (*visit)(const ir_expr *, void *), void *ud, int depth)
{
    if (!e || depth > IR_MAX_DEPTH + 8) return;
    if (e->kind == IR_BINOP) { /* a chain by a loop, its operands in order (ir_chain in ir.h) */
        ir_chain c;
        if (stc__ir_chain_init(&c, e)) {
            flow_walk(c.nodes[c.n - 1]->a, visit, ud, depth + 1);
            for (size_t i = c.n; i-- > 0;) flow_walk(c.nodes[i]->b, visit, ud, depth + 1);
        }
        stc__ir_chain_free(&c);
        return;
    }
    if (e->kind == IR_CALL && e->u.call.kind == CALL_BUILTIN && e->u.call.callee.index == BI_SMAP) visit(e, ud);
    switch (e->kind) {
    case IR_LAMBDA: flow_walk(e->u.fn->body, visit, ud, depth + 1); return;
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++) flow_walk(e->u.call.args[i], visit, ud, depth + 1);
        return;
    case IR_CASE:
        flow_walk(e->a, visit, ud, depth + 1);
        for (int i = 0; i < e->u.cas.nalts; i++) flow_walk(e->u.cas.alts[i].body, visit, ud, depth + 1);
        return;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++) flow_walk(e->u.agg.items[i], visit, ud, depth + 1);
        return;
    default:
        flow_walk(e->a, visit, ud, depth + 1);
        flow_walk(e->b, visit, ud, depth + 1);
        flow_walk(e->c, visit, ud, depth + 1);
        return;
    }
}

void stc__flow_each_smap(const ir_program *p, void (*visit)(const ir_expr *smap, void *ud), void *ud)
{
    flow_walk(p->main, visit, ud, 0);
    for (int i = 0; i < p->nfuns; i++) flow_walk(p->funs[i]->body, visit, ud, 0);
}

flow_plan *stc__flow_plan_static(flow_info *fi, const ir_expr *smap)
{
    const ir_expr *f = smap->u.call.args[0];
    switch (f->kind) {
    case IR_LAMBDA: return stc__flow_plan_build(fi, smap, f->u.fn, -1);
    case IR_FUNREF: return stc__flow_plan_build(fi, smap, fi->p->funs[f->u.index], -1);
    case IR_THREADREF: return stc__flow_plan_build(fi, smap, NULL, f->u.index);
    default: return NULL;
    }
}

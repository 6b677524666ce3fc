/* graph.c - the compiled dataflow graph as Graphviz DOT (stc_program_graph,
 * `stc graph`).
 *
 * Stage view: one cluster per smap of the program, a node per pipeline
 * stage named after its threads (or the functions a replicated stage
 * calls) and its source line, marked serial / replicated / split / fused
 * segment / g x h; edges carry the type of what flows.  Replicated stages
 * are drawn as stacked boxes.  Thread view (the seed's multigraph): types
 * are nodes, every thread is an edge from its input type to its output. */
#include "flow/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow.h"
#include "util/buf.h"

typedef struct graph_ctx {
    flow_info *fi;
    buf *out;
    const char *file;
    int n;       /* smaps drawn */
    int ranks;   /* > 1: say where each stage runs under stc run --mpi */
    int workers; /* > 0: shards as a run at this many workers has them; 0: drawn as 1/S .. S/S */
    bool oom;
} graph_ctx;

/* A DOT string literal's body: " and \ escaped. */
static void graph_quote(buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') stc__buf_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) stc__buf_printf(b, " ");
        else stc__buf_printf(b, "%c", *s);
    }
}

static void graph_type(buf *b, ir_type *t)
{
    char *s = t ? stc__ir_type_to_string(t) : NULL;
    graph_quote(b, s ? s : "?");
    free(s);
}

static ir_type *graph_elem(ir_type *list)
{
    list = list ? stc__ir_type_resolve(list) : NULL;
    return list && list->kind == TY_LIST ? list->args[0] : NULL;
}

/* The input and output types of the function f names (a lambda, a
 * function or a thread reference), where known. */
static void graph_fn_types(const ir_program *p, const ir_expr *f, ir_type **in, ir_type **out)
{
    const ir_fun *fn = f->kind == IR_LAMBDA ? f->u.fn : f->kind == IR_FUNREF ? p->funs[f->u.index] : NULL;
    if (fn && fn->nparams == 1 && fn->params[0]->type && fn->body->type) {
        *in = fn->params[0]->type;
        *out = fn->body->type;
    } else if (f->kind == IR_THREADREF) {
        *in = p->threads[f->u.index]->in_type;
        *out = p->threads[f->u.index]->out_type;
    }
}

/* A shard stage's name ends " [shard i/N]" (N = FLOW_GRAPH_SHARDS, not a
 * run's): the first reads "[shard 1/S]", the last "[shard S/S]". */
static void graph_shard_label(char *text, const flow_stage *st)
{
    char *at = text && st->nshards ? strrchr(text, '[') : NULL;
    if (!at || strncmp(at, "[shard ", 7) != 0) return;
    snprintf(at, strlen(at) + 1, st->shard + 1 == st->nshards ? "[shard S/S]" : st->shard == 0 ? "[shard 1/S]" : "[shard %d/S]",
             st->shard + 1);
}

/* One cluster: smap's pipeline pl (NULL: not known before the run); via,
 * when smap maps a parameter, the call that passes it fn, the function pl
 * maps. */
static void graph_cluster(graph_ctx *g, const ir_expr *smap, const flow_plan *pl, const ir_expr *via,
                          const ir_expr *fn)
{
    buf *b = g->out;
    int id = g->n++;
    stc__buf_printf(b, "  subgraph cluster_%d {\n    label=\"smap at ", id);
    graph_quote(b, g->file);
    stc__buf_printf(b, ":%d:%d", smap->loc.line, smap->loc.col);
    if (via) stc__buf_printf(b, " (function from the call at %d:%d)", via->loc.line, via->loc.col);
    if (!pl) stc__buf_printf(b, " (its function is a value: planned at run time)");
    else stc__buf_printf(b, ", %d stage%s", pl->nstages, pl->nstages == 1 ? "" : "s");
    bool sharded = false;
    for (int s = 0; pl && s < pl->nstages; s++) sharded |= pl->stages[s].nshards > 0;
    if (sharded && g->workers)
        stc__buf_printf(b, " at %d worker%s, a keyed thread in %d shards", g->workers, g->workers == 1 ? "" : "s",
                        g->fi->nshards);
    else if (sharded && g->ranks > 1) /* and one per other rank */
        stc__buf_printf(b, " drawn, a keyed thread's shards as 1/S and S/S (S = a run's workers + %d, at most %d)",
                        g->ranks - 1, FLOW_MAX_SHARDS);
    else if (sharded) /* a run's shard count is its workers': two stand for them */
        stc__buf_printf(b, " drawn, a keyed thread's shards as 1/S and S/S (S = a run's workers, at most %d)",
                        FLOW_MAX_SHARDS);
    stc__buf_printf(b, "\";\n    style=rounded; color=\"#999999\";\n");
    stc__buf_printf(b, "    p%d_in [label=\"items\", shape=invhouse, fillcolor=\"#eeeeee\"];\n", id);
    stc__buf_printf(b, "    p%d_out [label=\"results in list order\", shape=house, fillcolor=\"#eeeeee\"];\n", id);
    ir_type *in_t = graph_elem(smap->u.call.args[1]->type), *out_t = graph_elem(smap->type);
    if (via) graph_fn_types(g->fi->p, fn, &in_t, &out_t); /* the helper's types are generic */
    if (!pl || pl->nstages == 0) {
        stc__buf_printf(b, "    p%d_in -> p%d_out [label=\"", id, id);
        graph_type(b, in_t);
        stc__buf_printf(b, "\"];\n  }\n");
        return;
    }
    for (int s = 0; s < pl->nstages; s++) {
        bool serial = pl->stages[s].serial;
        stc__buf_printf(b, "    p%d_s%d [label=\"", id, s);
        buf name = BUF_INIT;
        stc__flow_stage_describe(g->fi, pl, s, &name);
        char *text = stc__buf_take(&name);
        if (!g->workers) graph_shard_label(text, &pl->stages[s]);
        graph_quote(b, text ? text : "?");
        free(text);
        buf kind = BUF_INIT;
        stc__flow_stage_kind_why(g->fi, pl, s, &kind);
        char *kind_text = stc__buf_take(&kind);
        stc__buf_printf(b, "\\n");
        graph_quote(b, kind_text ? kind_text : "?");
        free(kind_text);
        /* remote.c's choice: replicated, no function value and no thread
         * but read-only ones called, something called; rank 0 too when
         * every credit is used */
        if (g->ranks > 1 && s < 64 && (pl->remote_ok >> s & 1))
            stc__buf_printf(b, "\\nranks 0-%d", g->ranks - 1);
        else if (g->ranks > 1 && s < 64 && (pl->remote_owned >> s & 1)) /* owned.c: one rank, by cost */
            stc__buf_printf(b, "\\none of ranks 0-%d", g->ranks - 1);
        else if (g->ranks > 1)
            stc__buf_printf(b, "\\nrank 0");
        stc__buf_printf(b, "%s · line %d\", shape=%s, fillcolor=\"%s\"%s];\n",
                   stc__flow_stage_guarded(pl, s) && !pl->stages[s].nshards ? ", branch" : "",
                   stc__flow_stage_line(pl, s), serial ? "box" : "box3d", serial ? "#f4cccc" : "#d9ead3",
                   stc__flow_stage_guarded(pl, s) ? ", style=\"rounded,filled,dashed\"" : "");
    }
    ir_type *carried = in_t; /* a stage that hands on nothing new passes on what it got */
    for (int s = 0; s <= pl->nstages; s++) {
        if (s == 0) stc__buf_printf(b, "    p%d_in -> p%d_s0 [label=\"", id, id);
        else if (s == pl->nstages) stc__buf_printf(b, "    p%d_s%d -> p%d_out [label=\"", id, s - 1, id);
        else stc__buf_printf(b, "    p%d_s%d -> p%d_s%d [label=\"", id, s - 1, id, s);
        if (s == 0) graph_type(b, in_t);
        else if (s == pl->nstages) graph_type(b, out_t);
        else {
            const ir_expr *o = stc__flow_stage_output(pl, s - 1);
            if (o && o->type) carried = o->type;
            graph_type(b, carried);
        }
        stc__buf_printf(b, "\"];\n");
    }
    stc__buf_printf(b, "  }\n");
}

static void graph_smap(const ir_expr *smap, void *ud)
{
    graph_ctx *g = ud;
    flow_plan *pl = stc__flow_plan_static(g->fi, smap);
    const ir_expr **fns = NULL, **calls = NULL;
    int n = pl ? 0 : stc__flow_param_fns(g->fi->p, smap, &fns, &calls);
    if (n < 0) g->oom = true;
    for (int i = 0; i < n; i++) graph_cluster(g, smap, stc__flow_plan_for_fn(g->fi, smap, fns[i]), calls[i], fns[i]);
    if (n <= 0) graph_cluster(g, smap, pl, NULL, NULL);
    free(fns);
    free(calls);
}

static const char *graph_access(const flow_info *fi, int t)
{
    const ir_thread *th = fi->p->threads[t];
    if (fi->readonly[t]) return th->kind == THREAD_C && th->cdef->access == STC_PURE ? "pure" : "reads";
    if (fi->split[t]) return "g x h";
    return "writes";
}

/* The seed's view: types as nodes, threads as edges between them. */
static void graph_threads(graph_ctx *g)
{
    const ir_program *p = g->fi->p;
    buf *b = g->out;
    char **types = calloc((size_t)(2 * p->nthreads + 1), sizeof *types);
    int ntypes = 0;
    if (!types) {
        g->oom = true;
        return;
    }
    for (int t = 0; t < p->nthreads; t++) {
        ir_type *ends[2] = {p->threads[t]->in_type, p->threads[t]->out_type};
        int idx[2];
        for (int k = 0; k < 2; k++) {
            char *s = ends[k] ? stc__ir_type_to_string(ends[k]) : NULL;
            if (!s) {
                g->oom = true;
                break;
            }
            idx[k] = -1;
            for (int i = 0; i < ntypes; i++)
                if (!strcmp(types[i], s)) idx[k] = i;
            if (idx[k] < 0) {
                types[ntypes] = s;
                idx[k] = ntypes++;
                stc__buf_printf(b, "  t%d [label=\"", idx[k]);
                graph_quote(b, s);
                stc__buf_printf(b, "\", shape=ellipse, fillcolor=\"#eeeeee\"];\n");
            } else {
                free(s);
            }
        }
        if (g->oom) break;
        stc__buf_printf(b, "  t%d -> t%d [label=\"", idx[0], idx[1]);
        graph_quote(b, p->threads[t]->name);
        stc__buf_printf(b, " (%s)\"];\n", graph_access(g->fi, t));
    }
    for (int i = 0; i < ntypes; i++) free(types[i]);
    free(types);
}

char *stc__flow_graph(const ir_program *p, int view, int ranks, int workers)
{
    if (!p || (view != STC_GRAPH_STAGES && view != STC_GRAPH_THREADS) || workers < 0) return NULL;
    flow_info *fi = stc__flow_info_new(p);
    if (!fi) return NULL;
    /* as the runtime sets it: a shard per worker, and per other rank at K ranks (runtime.c) */
    if (workers) fi->nshards = stc__flow_shards_for(workers + (ranks > 1 ? ranks - 1 : 0));
    buf b = BUF_INIT;
    graph_ctx g = {fi, &b, p->file ? p->file : "<input>", 0, view == STC_GRAPH_STAGES ? ranks : 0, workers, false};
    stc__buf_printf(&b, "digraph stc {\n  rankdir=LR;\n  node [style=\"rounded,filled\", fontname=\"Helvetica\"];\n"
                   "  edge [fontname=\"Helvetica\", fontsize=10];\n");
    if (view == STC_GRAPH_THREADS) graph_threads(&g);
    else stc__flow_each_smap(p, graph_smap, &g);
    if (view == STC_GRAPH_STAGES && g.n == 0)
        stc__buf_printf(&b, "  none [label=\"no smap: nothing runs in parallel\", shape=note];\n");
    stc__buf_printf(&b, "}\n");
    stc__flow_info_free(fi);
    char *text = stc__buf_take(&b);
    if (g.oom) {
        free(text);
        return NULL;
    }
    return text;
}

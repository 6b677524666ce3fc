/* calls.c - the program's call graph: which top-level functions are
 * recursive (on a cycle of direct calls, a function calling itself
 * included), so that the plan compiler (compile.c) may plan a call to any
 * other function as if its body were written in place.  Edges are the
 * direct calls (CALL_FUN) anywhere in a body, lambdas written in it
 * included; a call through a function value is never planned through, so
 * it adds no edge.  Cycles are found by Tarjan's algorithm with an
 * explicit stack: linear in the program, whatever the depth of its calls. */
#include <stdlib.h>
#include <string.h>

#include "flow/flow.h"

typedef struct calls_graph {
    int *first; /* per function: its edges are to[first[f] .. first[f + 1]) */
    int *to;
    int nedges, cap;
    bool oom;
} calls_graph;

static void calls_add(calls_graph *g, int callee)
{
    if (g->oom) return;
    if (g->nedges == g->cap) {
        int ncap = g->cap ? 2 * g->cap : 64;
        int *n = realloc(g->to, (size_t)ncap * sizeof *n);
        if (!n) {
            g->oom = true;
            return;
        }
        g->to = n;
        g->cap = ncap;
    }
    g->to[g->nedges++] = callee;
}

/* Adds an edge for every direct call in e. */
static void calls_collect(calls_graph *g, const ir_program *p, const ir_expr *e)
{
    while (e && !g->oom) {
        switch (e->kind) {
        case IR_BINOP: /* a chain: its left spine by the loop */
            calls_collect(g, p, e->b);
            e = e->a;
            continue;
        case IR_LAMBDA: e = e->u.fn->body; continue;
        case IR_CALL:
            if (e->u.call.kind == CALL_FUN && e->u.call.callee.index >= 0 && e->u.call.callee.index < p->nfuns)
                calls_add(g, e->u.call.callee.index);
            for (int i = 0; i < e->u.call.nargs; i++) calls_collect(g, p, e->u.call.args[i]);
            return;
        case IR_CASE:
            calls_collect(g, p, e->a);
            for (int i = 0; i < e->u.cas.nalts; i++) calls_collect(g, p, e->u.cas.alts[i].body);
            return;
        case IR_TUPLE:
        case IR_LIST:
            for (int i = 0; i < e->u.agg.nitems; i++) calls_collect(g, p, e->u.agg.items[i]);
            return;
        default:
            calls_collect(g, p, e->a);
            calls_collect(g, p, e->b);
            e = e->c;
            continue;
        }
    }
}

/* Tarjan's strongly connected components over g; marks rec[f] for every
 * function in a component of two or more, or with an edge to itself. */
static int calls_tarjan(const calls_graph *g, int n, bool *rec)
{
    int *index = malloc((size_t)n * sizeof *index), *low = malloc((size_t)n * sizeof *low);
    int *stack = malloc((size_t)n * sizeof *stack), *call = malloc((size_t)n * sizeof *call);
    int *edge = malloc((size_t)n * sizeof *edge);
    bool *on = calloc((size_t)n, 1);
    int rc = -1;
    if (!index || !low || !stack || !call || !edge || !on) goto done;
    for (int i = 0; i < n; i++) index[i] = -1;
    int next = 0, sp = 0;
    for (int root = 0; root < n; root++) {
        if (index[root] >= 0) continue;
        int depth = 0; /* call[0..depth) is the DFS path, edge[] the next edge of each */
        call[depth] = root;
        edge[depth++] = g->first[root];
        index[root] = low[root] = next++;
        stack[sp++] = root;
        on[root] = true;
        while (depth > 0) {
            int v = call[depth - 1];
            if (edge[depth - 1] < g->first[v + 1]) {
                int w = g->to[edge[depth - 1]++];
                if (w == v) rec[v] = true;
                if (index[w] < 0) {
                    index[w] = low[w] = next++;
                    stack[sp++] = w;
                    on[w] = true;
                    call[depth] = w;
                    edge[depth++] = g->first[w];
                } else if (on[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            depth--;
            if (depth > 0 && low[v] < low[call[depth - 1]]) low[call[depth - 1]] = low[v];
            if (low[v] != index[v]) continue;
            int size = 0, w;
            int top = sp;
            do {
                w = stack[--sp];
                on[w] = false;
                size++;
            } while (w != v);
            if (size > 1)
                for (int k = sp; k < top; k++) rec[stack[k]] = true;
        }
    }
    rc = 0;
done:
    free(index);
    free(low);
    free(stack);
    free(call);
    free(edge);
    free(on);
    return rc;
}

int stc__flow_calls_analyze(flow_info *fi)
{
    const ir_program *p = fi->p;
    int n = p->nfuns > 0 ? p->nfuns : 0;
    fi->fun_recursive = stc__arena_alloc(fi->mem, (size_t)n + 1);
    if (!fi->fun_recursive) return -1;
    memset(fi->fun_recursive, 0, (size_t)n + 1);
    calls_graph g = {0};
    g.first = malloc(((size_t)n + 1) * sizeof *g.first);
    if (!g.first) return -1;
    for (int f = 0; f < n; f++) {
        g.first[f] = g.nedges;
        calls_collect(&g, p, p->funs[f]->body);
    }
    g.first[n] = g.nedges;
    int rc = g.oom ? -1 : calls_tarjan(&g, n, fi->fun_recursive);
    free(g.first);
    free(g.to);
    return rc;
}

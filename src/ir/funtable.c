/* funtable.c - a program's functions numbered (funtable.h). */
#include "ir/funtable.h"

#include <stdlib.h>

static int add(ir_fun_table *t, ir_fun *f)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 32;
        ir_fun **fs = realloc(t->funs, cap * sizeof *fs);
        if (!fs) return STC_ENOMEM;
        t->funs = fs;
        t->cap = cap;
    }
    stc__val_memo_put(&t->ids, f, NULL, t->n, 0);
    if (t->ids.failed) return STC_ENOMEM;
    t->funs[t->n++] = f;
    return 0;
}

/* The lambdas of e, outermost first.  Recursion is bounded by the
 * parser's nesting limit (IR_MAX_DEPTH). */
static int walk(ir_fun_table *t, const ir_expr *e)
{
    if (!e) return 0;
    int rc = 0;
    if (e->kind == IR_LAMBDA && (rc = add(t, e->u.fn))) return rc;
    if (e->kind == IR_LAMBDA) return walk(t, e->u.fn->body);
    if ((rc = walk(t, e->a)) || (rc = walk(t, e->b)) || (rc = walk(t, e->c))) return rc;
    switch (e->kind) {
    case IR_CASE:
        for (int i = 0; i < e->u.cas.nalts && !rc; i++) rc = walk(t, e->u.cas.alts[i].body);
        break;
    case IR_TUPLE: case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems && !rc; i++) rc = walk(t, e->u.agg.items[i]);
        break;
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs && !rc; i++) rc = walk(t, e->u.call.args[i]);
        break;
    default: break;
    }
    return rc;
}

int stc__ir_fun_table_build(const ir_program *p, ir_fun_table *t)
{
    *t = (ir_fun_table){NULL, 0, 0, VAL_MEMO_INIT};
    int rc = 0;
    for (int i = 0; i < p->nfuns && !rc; i++) rc = add(t, p->funs[i]);
    for (int i = 0; i < p->nfuns && !rc; i++) rc = walk(t, p->funs[i]->body);
    for (int i = 0; i < p->nthreads && !rc; i++) rc = walk(t, p->threads[i]->init);
    if (!rc) rc = walk(t, p->main);
    if (rc) stc__ir_fun_table_free(t);
    return rc;
}

void stc__ir_fun_table_free(ir_fun_table *t)
{
    free(t->funs);
    stc__val_memo_free(&t->ids);
    *t = (ir_fun_table){NULL, 0, 0, VAL_MEMO_INIT};
}

static int64_t table_id(void *ud, const void *code)
{
    size_t id;
    return stc__val_memo_get(&((ir_fun_table *)ud)->ids, code, NULL, &id, NULL) ? (int64_t)id : -1;
}

static const void *table_code(void *ud, uint64_t id, size_t ncaps)
{
    const ir_fun_table *t = ud;
    if (id >= t->n) return NULL;
    const ir_fun *f = t->funs[id];
    /* a top-level function captures nothing; a lambda its captures */
    return (size_t)(f->index >= 0 ? 0 : f->ncaptures) == ncaps ? f : NULL;
}

wire_funcs stc__ir_fun_table_wire(ir_fun_table *t) { return (wire_funcs){t, table_id, table_code}; }

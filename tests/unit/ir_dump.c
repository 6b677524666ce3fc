/* ir_dump.c - test-only IR printer (see ir_dump.h). */
#include "ir_dump.h"

#include <stdlib.h>

#include "util/buf.h"

static void dump_loc(buf *b, ir_loc loc, bool locs)
{
    if (locs) stc__buf_printf(b, "@%d:%d", loc.line, loc.col);
}

static void dump_value(buf *b, stc_value v)
{
    char *s = stc_value_to_text(v);
    stc__buf_puts(b, s ? s : "?");
    free(s);
}

static void dump_type(buf *b, ir_type *t)
{
    char *s = stc__ir_type_to_string(t);
    stc__buf_puts(b, s ? s : "?");
    free(s);
}

static void dump_expr(buf *b, const ir_expr *e, bool locs, int depth);

static void dump_sub(buf *b, const ir_expr *e, bool locs, int depth)
{
    stc__buf_putc(b, ' ');
    dump_expr(b, e, locs, depth + 1);
}

static void dump_head(buf *b, const char *head, const ir_expr *e, bool locs)
{
    stc__buf_printf(b, "(%s", head);
    dump_loc(b, e->loc, locs);
}

static void dump_var(buf *b, const ir_var *v, bool locs)
{
    stc__buf_puts(b, v ? v->name : "?");
    if (v) dump_loc(b, v->loc, locs);
}

static void dump_alt(buf *b, const ir_alt *a, bool locs, int depth)
{
    stc__buf_puts(b, " (");
    switch (a->pat) {
    case PAT_LIT: dump_value(b, a->lit); break;
    case PAT_WILD: stc__buf_putc(b, '_'); break;
    case PAT_VAR: dump_var(b, a->vars[0], locs); break;
    case PAT_INL:
    case PAT_INR:
        stc__buf_puts(b, a->pat == PAT_INL ? "(inl " : "(inr ");
        dump_var(b, a->vars[0], locs);
        stc__buf_putc(b, ')');
        break;
    case PAT_TUPLE:
        stc__buf_putc(b, '(');
        for (int i = 0; i < a->nvars; i++) {
            if (i) stc__buf_putc(b, ' ');
            dump_var(b, a->vars[i], locs);
        }
        stc__buf_putc(b, ')');
        break;
    }
    dump_loc(b, a->loc, locs);
    stc__buf_puts(b, " =>");
    dump_sub(b, a->body, locs, depth);
    stc__buf_putc(b, ')');
}

static void dump_expr(buf *b, const ir_expr *e, bool locs, int depth)
{
    if (!e) { stc__buf_puts(b, "NULL"); return; }
    if (depth > IR_MAX_DEPTH + 5) { stc__buf_puts(b, "..."); return; }
    switch (e->kind) {
    case IR_LIT:
        dump_value(b, e->u.lit);
        dump_loc(b, e->loc, locs);
        return;
    case IR_NAME:
        stc__buf_puts(b, e->u.name);
        dump_loc(b, e->loc, locs);
        return;
    case IR_VAR:
        dump_var(b, e->u.var, false);
        dump_loc(b, e->loc, locs);
        return;
    case IR_FUNREF: stc__buf_printf(b, "(funref %d)", e->u.index); return;
    case IR_THREADREF: stc__buf_printf(b, "(threadref %d)", e->u.index); return;
    case IR_LET:
    case IR_LETTUPLE:
        dump_head(b, "let", e, locs);
        stc__buf_putc(b, ' ');
        if (e->kind == IR_LETTUPLE) stc__buf_putc(b, '(');
        for (int i = 0; i < e->u.let.nbinders; i++) {
            if (i) stc__buf_putc(b, ' ');
            dump_var(b, e->u.let.binders[i], locs);
        }
        if (e->kind == IR_LETTUPLE) stc__buf_putc(b, ')');
        dump_sub(b, e->a, locs, depth);
        dump_sub(b, e->b, locs, depth);
        break;
    case IR_IF:
        dump_head(b, "if", e, locs);
        dump_sub(b, e->a, locs, depth);
        dump_sub(b, e->b, locs, depth);
        dump_sub(b, e->c, locs, depth);
        break;
    case IR_CASE:
        dump_head(b, "case", e, locs);
        dump_sub(b, e->a, locs, depth);
        for (int i = 0; i < e->u.cas.nalts; i++) dump_alt(b, &e->u.cas.alts[i], locs, depth);
        break;
    case IR_LAMBDA:
        dump_head(b, "fn", e, locs);
        stc__buf_puts(b, " (");
        for (int i = 0; i < e->u.fn->nparams; i++) {
            if (i) stc__buf_putc(b, ' ');
            dump_var(b, e->u.fn->params[i], locs);
        }
        stc__buf_putc(b, ')');
        dump_sub(b, e->u.fn->body, locs, depth);
        break;
    case IR_INL:
    case IR_INR:
        dump_head(b, e->kind == IR_INL ? "inl" : "inr", e, locs);
        dump_sub(b, e->a, locs, depth);
        break;
    case IR_BINOP:
        dump_head(b, stc__ir_binop_name(e->u.binop), e, locs);
        dump_sub(b, e->a, locs, depth);
        dump_sub(b, e->b, locs, depth);
        break;
    case IR_UNOP:
        dump_head(b, stc__ir_unop_name(e->u.unop), e, locs);
        dump_sub(b, e->a, locs, depth);
        break;
    case IR_CALL:
        dump_head(b, "call", e, locs);
        if (e->u.call.kind == CALL_NAME) {
            stc__buf_printf(b, " %s", e->u.call.callee.name);
            dump_loc(b, e->u.call.callee_loc, locs);
        } else {
            stc__buf_printf(b, " #%d:%d", (int)e->u.call.kind, e->u.call.callee.index);
        }
        for (int i = 0; i < e->u.call.nargs; i++) dump_sub(b, e->u.call.args[i], locs, depth);
        break;
    case IR_TUPLE:
    case IR_LIST:
        dump_head(b, e->kind == IR_TUPLE ? "tuple" : "list", e, locs);
        for (int i = 0; i < e->u.agg.nitems; i++) dump_sub(b, e->u.agg.items[i], locs, depth);
        break;
    }
    stc__buf_putc(b, ')');
}

char *ir_dump_expr(const ir_expr *e, bool locs)
{
    buf b = BUF_INIT;
    dump_expr(&b, e, locs, 0);
    return stc__buf_take(&b);
}

char *ir_dump_program(const ir_program *p, bool locs)
{
    buf b = BUF_INIT;
    for (int i = 0; i < p->nfuns; i++) {
        const ir_fun *f = p->funs[i];
        stc__buf_printf(&b, "(fun %s", f->name);
        dump_loc(&b, f->loc, locs);
        stc__buf_puts(&b, " (");
        for (int j = 0; j < f->nparams; j++) {
            if (j) stc__buf_putc(&b, ' ');
            dump_var(&b, f->params[j], locs);
            if (f->param_annots && f->param_annots[j]) {
                stc__buf_putc(&b, ':');
                dump_type(&b, f->param_annots[j]);
            }
        }
        stc__buf_putc(&b, ')');
        if (f->ret_annot) {
            stc__buf_puts(&b, " : ");
            dump_type(&b, f->ret_annot);
        }
        stc__buf_putc(&b, ' ');
        dump_expr(&b, f->body, locs, 0);
        stc__buf_puts(&b, ")\n");
    }
    for (int i = 0; i < p->nthreads; i++) {
        const ir_thread *t = p->threads[i];
        stc__buf_printf(&b, "(thread %s", t->name);
        dump_loc(&b, t->loc, locs);
        stc__buf_printf(&b, " %s", t->target);
        dump_loc(&b, t->target_loc, locs);
        if (t->init) {
            stc__buf_putc(&b, ' ');
            dump_expr(&b, t->init, locs, 0);
        }
        stc__buf_puts(&b, ")\n");
    }
    if (p->main) {
        stc__buf_puts(&b, "(main");
        dump_loc(&b, p->main_loc, locs);
        stc__buf_putc(&b, ' ');
        dump_expr(&b, p->main, locs, 0);
        stc__buf_puts(&b, ")\n");
    }
    return stc__buf_take(&b);
}

/* ---- back to source ----------------------------------------------------- */

static void src_expr(buf *b, const ir_expr *e, int depth);

static void src_list(buf *b, ir_expr *const *items, int n, int depth)
{
    for (int i = 0; i < n; i++) {
        if (i) stc__buf_puts(b, ", ");
        src_expr(b, items[i], depth + 1);
    }
}

static void src_vars(buf *b, ir_var *const *vars, int n)
{
    for (int i = 0; i < n; i++) stc__buf_printf(b, "%s%s", i ? ", " : "", vars[i]->name);
}

static void src_expr(buf *b, const ir_expr *e, int depth)
{
    if (!e || depth > IR_MAX_DEPTH + 5) { stc__buf_puts(b, "?"); return; }
    switch (e->kind) {
    case IR_LIT:
        /* negative numbers in parentheses so that a - (-1) stays binary */
        stc__buf_putc(b, '(');
        dump_value(b, e->u.lit);
        stc__buf_putc(b, ')');
        return;
    case IR_NAME: stc__buf_puts(b, e->u.name); return;
    case IR_LET:
    case IR_LETTUPLE:
        stc__buf_puts(b, e->kind == IR_LET ? "(let " : "(let (");
        src_vars(b, e->u.let.binders, e->u.let.nbinders);
        stc__buf_puts(b, e->kind == IR_LET ? " = " : ") = ");
        src_expr(b, e->a, depth + 1);
        stc__buf_puts(b, " in ");
        src_expr(b, e->b, depth + 1);
        break;
    case IR_IF:
        stc__buf_puts(b, "(if ");
        src_expr(b, e->a, depth + 1);
        stc__buf_puts(b, " then ");
        src_expr(b, e->b, depth + 1);
        stc__buf_puts(b, " else ");
        src_expr(b, e->c, depth + 1);
        break;
    case IR_CASE:
        stc__buf_puts(b, "(case ");
        src_expr(b, e->a, depth + 1);
        stc__buf_puts(b, " of");
        for (int i = 0; i < e->u.cas.nalts; i++) {
            const ir_alt *a = &e->u.cas.alts[i];
            stc__buf_puts(b, " | ");
            switch (a->pat) {
            case PAT_LIT: dump_value(b, a->lit); break;
            case PAT_WILD: stc__buf_putc(b, '_'); break;
            case PAT_VAR: stc__buf_puts(b, a->vars[0]->name); break;
            case PAT_INL: stc__buf_printf(b, "inl %s", a->vars[0]->name); break;
            case PAT_INR: stc__buf_printf(b, "inr %s", a->vars[0]->name); break;
            case PAT_TUPLE:
                stc__buf_putc(b, '(');
                src_vars(b, a->vars, a->nvars);
                stc__buf_putc(b, ')');
                break;
            }
            stc__buf_puts(b, " => (");
            src_expr(b, a->body, depth + 1);
            stc__buf_putc(b, ')');
        }
        break;
    case IR_LAMBDA:
        stc__buf_puts(b, "(fn (");
        src_vars(b, e->u.fn->params, e->u.fn->nparams);
        stc__buf_puts(b, ") => ");
        src_expr(b, e->u.fn->body, depth + 1);
        break;
    case IR_INL:
    case IR_INR:
        stc__buf_puts(b, e->kind == IR_INL ? "(inl (" : "(inr (");
        src_expr(b, e->a, depth + 1);
        stc__buf_putc(b, ')');
        break;
    case IR_BINOP:
        stc__buf_putc(b, '(');
        src_expr(b, e->a, depth + 1);
        stc__buf_printf(b, " %s ", stc__ir_binop_name(e->u.binop));
        src_expr(b, e->b, depth + 1);
        break;
    case IR_UNOP:
        stc__buf_printf(b, "(%s (", stc__ir_unop_name(e->u.unop));
        src_expr(b, e->a, depth + 1);
        stc__buf_putc(b, ')');
        break;
    case IR_CALL:
        stc__buf_printf(b, "%s(", e->u.call.kind == CALL_NAME ? e->u.call.callee.name : "?");
        src_list(b, e->u.call.args, e->u.call.nargs, depth);
        break;
    case IR_TUPLE:
        stc__buf_putc(b, '(');
        src_list(b, e->u.agg.items, e->u.agg.nitems, depth);
        break;
    case IR_LIST:
        stc__buf_putc(b, '[');
        src_list(b, e->u.agg.items, e->u.agg.nitems, depth);
        stc__buf_putc(b, ']');
        return;
    default: stc__buf_puts(b, "?"); return;
    }
    stc__buf_putc(b, ')');
}

char *ir_dump_source(const ir_program *p)
{
    buf b = BUF_INIT;
    for (int i = 0; i < p->nfuns; i++) {
        const ir_fun *f = p->funs[i];
        stc__buf_printf(&b, "fun %s(", f->name);
        for (int j = 0; j < f->nparams; j++) {
            stc__buf_printf(&b, "%s%s", j ? ", " : "", f->params[j]->name);
            if (f->param_annots && f->param_annots[j]) {
                stc__buf_puts(&b, ": ");
                dump_type(&b, f->param_annots[j]);
            }
        }
        stc__buf_putc(&b, ')');
        if (f->ret_annot) {
            stc__buf_puts(&b, ": ");
            dump_type(&b, f->ret_annot);
        }
        stc__buf_puts(&b, " = ");
        src_expr(&b, f->body, 0);
        stc__buf_putc(&b, '\n');
    }
    for (int i = 0; i < p->nthreads; i++) {
        const ir_thread *t = p->threads[i];
        stc__buf_printf(&b, "thread %s = %s", t->name, t->target);
        if (t->init) {
            stc__buf_puts(&b, " init ");
            src_expr(&b, t->init, 0);
        }
        stc__buf_putc(&b, '\n');
    }
    if (p->main) {
        stc__buf_puts(&b, "main = ");
        src_expr(&b, p->main, 0);
        stc__buf_putc(&b, '\n');
    }
    return stc__buf_take(&b);
}

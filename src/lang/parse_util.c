/* parse_util.c - token handling, errors, arrays and nesting checks shared
 * by the parser files (see parse.h). */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lang/parse.h"

void stc__parse_init(parser *ps, ir_program *p, const char *src, size_t len, stc_diags *d)
{
    memset(ps, 0, sizeof *ps);
    ps->p = p;
    ps->d = d;
    stc__lex_init(&ps->lx, src, len, d);
    ps->tok = stc__lex_next(&ps->lx);
}

void stc__parse_advance(parser *ps)
{
    if (ps->has_ahead) {
        ps->tok = ps->ahead;
        ps->has_ahead = false;
    } else if (ps->tok.kind != TOK_EOF) {
        ps->tok = stc__lex_next(&ps->lx);
    }
    if (ps->lx.oom) ps->oom = true;
}

const lex_token *stc__parse_peek(parser *ps)
{
    if (!ps->has_ahead) {
        ps->ahead = ps->tok.kind == TOK_EOF ? ps->tok : stc__lex_next(&ps->lx);
        ps->has_ahead = true;
        if (ps->lx.oom) ps->oom = true;
    }
    return &ps->ahead;
}

bool stc__parse_accept(parser *ps, lex_kind k)
{
    if (ps->tok.kind != k) return false;
    stc__parse_advance(ps);
    return true;
}

bool stc__parse_expect(parser *ps, lex_kind k, const char *what)
{
    if (stc__parse_accept(ps, k)) return true;
    stc__parse_expected(ps, what);
    return false;
}

void stc__parse_error_at(parser *ps, int line, int col, const char *fmt, ...)
{
    if (ps->failed) return; /* one syntax error per declaration */
    ps->failed = true;
    /* The lexer already explained a broken token stream. */
    if (ps->tok.after_junk || ps->lx.desyncs > ps->desync_mark) return;
    va_list ap;
    va_start(ap, fmt);
    stc__diags_vadd(ps->d, line, col, fmt, ap);
    va_end(ap);
}

/* The token as shown in messages: 'text' (shortened), or a description. */
static const char *parse_tok_desc(parser *ps, const lex_token *t, char *out, size_t size)
{
    if (t->kind == TOK_EOF || t->kind == TOK_STRING) return stc__lex_kind_name(t->kind);
    const char *s = ps->lx.src + t->start;
    if (t->len > 24) snprintf(out, size, "'%.24s...'", s);
    else snprintf(out, size, "'%.*s'", (int)t->len, s);
    return out;
}

void *stc__parse_expected(parser *ps, const char *what)
{
    char tmp[48];
    stc__parse_error_at(ps, ps->tok.line, ps->tok.col, "expected %s, found %s", what,
                   stc__parse_at_keyed_decl(ps) ? "'keyed thread'" : parse_tok_desc(ps, &ps->tok, tmp, sizeof tmp));
    return NULL;
}

void *stc__parse_nomem(parser *ps)
{
    ps->oom = true;
    ps->failed = true;
    return NULL;
}

char *stc__parse_text(parser *ps, const lex_token *t)
{
    char *s = stc__arena_strndup(ps->p->arena, ps->lx.src + t->start, t->len);
    if (!s) stc__parse_nomem(ps);
    return s;
}

bool stc__parse_is_ident(parser *ps, const lex_token *t, const char *word)
{
    size_t n = strlen(word);
    return t->kind == TOK_IDENT && t->len == n && memcmp(ps->lx.src + t->start, word, n) == 0;
}

void *stc__parse_grow(parser *ps, void *arr, int n, int *cap, size_t elem)
{
    if (n < *cap) return arr;
    if (*cap > INT_MAX / 2) return stc__parse_nomem(ps);
    int ncap = *cap ? *cap * 2 : 4;
    void *grown = stc__ir_array(ps->p, (size_t)ncap, elem);
    if (!grown) return stc__parse_nomem(ps);
    if (n) memcpy(grown, arr, (size_t)n * elem);
    *cap = ncap;
    return grown;
}

bool stc__parse_enter(parser *ps, const char *what)
{
    if (ps->depth >= IR_MAX_DEPTH) {
        stc__parse_error_at(ps, ps->tok.line, ps->tok.col, "%s nested too deeply (limit %d)", what,
                       IR_MAX_DEPTH);
        return false;
    }
    ps->depth++;
    return true;
}

/* Recursion is bounded: it stops below IR_MAX_DEPTH + 1. */
static bool parse_expr_height(parser *ps, const ir_expr *e, int depth)
{
    if (!e) return true;
    if (depth > IR_MAX_DEPTH) {
        stc__parse_error_at(ps, e->loc.line, e->loc.col, "expression nested too deeply (limit %d)",
                       IR_MAX_DEPTH);
        return false;
    }
    /* A chain a + b + c + ... is one level, however long: its left spine
     * is walked by a loop (ir_chain in ir.h), its operands one level down. */
    while (e->kind == IR_BINOP) {
        if (!parse_expr_height(ps, e->b, depth + 1)) return false;
        e = e->a;
        if (!e) return true;
        if (e->kind != IR_BINOP) return parse_expr_height(ps, e, depth + 1);
    }
    if (!parse_expr_height(ps, e->a, depth + 1) || !parse_expr_height(ps, e->b, depth + 1) ||
        !parse_expr_height(ps, e->c, depth + 1))
        return false;
    switch (e->kind) {
    case IR_LAMBDA:
        return parse_expr_height(ps, e->u.fn->body, depth + 1);
    case IR_CASE:
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (!parse_expr_height(ps, e->u.cas.alts[i].body, depth + 1)) return false;
        return true;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (!parse_expr_height(ps, e->u.agg.items[i], depth + 1)) return false;
        return true;
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++)
            if (!parse_expr_height(ps, e->u.call.args[i], depth + 1)) return false;
        return true;
    default:
        return true;
    }
}

bool stc__parse_check_expr(parser *ps, const ir_expr *e) { return parse_expr_height(ps, e, 1); }

static bool parse_type_height(parser *ps, const ir_type *t, int depth, ir_loc loc)
{
    if (!t) return true;
    if (depth > IR_MAX_DEPTH) {
        stc__parse_error_at(ps, loc.line, loc.col, "type nested too deeply (limit %d)", IR_MAX_DEPTH);
        return false;
    }
    for (int i = 0; i < t->n; i++)
        if (!parse_type_height(ps, t->args[i], depth + 1, loc)) return false;
    return true;
}

bool stc__parse_check_type(parser *ps, const ir_type *t, ir_loc loc)
{
    return parse_type_height(ps, t, 1, loc);
}

bool stc__parse_at_keyed(parser *ps)
{
    return stc__parse_is_ident(ps, &ps->tok, "keyed") && stc__parse_peek(ps)->kind == TOK_THREAD;
}

bool stc__parse_at_keyed_decl(parser *ps)
{
    return ps->tok.col == 1 && stc__parse_at_keyed(ps) && stc__parse_peek(ps)->line == ps->tok.line;
}

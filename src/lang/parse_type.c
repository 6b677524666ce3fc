/* stc__parse_type.c - STCLang types (annotations and stc_thread_def types).
 *
 *   type := sum ['->' type]          right-associative, loosest
 *   sum  := atom {'+' atom}          left-associative
 *   atom := int | float | bool | str | unit | '[' type ']' | '{' type ':' type '}'
 *         | '(' type ')' | '(' type ',' type {',' type} ')'
 * The scalar type names are ordinary identifiers (int and float are also
 * builtin functions), recognised only here.
 */
#include <string.h>

#include "lang/lang.h"
#include "lang/parse.h"

static ir_type *parse_type_node(parser *ps, ir_type_kind kind, int n)
{
    ir_type *t = stc__ir_type_new(ps->p, kind, n);
    return t ? t : stc__parse_nomem(ps);
}

static bool parse_type_has_fun(const ir_type *t)
{
    if (t->kind == TY_FUN) return true;
    for (int i = 0; i < t->n; i++)
        if (parse_type_has_fun(t->args[i])) return true;
    return false;
}

/* '{' key ':' value '}': a key type with a function inside is an error
 * (keys are compared and ordered). */
static ir_type *parse_type_map(parser *ps)
{
    stc__parse_advance(ps);
    ir_loc kloc = parse_loc(&ps->tok);
    ir_type *k = stc__parse_type(ps);
    if (!k || !stc__parse_expect(ps, TOK_COLON, "':' after the map key type")) return NULL;
    ir_type *v = stc__parse_type(ps);
    if (!v || !stc__parse_expect(ps, TOK_RBRACE, "'}' after the map value type")) return NULL;
    if (parse_type_has_fun(k)) {
        stc__parse_error_at(ps, kloc.line, kloc.col, "a map key type cannot contain a function");
        return NULL;
    }
    ir_type *m = parse_type_node(ps, TY_MAP, 2);
    if (m) {
        m->args[0] = k;
        m->args[1] = v;
    }
    return m;
}

static ir_type *parse_type_atom(parser *ps)
{
    static const struct {
        const char *name;
        ir_type_kind kind;
    } scalars[] = {{"int", TY_INT}, {"float", TY_FLOAT}, {"bool", TY_BOOL}, {"str", TY_STR}, {"unit", TY_UNIT}};
    lex_token *t = &ps->tok;
    if (t->kind == TOK_IDENT) {
        for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
            if (stc__parse_is_ident(ps, t, scalars[i].name)) {
                stc__parse_advance(ps);
                return parse_type_node(ps, scalars[i].kind, 0);
            }
        }
        stc__parse_error_at(ps, t->line, t->col, "unknown type '%.*s'", t->len > 40 ? 40 : (int)t->len,
                       ps->lx.src + t->start);
        return NULL;
    }
    if (stc__parse_accept(ps, TOK_LBRACKET)) {
        ir_type *elem = stc__parse_type(ps);
        if (!elem || !stc__parse_expect(ps, TOK_RBRACKET, "']' after the list element type")) return NULL;
        ir_type *l = parse_type_node(ps, TY_LIST, 1);
        if (l) l->args[0] = elem;
        return l;
    }
    if (t->kind == TOK_LBRACE) return parse_type_map(ps);
    if (!stc__parse_accept(ps, TOK_LPAREN)) return stc__parse_expected(ps, "a type");
    ir_type **items = NULL;
    int n = 0, cap = 0;
    for (;;) {
        ir_type *item = stc__parse_type(ps);
        if (!item) return NULL;
        if (!(items = stc__parse_grow(ps, items, n, &cap, sizeof *items))) return NULL;
        items[n++] = item;
        if (!stc__parse_accept(ps, TOK_COMMA)) break;
    }
    if (!stc__parse_expect(ps, TOK_RPAREN, n > 1 ? "')' after the tuple types" : "')' after the type"))
        return NULL;
    if (n == 1) return items[0]; /* (T) is T */
    ir_type *tup = parse_type_node(ps, TY_TUPLE, n);
    if (tup) memcpy(tup->args, items, (size_t)n * sizeof *items);
    return tup;
}

static ir_type *parse_type_sum(parser *ps)
{
    ir_type *a = parse_type_atom(ps);
    while (a && stc__parse_accept(ps, TOK_PLUS)) {
        ir_type *b = parse_type_atom(ps);
        if (!b) return NULL;
        ir_type *s = parse_type_node(ps, TY_SUM, 2);
        if (!s) return NULL;
        s->args[0] = a;
        s->args[1] = b;
        a = s;
    }
    return a;
}

ir_type *stc__parse_type(parser *ps)
{
    if (!stc__parse_enter(ps, "type")) return NULL;
    ir_type *t = parse_type_sum(ps);
    if (t && stc__parse_accept(ps, TOK_ARROW)) {
        ir_type *r = stc__parse_type(ps);
        ir_type *f = r ? parse_type_node(ps, TY_FUN, 2) : NULL;
        if (f) {
            f->args[0] = t;
            f->args[1] = r;
        }
        t = f;
    }
    parse_leave(ps);
    return t;
}

ir_type *stc__lang_parse_type(ir_program *p, const char *text, stc_diags *d)
{
    if (!p) return NULL;
    if (!text) {
        stc__diags_add(d, 1, 1, "expected a type, found nothing");
        return NULL;
    }
    parser ps;
    stc__parse_init(&ps, p, text, strlen(text), d);
    ir_loc loc = parse_loc(&ps.tok);
    ir_type *t = stc__parse_type(&ps);
    if (t && ps.tok.kind != TOK_EOF) stc__parse_expected(&ps, "end of the type");
    if (t && !ps.failed) stc__parse_check_type(&ps, t, loc);
    if (ps.failed || ps.oom || ps.lx.errors || ps.lx.oom) return NULL;
    return t;
}

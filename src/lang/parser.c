/* parser.c - STCLang declarations and stc__lang_parse (DESIGN.md 3).
 *
 *   program := { decl }
 *   decl    := 'fun' NAME '(' [param {',' param}] ')' [':' type] '=' expr
 *            | 'thread' NAME '=' NAME ['init' expr]
 *            | 'keyed' 'thread' NAME '=' NAME 'init' expr
 *            | 'main' '=' expr            (main is an ordinary identifier)
 *   param   := NAME [':' type]
 *
 * Only syntax is checked here: names, duplicates and arities are
 * stc__ir_resolve's job.  A declaration with an error is dropped and parsing
 * resumes at the next `fun`, `thread`, `keyed thread` or `main =` in
 * column 1.  `keyed` is a keyword only there (before `thread` at the start
 * of a declaration), so it stays an ordinary name everywhere else.
 */
#include <string.h>

#include "lang/lang.h"
#include "lang/parse.h"

/* `main` followed by `=` */
static bool parse_at_main(parser *ps)
{
    return stc__parse_is_ident(ps, &ps->tok, "main") && stc__parse_peek(ps)->kind == TOK_ASSIGN;
}


static bool parse_at_decl_col1(parser *ps)
{
    if (ps->tok.col != 1) return false;
    return ps->tok.kind == TOK_FUN || ps->tok.kind == TOK_THREAD || parse_at_main(ps) || stc__parse_at_keyed(ps);
}

/* An expression that ends a declaration, with its height checked. */
static ir_expr *parse_decl_expr(parser *ps)
{
    ir_expr *e = stc__parse_expr(ps);
    if (e && !stc__parse_check_expr(ps, e)) return NULL;
    return e;
}

static ir_type *parse_annot(parser *ps)
{
    ir_loc loc = parse_loc(&ps->tok);
    ir_type *t = stc__parse_type(ps);
    if (t && !stc__parse_check_type(ps, t, loc)) return NULL;
    return t;
}

static void parse_fun(parser *ps)
{
    stc__parse_advance(ps); /* fun */
    if (ps->tok.kind != TOK_IDENT) {
        stc__parse_expected(ps, "a function name after 'fun'");
        return;
    }
    lex_token name_tok = ps->tok;
    char *name = stc__parse_text(ps, &name_tok);
    if (!name) return;
    stc__parse_advance(ps);
    if (!stc__parse_expect(ps, TOK_LPAREN, "'(' after the function name")) return;
    ir_var **params = NULL;
    ir_type **annots = NULL;
    int n = 0, cap = 0, acap = 0;
    if (!stc__parse_accept(ps, TOK_RPAREN)) {
        for (;;) {
            if (ps->tok.kind != TOK_IDENT && ps->tok.kind != TOK_UNDERSCORE) { /* `_`: unused */
                stc__parse_expected(ps, "a parameter name");
                return;
            }
            char *pname = stc__parse_text(ps, &ps->tok);
            ir_var *v = pname ? stc__ir_var_new(ps->p, pname, parse_loc(&ps->tok)) : NULL;
            if (!v) {
                stc__parse_nomem(ps);
                return;
            }
            stc__parse_advance(ps);
            ir_type *annot = NULL;
            if (stc__parse_accept(ps, TOK_COLON) && !(annot = parse_annot(ps))) return;
            if (!(params = stc__parse_grow(ps, params, n, &cap, sizeof *params))) return;
            if (!(annots = stc__parse_grow(ps, annots, n, &acap, sizeof *annots))) return;
            params[n] = v;
            annots[n++] = annot;
            if (stc__parse_accept(ps, TOK_COMMA)) continue;
            if (!stc__parse_expect(ps, TOK_RPAREN, "',' or ')' after a parameter")) return;
            break;
        }
    }
    ir_type *ret = NULL;
    if (stc__parse_accept(ps, TOK_COLON) && !(ret = parse_annot(ps))) return;
    if (!stc__parse_expect(ps, TOK_ASSIGN, "'=' before the function body")) return;
    ir_expr *body = parse_decl_expr(ps);
    if (!body) return;
    ir_fun *f = stc__ir_fun_new(ps->p, name, parse_loc(&name_tok), n);
    if (!f) {
        stc__parse_nomem(ps);
        return;
    }
    for (int i = 0; i < n; i++) {
        f->params[i] = params[i];
        f->param_annots[i] = annots[i];
    }
    f->ret_annot = ret;
    f->body = body;
    if (stc__ir_add_fun(ps->p, f) != 0) stc__parse_nomem(ps);
}

static void parse_thread(parser *ps, bool keyed)
{
    ir_loc kloc = parse_loc(&ps->tok);
    if (keyed) stc__parse_advance(ps); /* keyed */
    stc__parse_advance(ps); /* thread */
    if (ps->tok.kind != TOK_IDENT) {
        stc__parse_expected(ps, "a thread name after 'thread'");
        return;
    }
    ir_thread *t = stc__ir_thread_new(ps->p, "", parse_loc(&ps->tok));
    if (!t || !(t->name = stc__parse_text(ps, &ps->tok))) {
        stc__parse_nomem(ps);
        return;
    }
    stc__parse_advance(ps);
    if (!stc__parse_expect(ps, TOK_ASSIGN, "'=' after the thread name")) return;
    if (ps->tok.kind != TOK_IDENT) {
        stc__parse_expected(ps, "the name of the thread's function after '='");
        return;
    }
    t->target_loc = parse_loc(&ps->tok);
    if (!(t->target = stc__parse_text(ps, &ps->tok))) return;
    stc__parse_advance(ps);
    t->keyed = keyed;
    if (keyed && ps->tok.kind != TOK_INIT) {
        /* every key starts from the init value: it cannot be left out */
        stc__parse_error_at(ps, kloc.line, kloc.col, "keyed thread '%s' needs 'init' (the state of a new key)",
                            t->name);
        return;
    }
    if (stc__parse_accept(ps, TOK_INIT) && !(t->init = parse_decl_expr(ps))) return;
    if (stc__ir_add_thread(ps->p, t) != 0) stc__parse_nomem(ps);
}

static void parse_main(parser *ps)
{
    ir_loc loc = parse_loc(&ps->tok);
    stc__parse_advance(ps); /* main */
    if (!stc__parse_expect(ps, TOK_ASSIGN, "'=' after 'main'")) return;
    if (ps->p->main) {
        stc__parse_error_at(ps, loc.line, loc.col, "'main' is already defined at %d:%d",
                       ps->p->main_loc.line, ps->p->main_loc.col);
        return;
    }
    ir_expr *e = parse_decl_expr(ps);
    if (!e) return;
    ps->p->main = e;
    ps->p->main_loc = loc;
}

static void parse_decl(parser *ps)
{
    if (ps->tok.kind == TOK_FUN) parse_fun(ps);
    else if (ps->tok.kind == TOK_THREAD) parse_thread(ps, false);
    else if (stc__parse_at_keyed(ps)) parse_thread(ps, true);
    else if (stc__parse_is_ident(ps, &ps->tok, "main")) parse_main(ps);
    else stc__parse_expected(ps, "a declaration ('fun', 'thread' or 'main =')");
}

/* Without a `main = e` declaration, `fun main(xs) = e` is main, taking
 * its input stream xs (`fun main() = e` is `main = e`); with one, a fun
 * named main is an ordinary function. */
static void parse_fun_main(parser *ps)
{
    ir_program *p = ps->p;
    int i = stc__ir_find_fun(p, "main");
    if (p->main || i < 0) return;
    ir_fun *f = p->funs[i];
    if (f->nparams > 1) {
        stc__parse_error_at(ps, f->loc.line, f->loc.col,
                       "'main' takes at most one parameter (its input stream), not %d", f->nparams);
        return;
    }
    if (f->ret_annot || (f->nparams == 1 && f->param_annots[0])) {
        stc__parse_error_at(ps, f->loc.line, f->loc.col, "'main' takes no type annotations");
        return;
    }
    p->main = f->body;
    p->main_loc = f->loc;
    p->main_param = f->nparams == 1 ? f->params[0] : NULL;
    for (int j = i; j + 1 < p->nfuns; j++) p->funs[j] = p->funs[j + 1];
    p->nfuns--;
}

ir_program *stc__lang_parse(const char *src, size_t len, const char *file, const stc_env *env,
                       stc_diags *d)
{
    ir_program *p = stc__ir_program_new(file, env);
    if (!p) return NULL;
    parser ps;
    stc__parse_init(&ps, p, src, len, d);
    while (ps.tok.kind != TOK_EOF && !ps.oom) {
        ps.failed = false;
        ps.depth = 0;
        ps.desync_mark = ps.lx.desyncs;
        parse_decl(&ps);
        if (!ps.failed) continue;
        /* Skip the rest of the broken declaration; the token where the
         * error was found may itself start the next one. */
        while (ps.tok.kind != TOK_EOF && !ps.oom && !parse_at_decl_col1(&ps)) stc__parse_advance(&ps);
    }
    if (ps.oom || ps.lx.oom) {
        stc__ir_program_free(p);
        return NULL;
    }
    parse_fun_main(&ps);
    return p;
}

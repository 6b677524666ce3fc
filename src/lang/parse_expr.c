/* stc__parse_expr.c - STCLang expressions and case patterns (DESIGN.md 3).
 *
 * Precedence, loosest to tightest:
 *   1 ||   2 &&   3 == != < <= > >= (non-associative)   4 + -   5 * / %
 *   then the prefix operators - not inl inr, then atoms.
 * Binary operators are left-associative (precedence climbing).  `inl` and
 * `inr` bind like unary minus: `inl x + 1` is `(inl x) + 1`.  let, if, case
 * and fn are atoms whose body extends as far right as possible, so
 * `1 + if c then 2 else 3 + 4` is `1 + (if c then 2 else (3 + 4))`.
 * A minus directly before a number literal folds into a negative literal
 * (located at the minus); that is how -9223372036854775808 is INT64_MIN.
 * Extension: `fn () => e` is a lambda without parameters.
 */
#include "lang/parse.h"

enum { PREC_OR = 1, PREC_AND, PREC_CMP, PREC_ADD, PREC_MUL };

static ir_expr *parse_unary(parser *ps);

static int parse_binop(lex_kind k, ir_binop *op)
{
    switch (k) {
    case TOK_OROR: *op = OP_OR; return PREC_OR;
    case TOK_ANDAND: *op = OP_AND; return PREC_AND;
    case TOK_EQ: *op = OP_EQ; return PREC_CMP;
    case TOK_NE: *op = OP_NE; return PREC_CMP;
    case TOK_LT: *op = OP_LT; return PREC_CMP;
    case TOK_LE: *op = OP_LE; return PREC_CMP;
    case TOK_GT: *op = OP_GT; return PREC_CMP;
    case TOK_GE: *op = OP_GE; return PREC_CMP;
    case TOK_PLUS: *op = OP_ADD; return PREC_ADD;
    case TOK_MINUS: *op = OP_SUB; return PREC_ADD;
    case TOK_STAR: *op = OP_MUL; return PREC_MUL;
    case TOK_SLASH: *op = OP_DIV; return PREC_MUL;
    case TOK_PERCENT: *op = OP_MOD; return PREC_MUL;
    default: return 0;
    }
}

static ir_expr *parse_binary(parser *ps, int min_prec)
{
    ir_expr *lhs = parse_unary(ps);
    int last = 0;
    while (lhs) {
        ir_binop op;
        int prec = parse_binop(ps->tok.kind, &op);
        if (prec == 0 && ps->tok.kind == TOK_COLON && stc__parse_peek(ps)->kind == TOK_COLON) {
            stc__parse_error_at(ps, ps->tok.line, ps->tok.col, "there is no '::' operator: lists are written "
                           "[a, b, ...] and built with range or smap");
            return NULL;
        }
        if (prec == 0 || prec < min_prec) break;
        if (prec == PREC_CMP && last == PREC_CMP) {
            stc__parse_error_at(ps, ps->tok.line, ps->tok.col,
                           "comparison operators cannot be chained (use parentheses)");
            return NULL;
        }
        ir_loc loc = parse_loc(&ps->tok);
        stc__parse_advance(ps);
        ir_expr *rhs = parse_binary(ps, prec + 1);
        if (!rhs) return NULL;
        ir_expr *e = stc__ir_expr_new(ps->p, IR_BINOP, loc);
        if (!e) return stc__parse_nomem(ps);
        e->u.binop = op;
        e->a = lhs;
        e->b = rhs;
        lhs = e;
        last = prec;
    }
    return lhs;
}

ir_expr *stc__parse_expr(parser *ps) { return parse_binary(ps, PREC_OR); }

/* A literal node for the current INT/FLOAT token, negated when neg. */
static ir_expr *parse_number(parser *ps, bool neg, ir_loc loc)
{
    const lex_token *t = &ps->tok;
    stc_value v;
    if (t->kind == TOK_FLOAT) {
        v = stc_value_float(neg ? -t->fval : t->fval);
    } else {
        if (t->int_min && !neg) {
            stc__parse_error_at(ps, t->line, t->col, "integer literal out of range");
            return NULL;
        }
        /* INT64_MIN stays itself; no other negation can overflow. */
        v = stc_value_int(neg && !t->int_min ? -t->ival : t->ival);
    }
    stc__parse_advance(ps);
    ir_expr *e = stc__ir_lit(ps->p, v, loc);
    return e ? e : stc__parse_nomem(ps);
}

static ir_expr *parse_string(parser *ps)
{
    buf b = BUF_INIT;
    stc__lex_string_value(&ps->lx, &ps->tok, &b);
    if (!buf_ok(&b)) {
        stc__buf_free(&b);
        return stc__parse_nomem(ps);
    }
    stc_value v = stc_value_new_str(b.data ? b.data : "", b.len);
    stc__buf_free(&b);
    if (v.tag == STC_T_INVALID) return stc__parse_nomem(ps);
    ir_expr *e = stc__ir_lit(ps->p, v, parse_loc(&ps->tok));
    if (!e) return stc__parse_nomem(ps);
    stc__parse_advance(ps);
    return e;
}

static ir_expr *parse_scalar(parser *ps, stc_value v)
{
    ir_expr *e = stc__ir_lit(ps->p, v, parse_loc(&ps->tok));
    if (!e) return stc__parse_nomem(ps);
    stc__parse_advance(ps);
    return e;
}

/* Comma-separated expressions up to `close`; the opening token is already
 * consumed.  first, when not NULL, is the already parsed first item. */
static ir_expr **parse_items(parser *ps, ir_expr *first, lex_kind close, const char *what, int *n)
{
    ir_expr **items = NULL;
    int cap = 0;
    *n = 0;
    if (first) {
        if (!(items = stc__parse_grow(ps, items, *n, &cap, sizeof *items))) return NULL;
        items[(*n)++] = first;
        if (!stc__parse_accept(ps, TOK_COMMA)) goto close;
    } else if (ps->tok.kind == close) {
        stc__parse_advance(ps);
        return NULL;
    }
    for (;;) {
        ir_expr *e = stc__parse_expr(ps);
        if (!e) return NULL;
        if (!(items = stc__parse_grow(ps, items, *n, &cap, sizeof *items))) return NULL;
        items[(*n)++] = e;
        if (!stc__parse_accept(ps, TOK_COMMA)) break;
    }
close:
    if (!stc__parse_expect(ps, close, what)) return NULL;
    return items;
}

static ir_expr *parse_paren(parser *ps)
{
    ir_loc loc = parse_loc(&ps->tok);
    stc__parse_advance(ps);
    if (ps->tok.kind == TOK_RPAREN) {
        ir_expr *e = stc__ir_lit(ps->p, stc_value_unit(), loc);
        if (!e) return stc__parse_nomem(ps);
        stc__parse_advance(ps);
        return e;
    }
    ir_expr *first = stc__parse_expr(ps);
    if (!first) return NULL;
    if (ps->tok.kind != TOK_COMMA) {
        if (!stc__parse_expect(ps, TOK_RPAREN, "')' after the expression")) return NULL;
        return first; /* (e) is just e */
    }
    int n;
    ir_expr **items = parse_items(ps, first, TOK_RPAREN, "')' after the tuple items", &n);
    if (ps->failed) return NULL;
    ir_expr *e = stc__ir_expr_new(ps->p, IR_TUPLE, loc);
    if (!e) return stc__parse_nomem(ps);
    e->u.agg.items = items;
    e->u.agg.nitems = n;
    return e;
}

static ir_expr *parse_list(parser *ps)
{
    ir_loc loc = parse_loc(&ps->tok);
    stc__parse_advance(ps);
    int n;
    ir_expr **items = parse_items(ps, NULL, TOK_RBRACKET, "']' after the list items", &n);
    if (ps->failed) return NULL;
    ir_expr *e = stc__ir_expr_new(ps->p, IR_LIST, loc);
    if (!e) return stc__parse_nomem(ps);
    e->u.agg.items = items;
    e->u.agg.nitems = n;
    return e;
}

/* A map literal {k: v, ...} is to_map([(k, v), ...]) (the builtin itself,
 * whatever the program names to_map): items in order, later keys win. */
static ir_expr *parse_map(parser *ps)
{
    ir_loc loc = parse_loc(&ps->tok);
    stc__parse_advance(ps);
    ir_expr **items = NULL;
    int n = 0, cap = 0;
    if (!stc__parse_accept(ps, TOK_RBRACE)) {
        for (;;) {
            ir_loc iloc = parse_loc(&ps->tok);
            ir_expr *k = stc__parse_expr(ps);
            if (!k || !stc__parse_expect(ps, TOK_COLON, "':' after the map key")) return NULL;
            ir_expr *v = stc__parse_expr(ps);
            if (!v) return NULL;
            ir_expr *pair = stc__ir_expr_new(ps->p, IR_TUPLE, iloc);
            ir_expr **kv = pair ? stc__ir_array(ps->p, 2, sizeof *kv) : NULL;
            if (!kv) return stc__parse_nomem(ps);
            kv[0] = k;
            kv[1] = v;
            pair->u.agg.items = kv;
            pair->u.agg.nitems = 2;
            if (!(items = stc__parse_grow(ps, items, n, &cap, sizeof *items))) return NULL;
            items[n++] = pair;
            if (!stc__parse_accept(ps, TOK_COMMA)) break;
        }
        if (!stc__parse_expect(ps, TOK_RBRACE, "'}' after the map items")) return NULL;
    }
    ir_expr *list = stc__ir_expr_new(ps->p, IR_LIST, loc);
    ir_expr *call = stc__ir_expr_new(ps->p, IR_CALL, loc);
    ir_expr **args = call ? stc__ir_array(ps->p, 1, sizeof *args) : NULL;
    if (!list || !args) return stc__parse_nomem(ps);
    list->u.agg.items = items;
    list->u.agg.nitems = n;
    args[0] = list;
    call->u.call.kind = CALL_BUILTIN;
    call->u.call.callee.index = BI_TO_MAP;
    call->u.call.callee_loc = loc;
    call->u.call.args = args;
    call->u.call.nargs = 1;
    return call;
}

/* NAME or NAME(args). */
static ir_expr *parse_name(parser *ps)
{
    ir_loc loc = parse_loc(&ps->tok);
    char *name = stc__parse_text(ps, &ps->tok);
    if (!name) return NULL;
    stc__parse_advance(ps);
    if (ps->tok.kind != TOK_LPAREN) {
        ir_expr *e = stc__ir_expr_new(ps->p, IR_NAME, loc);
        if (!e) return stc__parse_nomem(ps);
        e->u.name = name;
        return e;
    }
    stc__parse_advance(ps);
    int n;
    ir_expr **args = parse_items(ps, NULL, TOK_RPAREN, "')' after arguments", &n);
    if (ps->failed) return NULL;
    ir_expr *e = stc__ir_expr_new(ps->p, IR_CALL, loc);
    if (!e) return stc__parse_nomem(ps);
    e->u.call.kind = CALL_NAME;
    e->u.call.callee.name = name;
    e->u.call.callee_loc = loc;
    e->u.call.args = args;
    e->u.call.nargs = n;
    return e;
}

/* A NAME that a let, fn or pattern binds; `_` binds nothing (a variable
 * named "_" that no expression can name: `_` is not an identifier). */
static ir_var *parse_binder(parser *ps, const char *what)
{
    if ((ps->tok.kind != TOK_IDENT && ps->tok.kind != TOK_UNDERSCORE) || stc__parse_at_keyed_decl(ps))
        return stc__parse_expected(ps, what);
    char *name = stc__parse_text(ps, &ps->tok);
    if (!name) return NULL;
    ir_var *v = stc__ir_var_new(ps->p, name, parse_loc(&ps->tok));
    if (!v) return stc__parse_nomem(ps);
    stc__parse_advance(ps);
    return v;
}

/* NAME {',' NAME} ')' after an already consumed '(' (an empty list only
 * when allow_empty). */
static ir_var **parse_binders(parser *ps, const char *what, bool allow_empty, int *n)
{
    ir_var **vars = NULL;
    int cap = 0;
    *n = 0;
    if (allow_empty && stc__parse_accept(ps, TOK_RPAREN)) return NULL;
    for (;;) {
        ir_var *v = parse_binder(ps, what);
        if (!v) return NULL;
        if (!(vars = stc__parse_grow(ps, vars, *n, &cap, sizeof *vars))) return NULL;
        vars[(*n)++] = v;
        if (stc__parse_accept(ps, TOK_COMMA)) continue;
        if (!stc__parse_expect(ps, TOK_RPAREN, "',' or ')' after a name")) return NULL;
        return vars;
    }
}

static ir_expr *parse_let(parser *ps)
{
    ir_loc loc = parse_loc(&ps->tok);
    stc__parse_advance(ps);
    ir_var **binders;
    int n = 1;
    if (stc__parse_accept(ps, TOK_LPAREN)) {
        binders = parse_binders(ps, "a name in 'let (...)'", false, &n);
    } else {
        binders = stc__ir_array(ps->p, 1, sizeof *binders);
        if (!binders) return stc__parse_nomem(ps);
        binders[0] = parse_binder(ps, "a name after 'let'");
    }
    if (ps->failed) return NULL;
    if (!stc__parse_expect(ps, TOK_ASSIGN, "'=' after the name bound by 'let'")) return NULL;
    ir_expr *value = stc__parse_expr(ps);
    if (!value) return NULL;
    if (!stc__parse_expect(ps, TOK_IN, "'in' after the value of 'let'")) return NULL;
    ir_expr *body = stc__parse_expr(ps);
    if (!body) return NULL;
    /* let (x) = e is a plain let */
    ir_expr *e = stc__ir_expr_new(ps->p, n == 1 ? IR_LET : IR_LETTUPLE, loc);
    if (!e) return stc__parse_nomem(ps);
    e->u.let.binders = binders;
    e->u.let.nbinders = n;
    e->a = value;
    e->b = body;
    return e;
}

static ir_expr *parse_if(parser *ps)
{
    ir_loc loc = parse_loc(&ps->tok);
    stc__parse_advance(ps);
    ir_expr *c = stc__parse_expr(ps);
    if (!c || !stc__parse_expect(ps, TOK_THEN, "'then' after the condition of 'if'")) return NULL;
    ir_expr *t = stc__parse_expr(ps);
    if (!t || !stc__parse_expect(ps, TOK_ELSE, "'else' after the 'then' branch")) return NULL;
    ir_expr *f = stc__parse_expr(ps);
    if (!f) return NULL;
    ir_expr *e = stc__ir_expr_new(ps->p, IR_IF, loc);
    if (!e) return stc__parse_nomem(ps);
    e->a = c;
    e->b = t;
    e->c = f;
    return e;
}

static ir_expr *parse_lambda(parser *ps)
{
    ir_loc loc = parse_loc(&ps->tok);
    stc__parse_advance(ps);
    ir_var **params;
    int n = 1;
    if (stc__parse_accept(ps, TOK_LPAREN)) {
        params = parse_binders(ps, "a parameter name after 'fn ('", true, &n);
    } else {
        params = stc__ir_array(ps->p, 1, sizeof *params);
        if (!params) return stc__parse_nomem(ps);
        params[0] = parse_binder(ps, "a parameter name or '(' after 'fn'");
    }
    if (ps->failed) return NULL;
    if (!stc__parse_expect(ps, TOK_DARROW, "'=>' after the parameters of 'fn'")) return NULL;
    ir_expr *body = stc__parse_expr(ps);
    if (!body) return NULL;
    ir_fun *fn = stc__ir_fun_new(ps->p, "<fn>", loc, n);
    ir_expr *e = stc__ir_expr_new(ps->p, IR_LAMBDA, loc);
    if (!fn || !e) return stc__parse_nomem(ps);
    for (int i = 0; i < n; i++) fn->params[i] = params[i];
    fn->body = body;
    e->u.fn = fn;
    return e;
}

/* One `pattern => expr` into *alt. */
static bool parse_alt(parser *ps, ir_alt *alt)
{
    const lex_token *t = &ps->tok;
    alt->loc = parse_loc(t);
    ir_expr *lit = NULL;
    switch (t->kind) {
    case TOK_INT:
    case TOK_FLOAT: lit = parse_number(ps, false, alt->loc); break;
    case TOK_MINUS:
        stc__parse_advance(ps);
        if (ps->tok.kind != TOK_INT && ps->tok.kind != TOK_FLOAT) {
            stc__parse_expected(ps, "a number after '-' in a pattern");
            return false;
        }
        lit = parse_number(ps, true, alt->loc);
        break;
    case TOK_STRING: lit = parse_string(ps); break;
    case TOK_TRUE: lit = parse_scalar(ps, stc_value_bool(true)); break;
    case TOK_FALSE: lit = parse_scalar(ps, stc_value_bool(false)); break;
    case TOK_UNDERSCORE:
        alt->pat = PAT_WILD;
        stc__parse_advance(ps);
        break;
    case TOK_IDENT:
        alt->pat = PAT_VAR;
        alt->nvars = 1;
        alt->vars = stc__ir_array(ps->p, 1, sizeof *alt->vars);
        if (!alt->vars) {
            stc__parse_nomem(ps);
            return false;
        }
        alt->vars[0] = parse_binder(ps, "a name");
        break;
    case TOK_INL:
    case TOK_INR:
        alt->pat = t->kind == TOK_INL ? PAT_INL : PAT_INR;
        stc__parse_advance(ps);
        alt->nvars = 1;
        alt->vars = stc__ir_array(ps->p, 1, sizeof *alt->vars);
        if (!alt->vars) {
            stc__parse_nomem(ps);
            return false;
        }
        alt->vars[0] = parse_binder(ps, alt->pat == PAT_INL ? "a name after 'inl' in a pattern"
                                                            : "a name after 'inr' in a pattern");
        break;
    case TOK_LPAREN:
        stc__parse_advance(ps);
        if (ps->tok.kind == TOK_RPAREN) {
            lit = parse_scalar(ps, stc_value_unit());
            if (lit) lit->loc = alt->loc;
            break;
        }
        alt->vars = parse_binders(ps, "a name in a tuple pattern", false, &alt->nvars);
        alt->pat = alt->nvars == 1 ? PAT_VAR : PAT_TUPLE; /* (x) is x */
        break;
    default:
        stc__parse_expected(ps, "a pattern");
        return false;
    }
    if (ps->failed) return false;
    if (lit) {
        /* The literal node owns the value (released with the arena); the
         * alternative keeps a borrowed copy that lives as long. */
        alt->pat = PAT_LIT;
        alt->lit = lit->u.lit;
    }
    if (!stc__parse_expect(ps, TOK_DARROW, "'=>' after the pattern")) return false;
    alt->body = stc__parse_expr(ps);
    return alt->body != NULL;
}

static ir_expr *parse_case(parser *ps)
{
    ir_loc loc = parse_loc(&ps->tok);
    stc__parse_advance(ps);
    ir_expr *subject = stc__parse_expr(ps);
    if (!subject || !stc__parse_expect(ps, TOK_OF, "'of' after the expression of 'case'")) return NULL;
    stc__parse_accept(ps, TOK_BAR);
    ir_alt *alts = NULL;
    int n = 0, cap = 0;
    do {
        if (!(alts = stc__parse_grow(ps, alts, n, &cap, sizeof *alts))) return NULL;
        if (!parse_alt(ps, &alts[n])) return NULL;
        n++;
        /* A case in the last alternative's body has already taken any
         * further '|' alternatives (as in ML). */
    } while (stc__parse_accept(ps, TOK_BAR));
    ir_expr *e = stc__ir_expr_new(ps->p, IR_CASE, loc);
    if (!e) return stc__parse_nomem(ps);
    e->a = subject;
    e->u.cas.alts = alts;
    e->u.cas.nalts = n;
    return e;
}

static ir_expr *parse_primary(parser *ps)
{
    switch (ps->tok.kind) {
    case TOK_INT:
    case TOK_FLOAT: return parse_number(ps, false, parse_loc(&ps->tok));
    case TOK_STRING: return parse_string(ps);
    case TOK_TRUE: return parse_scalar(ps, stc_value_bool(true));
    case TOK_FALSE: return parse_scalar(ps, stc_value_bool(false));
    case TOK_LPAREN: return parse_paren(ps);
    case TOK_LBRACKET: return parse_list(ps);
    case TOK_LBRACE: return parse_map(ps);
    case TOK_IDENT: return stc__parse_at_keyed_decl(ps) ? stc__parse_expected(ps, "an expression") : parse_name(ps);
    case TOK_LET: return parse_let(ps);
    case TOK_IF: return parse_if(ps);
    case TOK_CASE: return parse_case(ps);
    case TOK_FN: return parse_lambda(ps);
    default: return stc__parse_expected(ps, "an expression");
    }
}

/* Nothing in the grammar can follow a complete atom with '(' or '[', nor
 * an expression with ':': say what the writer probably meant instead of
 * letting the declaration end there ("expected a declaration"). */
static ir_expr *parse_after_atom(parser *ps, ir_expr *e)
{
    if (!e) return NULL;
    const lex_token *t = &ps->tok;
    if (t->kind == TOK_LPAREN) {
        if (e->kind == IR_CALL)
            stc__parse_error_at(ps, t->line, t->col, "calling the result of a call is not supported "
                                                "(bind it first: let g = f(x) in g(y))");
        else
            stc__parse_error_at(ps, t->line, t->col, "only a name can be called "
                                                "(bind the function first: let g = ... in g(y))");
        return NULL;
    }
    if (t->kind == TOK_LBRACKET) {
        stc__parse_error_at(ps, t->line, t->col, "there is no indexing syntax: use nth(xs, i) for item i of a list");
        return NULL;
    }
    return e;
}

static ir_expr *parse_prefix(parser *ps)
{
    lex_kind k = ps->tok.kind;
    if (k != TOK_MINUS && k != TOK_NOT && k != TOK_INL && k != TOK_INR)
        return parse_after_atom(ps, parse_primary(ps));
    ir_loc loc = parse_loc(&ps->tok);
    stc__parse_advance(ps);
    if (k == TOK_MINUS && (ps->tok.kind == TOK_INT || ps->tok.kind == TOK_FLOAT))
        return parse_number(ps, true, loc);
    ir_expr *a = parse_unary(ps);
    if (!a) return NULL;
    ir_kind kind = k == TOK_INL ? IR_INL : k == TOK_INR ? IR_INR : IR_UNOP;
    ir_expr *e = stc__ir_expr_new(ps->p, kind, loc);
    if (!e) return stc__parse_nomem(ps);
    e->a = a;
    if (kind == IR_UNOP) e->u.unop = k == TOK_MINUS ? OP_NEG : OP_NOT;
    return e;
}

/* Every nesting of expressions passes through here: the recursion guard. */
static ir_expr *parse_unary(parser *ps)
{
    if (!stc__parse_enter(ps, "expression")) return NULL;
    ir_expr *e = parse_prefix(ps);
    parse_leave(ps);
    return e;
}

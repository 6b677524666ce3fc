/* parse.h - internals shared by the parser files (parser.c: declarations
 * and entry points, stc__parse_expr.c: expressions and patterns, stc__parse_type.c:
 * types).
 *
 * Error strategy: a parse function returns NULL after a syntax error (or
 * out of memory) and every caller passes the NULL up, so one declaration
 * gives at most one syntax error; stc__lang_parse then skips to the next token
 * that starts a declaration at column 1.  A syntax error that directly
 * follows a lexer error which broke the token stream (skipped bytes, a
 * broken string) is not reported: the lexer's message is the cause.
 *
 * Nesting: every recursive parse function enters through stc__parse_enter, so
 * the parser's own recursion stays below IR_MAX_DEPTH; operator chains are
 * built by loops, so after each declaration stc__parse_check_expr/type measure
 * the height of what was built (with bounded recursion) and reject trees
 * higher than IR_MAX_DEPTH.  A chain of binary operators counts as one
 * level however long: later passes recurse freely except down a chain's
 * left spine, which they walk with loops (ir_chain in ir/ir.h).
 */
#ifndef STC_LANG_PARSE_H
#define STC_LANG_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"
#include "lang/lexer.h"
#include "util/diag.h"

typedef struct parser {
    lexer lx;
    lex_token tok;      /* the current token */
    lex_token ahead;    /* the next one, when has_ahead */
    bool has_ahead;
    ir_program *p;
    stc_diags *d;
    int depth;          /* active recursive parse calls */
    bool failed;        /* syntax error (or OOM) in the current declaration */
    bool oom;
    int desync_mark;    /* lexer desyncs when the current declaration began */
} parser;

void stc__parse_init(parser *ps, ir_program *p, const char *src, size_t len, stc_diags *d);
void stc__parse_advance(parser *ps);
const lex_token *stc__parse_peek(parser *ps);
bool stc__parse_accept(parser *ps, lex_kind k);
/* Consumes a token of kind k, or reports "expected WHAT, found X". */
bool stc__parse_expect(parser *ps, lex_kind k, const char *what);

void stc__parse_error_at(parser *ps, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* "expected WHAT, found X" at the current token; always returns NULL. */
void *stc__parse_expected(parser *ps, const char *what);
void *stc__parse_nomem(parser *ps);

static inline ir_loc parse_loc(const lex_token *t) { return (ir_loc){t->line, t->col}; }
/* The token's text copied into the program arena (NULL: OOM, reported). */
char *stc__parse_text(parser *ps, const lex_token *t);
bool stc__parse_is_ident(parser *ps, const lex_token *t, const char *word);
/* At `keyed thread` (a keyed thread declaration's start). */
bool stc__parse_at_keyed(parser *ps);
/* At `keyed thread` in column 1, on one line, where an expression or a
 * binder is expected: the next declaration after an expression cut short
 * (`keyed` as a name there could only be followed by a `thread`
 * declaration written on the same line), so it is reported as found, not
 * taken as the name 'keyed'. */
bool stc__parse_at_keyed_decl(parser *ps);
/* Grows an arena array of *cap elements holding n to fit one more. */
void *stc__parse_grow(parser *ps, void *arr, int n, int *cap, size_t elem);

/* Recursion guard: false (error reported) when nested too deeply. Every
 * successful stc__parse_enter is paired with parse_leave. */
bool stc__parse_enter(parser *ps, const char *what);
static inline void parse_leave(parser *ps) { ps->depth--; }

/* Height checks of finished trees; false (error reported) when too high.
 * Types carry no location: loc is where the type began. */
bool stc__parse_check_expr(parser *ps, const ir_expr *e);
bool stc__parse_check_type(parser *ps, const ir_type *t, ir_loc loc);

ir_expr *stc__parse_expr(parser *ps);
ir_type *stc__parse_type(parser *ps);

#endif

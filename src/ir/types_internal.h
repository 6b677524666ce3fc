/* types_internal.h - the type checker's shared state and operations:
 * types_core.c (unification with constraint flags, schemes, printing and
 * error reports), types.c (inference over expressions), types_decl.c
 * (functions per call-graph component, threads, inits, main). */
#ifndef STC_IR_TYPES_INTERNAL_H
#define STC_IR_TYPES_INTERNAL_H

#include "ir/ir.h"
#include "ir/types.h"

/* Type recursion (unify, instantiate, ...) deeper than this is an error. */
#define TYPES_MAX_TYPE_DEPTH 4000
/* Total steps of type operations before giving up: keeps pathological
 * programs (types that double in size per function) from hanging. */
#define TYPES_MAX_WORK (1L << 23) /* 0.04 s of type work (-O2); 1 s under the fuzzer */
/* Expression recursion limit (the parser already bounds nesting). */
#define TYPES_MAX_EXPR_DEPTH (2 * IR_MAX_DEPTH)

/* Results of unification. */
enum {
    TU_OK = 0,
    TU_MISMATCH,  /* different constructors */
    TU_OCCURS,    /* infinite type: ck->u_var occurs in ck->u_type */
    TU_FLAG,      /* ck->u_type violates flag ck->u_flag from ck->u_origin */
    TU_LIMIT,     /* too large or too deep (fatal, reported once) */
    TU_OOM
};

typedef struct types_ck {
    ir_program *p;
    stc_diags *d;
    int level;          /* 0: main, inits, threads; 1: inside a top-level SCC */
    long work;
    bool oom, fatal, failed;
    bool limit_reported;  /* the TU_LIMIT error has been reported */
    ir_loc cur_loc;       /* the declaration being checked (for limit errors) */
    /* details of the last failed unification */
    unsigned u_flag;
    const char *u_origin;
    ir_type *u_var, *u_type;
    /* origin of each var's flags (an operator or builtin), indexed by id */
    const char **origins;
    int norigins;
    ir_type *t_int, *t_float, *t_bool, *t_str, *t_unit;
    bool *fun_failed;   /* per top-level fun: its SCC had errors */
} types_ck;

/* Constructors; NULL (and ck->oom) when out of memory. */
ir_type *stc__types_fresh(types_ck *ck);
ir_type *stc__types_fresh_flag(types_ck *ck, unsigned flags, const char *origin);
ir_type *stc__types_list(types_ck *ck, ir_type *elem);
ir_type *stc__types_fun(types_ck *ck, ir_type *arg, ir_type *res);
ir_type *stc__types_sum(types_ck *ck, ir_type *l, ir_type *r);
ir_type *stc__types_map(types_ck *ck, ir_type *k, ir_type *v);
/* The type of a map builtin's call e (BI_GET .. BI_TO_MAP; types_maps.c). */
ir_type *stc__types_map_builtin(types_ck *ck, ir_expr *e);
/* The tuple of items (n >= 2), the item (n == 1) or unit (n == 0). */
ir_type *stc__types_pack(types_ck *ck, int n, ir_type **items);
ir_type *stc__types_tuple_fresh(types_ck *ck, int n);

int stc__types_unify(types_ck *ck, ir_type *a, ir_type *b);
/* A copy of t with its generic variables replaced by fresh ones. */
ir_type *stc__types_instantiate(types_ck *ck, ir_type *t);
/* Marks the free variables of t above level 0 generic. */
void stc__types_generalize(types_ck *ck, ir_type *t);
/* Binds the free variables of t: SIZED -> [unit] (str with ORD), NUM/ORD ->
 * int, others -> unit. */
void stc__types_default(types_ck *ck, ir_type *t);

/* Reports a failed unification (rc) at loc.  A flag, occurs-check or limit
 * failure has its own message; a plain mismatch uses fmt, which takes two
 * %s: x and y printed with shared variable names.  Returns NULL. */
ir_type *stc__types_fail(types_ck *ck, ir_loc loc, int rc, const char *fmt, ir_type *x, ir_type *y);
/* Reports an error whose fmt takes one %s: t printed. Returns NULL. */
ir_type *stc__types_error1(types_ck *ck, ir_loc loc, const char *fmt, ir_type *t);
void stc__types_error(types_ck *ck, ir_loc loc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Location helpers: e's location, or fallback when it has none; a call's
 * callee name location. */
ir_loc stc__types_loc(const ir_expr *e, ir_loc fallback);
ir_loc stc__types_call_loc(const ir_expr *e);
/* name made safe for use inside a format string ('%' dropped, truncated). */
void stc__types_esc(char *out, size_t n, const char *name);
/* A malloc'd format for stc__types_fail (NULL when out of memory). */
char *stc__types_fmt(const char *pattern, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* stc__types_fail with a format from stc__types_fmt (freed here; NULL means OOM). */
ir_type *stc__types_fail_fmt(types_ck *ck, ir_loc loc, int rc, char *fmt, ir_type *x, ir_type *y);

/* The library builtin b's parameter types in[0..arity) and result *res
 * (types_lib.c); false when b is not one, or out of memory. */
bool stc__types_lib_signature(types_ck *ck, int b, ir_type **in, ir_type **res);

/* Inference (types.c). */
ir_type *stc__types_expr(types_ck *ck, ir_expr *e, int depth);
/* Fresh parameter types (unified with annotations) and fn->type = P -> R. */
bool stc__types_fun_begin(types_ck *ck, ir_fun *fn);
/* Infers fn's body and unifies it with the result type. */
bool stc__types_fun_body(types_ck *ck, ir_fun *fn, int depth);

#endif

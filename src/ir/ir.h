/* ir.h - the program IR: one tree form for everything STCLang can say.
 *
 * Produced by the parser (src/lang) or the builder (src/api/builder.c), then
 * completed in place by passes, in this order:
 *   1. stc__ir_resolve (src/ir/resolve.c): names -> locals/functions/threads/
 *      builtins, arity checks, thread bindings, frame slots and captures;
 *   2. stc__types_check (src/ir/types.c): type inference, fills every ->type;
 *   3. consumers: the reference evaluator (src/eval), later the dataflow
 *      compiler (src/flow).
 * Everything here is allocated in the program's arena and never freed
 * individually.  After the passes the IR is read-only, so several threads
 * may evaluate it at once.
 */
#ifndef STC_IR_H
#define STC_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stc.h"
#include "util/arena.h"

typedef struct ir_loc {
    int line, col; /* 1-based; 0 = unknown (e.g. built from C without a location) */
} ir_loc;

/* ---- Types --------------------------------------------------------------
 * A function type always has exactly one parameter type and one result:
 * a function of k >= 2 parameters takes the k-tuple of them, a function of
 * no parameters takes unit.  So `fun f(a, b)` has type (A, B) -> R and
 * smap(f, xs) needs xs : [(A, B)]. */

typedef enum ir_type_kind {
    TY_VAR = 0, /* inference variable (see ->ref) */
    TY_INT,
    TY_FLOAT,
    TY_BOOL,
    TY_STR,
    TY_UNIT,
    TY_LIST,  /* args[0] = element */
    TY_TUPLE, /* n >= 2 items in args */
    TY_SUM,   /* args[0] + args[1] */
    TY_FUN,   /* args[0] -> args[1] */
    TY_MAP    /* {args[0]: args[1]}; the key type holds no function */
} ir_type_kind;

/* Constraints a TY_VAR carries (resolved when it is bound or defaulted). */
enum {
    TYF_NUM = 1u, /* int or float: + - * / unary - */
    TYF_ORD = 2u, /* int, float or str: < <= > >= */
    TYF_EQ = 4u,  /* no function inside: == != and literal case patterns */
    TYF_SIZED = 8u /* list, str or map: len (added by types.c; defaults to [unit], or str with ORD) */
};

typedef struct ir_type ir_type;
struct ir_type {
    ir_type_kind kind;
    int n;            /* number of args: LIST 1, TUPLE n, SUM 2, FUN 2, MAP 2 */
    ir_type **args;
    /* TY_VAR only: */
    ir_type *ref;     /* bound type, or NULL while free */
    int id;           /* for printing 'a, 'b ... */
    int level;        /* let-generalisation level */
    unsigned flags;   /* TYF_* */
    bool generic;     /* quantified in a function's type scheme */
};

/* ---- Variables ---------------------------------------------------------- */

/* A local binder: function/lambda parameter, let, let-tuple or pattern
 * variable. References point at the binder (IR_VAR.var). */
typedef struct ir_var {
    const char *name;
    ir_loc loc;
    int slot;         /* frame slot in the enclosing function (stc__ir_resolve) */
    ir_type *type;    /* (stc__types_check) */
    struct ir_fun *owner; /* function/lambda whose frame holds it (stc__ir_resolve); NULL for
                             binders of main or of an init (frames of p->main_nslots /
                             p->init_nslots slots) */
} ir_var;

/* ---- Expressions -------------------------------------------------------- */

typedef enum ir_kind {
    IR_LIT,       /* lit */
    IR_NAME,      /* unresolved identifier `name` (parser); stc__ir_resolve turns it
                     into IR_VAR, IR_FUNREF or IR_THREADREF */
    IR_VAR,       /* local variable var */
    IR_FUNREF,    /* top-level function index as a value */
    IR_THREADREF, /* thread index as a value (only valid as smap's 1st argument) */
    IR_LET,       /* let binders[0] = a in b */
    IR_LETTUPLE,  /* let (binders[0..nbinders-1]) = a in b */
    IR_IF,        /* if a then b else c */
    IR_CASE,      /* case a of alts[0..nalts-1] */
    IR_LAMBDA,    /* fn: the function is `fn` */
    IR_INL,       /* inl a */
    IR_INR,       /* inr a */
    IR_BINOP,     /* a op b */
    IR_UNOP,      /* op a */
    IR_CALL,      /* callee(args...) */
    IR_TUPLE,     /* (items...), nitems >= 2 */
    IR_LIST       /* [items...] */
} ir_kind;

typedef enum ir_binop {
    OP_OR, OP_AND,                         /* short-circuit */
    OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD
} ir_binop;

typedef enum ir_unop { OP_NEG, OP_NOT } ir_unop;

typedef enum ir_callee_kind {
    CALL_NAME = 0, /* unresolved: callee.name (parser); stc__ir_resolve replaces it */
    CALL_FUN,      /* top-level function callee.index */
    CALL_THREAD,   /* thread callee.index */
    CALL_BUILTIN,  /* builtin callee.index (an ir_builtin) */
    CALL_VALUE     /* a function value: callee.var (a local holding a closure) */
} ir_callee_kind;

/* Builtins. The table in src/ir/ir.c gives name and arity; their
 * types live in the type checker and their code in the evaluator. */
typedef enum ir_builtin {
    BI_SMAP,     /* smap(f, xs) */
    BI_LEN,      /* len(xs) : list or str -> int */
    BI_NTH,      /* nth(xs, i) */
    BI_RANGE,    /* range(a, b) : [int] */
    BI_FLOAT,    /* float(i) */
    BI_INT,      /* int(x), truncates toward zero */
    BI_ROUND,    /* round(x), to nearest (halves away from zero) */
    BI_SIN_ITER, /* sin_iter(n, x) */
    /* strings (src/eval/strings.c) */
    BI_WORDS,       /* words(s) : str -> [str], split on runs of ASCII whitespace */
    BI_SPLIT,       /* split(s, sep) : (str, str) -> [str], sep non-empty */
    BI_STR,         /* str(v) : 'a -> str (no function inside), v's text form */
    BI_CONCAT,      /* concat(a, b) : (str, str) -> str */
    BI_PARSE_INT,   /* parse_int(s) : str -> int */
    BI_PARSE_FLOAT, /* parse_float(s) : str -> float */
    /* the library, lists (src/eval/lists.c) */
    BI_FOLD,        /* fold(f, z, xs): left fold, f(acc, x) */
    BI_FILTER,      /* filter(p, xs) */
    BI_APPEND,      /* append(xs, ys) */
    BI_REVERSE,     /* reverse(xs) */
    BI_SORT,        /* sort(xs): ascending, stable, in the key order */
    BI_ZIP,         /* zip(xs, ys): pairs, to the shorter */
    BI_TAKE,        /* take(xs, n) */
    BI_DROP,        /* drop(xs, n) */
    /* the library, strings (src/eval/text.c; try_int, try_float in strings.c) */
    BI_SLICE,       /* slice(s, i, j): bytes i..j-1 */
    BI_FIND,        /* find(s, sub): first index or -1 */
    BI_STARTS_WITH, /* starts_with(s, p) */
    BI_ENDS_WITH,   /* ends_with(s, p) */
    BI_CONTAINS,    /* contains(s, sub) */
    BI_LOWER,       /* lower(s), ASCII */
    BI_UPPER,       /* upper(s), ASCII */
    BI_TRIM,        /* trim(s): ASCII whitespace off both ends */
    BI_JOIN,        /* join(sep, xs) */
    BI_REPLACE,     /* replace(s, old, new) */
    BI_TRY_INT,     /* try_int(s) : str -> int + () */
    BI_TRY_FLOAT,   /* try_float(s) : str -> float + () */
    /* the library, math (src/eval/math.c) */
    BI_ABS,         /* abs(x) : int or float */
    BI_MIN,         /* min(a, b) */
    BI_MAX,         /* max(a, b) */
    BI_SQRT,        /* sqrt(x) : float -> float */
    BI_FLOOR,       /* floor(x) : float -> int */
    BI_CEIL,        /* ceil(x) : float -> int */
    BI_POW,         /* pow(x, y) : (float, float) -> float */
    BI_EXP,         /* exp(x) : float -> float */
    BI_LOG,         /* log(x) : float -> float, natural */
    /* maps (src/eval/maps.c; types in src/ir/types_maps.c); one block */
    BI_GET,     /* get(m, k, d) : ({K: V}, K, V) -> V */
    BI_LOOKUP,  /* lookup(m, k) : ({K: V}, K) -> V + unit */
    BI_HAS,     /* has(m, k) : ({K: V}, K) -> bool */
    BI_PUT,     /* put(m, k, v) : ({K: V}, K, V) -> {K: V} */
    BI_REMOVE,  /* remove(m, k) : ({K: V}, K) -> {K: V} */
    BI_UPDATE,  /* update(m, k, d, f) : ({K: V}, K, V, V -> V) -> {K: V} */
    BI_KEYS,    /* keys(m) : {K: V} -> [K] */
    BI_VALUES,  /* values(m) : {K: V} -> [V] */
    BI_ITEMS,   /* items(m) : {K: V} -> [(K, V)] */
    BI_TO_MAP,  /* to_map(ps) : [(K, V)] -> {K: V}; also what a literal {k: v, ...} is */
    /* state(t): thread t's current state; args[0] is always an IR_THREADREF
     * to a lang thread (resolve.c checks), typed t's state type */
    BI_STATE,
    BI_COUNT_
} ir_builtin;

typedef struct ir_builtin_info {
    const char *name;
    int arity;
} ir_builtin_info;

extern const ir_builtin_info stc__ir_builtins[BI_COUNT_];
/* The builtin called `name`, or -1. */
int stc__ir_builtin_lookup(const char *name);

typedef enum ir_pat_kind {
    PAT_LIT,   /* lit (int, float, str, bool or unit) */
    PAT_WILD,  /* _ */
    PAT_VAR,   /* binds the whole value to var */
    PAT_INL,   /* inl var */
    PAT_INR,   /* inr var */
    PAT_TUPLE  /* (vars[0..nvars-1]) */
} ir_pat_kind;

typedef struct ir_expr ir_expr;

typedef struct ir_alt {
    ir_pat_kind pat;
    ir_loc loc;
    stc_value lit;   /* PAT_LIT */
    ir_var **vars;   /* PAT_VAR/INL/INR: 1; PAT_TUPLE: nvars */
    int nvars;
    ir_expr *body;
} ir_alt;

struct ir_expr {
    ir_kind kind;
    ir_loc loc;
    ir_type *type;        /* (stc__types_check) */
    bool move;            /* IR_VAR as the map of put/remove/update: the variable's last
                             use, its value may be moved out of the frame (stc__ir_mark_moves) */
    uint8_t xop;          /* (stc__eval_prepare, src/eval/prepare.c) the evaluator's specialised
                             form of this node (EVAL_X_* in src/eval/eval_internal.h); 0, the
                             generic one, on nodes made later (zeroed) or not specialised */
    int xslot;            /* (stc__eval_prepare) the frame slot an IR_TUPLE of form
                             EVAL_X_TUPLE_REUSE may take its block from */
    ir_expr *a, *b, *c;   /* sub-expressions, per kind above */
    union {
        stc_value lit;    /* IR_LIT: owned via an stc__arena_on_free hook */
        const char *name; /* IR_NAME */
        ir_var *var;      /* IR_VAR */
        int index;        /* IR_FUNREF, IR_THREADREF */
        ir_binop binop;   /* IR_BINOP */
        ir_unop unop;     /* IR_UNOP */
        struct ir_fun *fn;/* IR_LAMBDA */
        struct {          /* IR_LET, IR_LETTUPLE */
            ir_var **binders;
            int nbinders;
        } let;
        struct {          /* IR_CASE */
            ir_alt *alts;
            int nalts;
        } cas;
        struct {          /* IR_TUPLE, IR_LIST */
            ir_expr **items;
            int nitems;
        } agg;
        struct {          /* IR_CALL */
            ir_callee_kind kind;
            union {
                const char *name; /* CALL_NAME */
                int index;        /* CALL_FUN, CALL_THREAD, CALL_BUILTIN */
                ir_var *var;      /* CALL_VALUE */
            } callee;
            ir_loc callee_loc;
            ir_expr **args;
            int nargs;
            bool tail;    /* (stc__ir_resolve) a tail call: CALL_FUN or CALL_VALUE in tail
                             position of its function's body (stc__ir_mark_tail_calls) */
        } call;
    } u;
};

/* ---- Functions, lambdas, threads, program -------------------------------- */

/* A top-level `fun` or a lambda (`fn`).  Its frame has nslots slots:
 * captured values first (lambdas only, in captures order), then the
 * parameters, then every let/pattern binder of the body. */
typedef struct ir_fun {
    const char *name;    /* top-level name, or "<fn>" for lambdas */
    ir_loc loc;
    ir_var **params;
    int nparams;
    ir_expr *body;
    ir_type *ret_annot;  /* annotated result type or NULL (params carry their own) */
    ir_type **param_annots; /* per parameter, NULL entries when not annotated */
    ir_type *type;       /* (stc__types_check) the function type; generic vars marked */
    int index;           /* top-level: its index in program->funs; lambda: -1 */
    /* (stc__ir_resolve) */
    int nslots;
    ir_var **captures;   /* outer binders a lambda captures (slot i holds captures[i]):
                            variables of the enclosing frame, read when the closure is built */
    ir_var **capture_slots; /* the lambda's own ir_var for each capture (same name, owner =
                            this lambda, slot i); references inside the body use these */
    int ncaptures;
} ir_fun;

typedef enum ir_thread_kind { THREAD_LANG, THREAD_C } ir_thread_kind;

typedef struct ir_thread {
    const char *name;
    ir_loc loc;
    const char *target;  /* the function name after '=' */
    ir_loc target_loc;
    ir_expr *init;       /* the init expression, or NULL */
    /* (stc__ir_resolve) */
    ir_thread_kind kind;
    int fun;             /* THREAD_LANG: index in program->funs */
    const stc_thread_def *cdef; /* THREAD_C: the registered definition (&cthread->def) */
    const struct ir_cthread *cthread; /* THREAD_C: it with its parsed types (ir/cthread.h) */
    int ninputs;         /* THREAD_LANG: fun's nparams - 1; THREAD_C: 1 */
    /* (stc__types_check) */
    ir_type *in_type;    /* unit (0 inputs), the input, or the tuple of inputs */
    ir_type *out_type;
    ir_type *state_type; /* C thread without a declared state_type: unit */
    stc_access access;   /* declared (C) or inferred (lang; STC_WRITES until the
                            flow compiler's analysis refines it) */
    bool keyed;          /* `keyed thread` (docs/LANGUAGE.md, keyed threads): THREAD_LANG
                            whose function takes the key first; its state is the map
                            key -> that key's state, and init is a new key's state */
    ir_type *key_type;   /* keyed (stc__types_check): the key type K */
    ir_type *key_state_type; /* keyed: S, one key's state; state_type is {K: S} */
    bool state_moves;    /* (stc__ir_mark_moves) THREAD_LANG whose function calls no thread
                            and no function value, and not read-only (every path
                            returning the state): its calls never overlap, so its state
                            is moved into each call and a map state updated in place */
    const struct eval_tk *xtk; /* (stc__eval_prepare) THREAD_LANG: its function's compiled
                            form for a call (src/eval/kernel.c), or NULL */
} ir_thread;

typedef struct ir_program {
    arena *arena;
    const char *file;
    ir_fun **funs;       /* top-level functions in declaration order */
    int nfuns, funs_cap;
    ir_thread **threads; /* in declaration order */
    int nthreads, threads_cap;
    ir_expr *main;       /* NULL until declared */
    ir_loc main_loc;
    ir_var *main_param;  /* `fun main(x) = ...`: x, main's input stream (slot 0 of
                            main's frame), else NULL */
    int main_nslots;     /* (stc__ir_resolve) frame size for evaluating main */
    int init_nslots;     /* (stc__ir_resolve) frame size for evaluating any init (the binders of
                            all inits are numbered consecutively, so one frame fits each) */
    int next_type_id;    /* (stc__types_check) counter for TY_VAR ids */
    const stc_env *env;  /* the C threads it may bind (ir/cthread.h); may be NULL */
} ir_program;

/* Limits that keep every recursive pass bounded (no stack overflow). */
#define IR_MAX_DEPTH 1000      /* expression and type nesting the parser accepts */

/* Constructors (arena-allocated, zeroed; NULL when out of memory). */
ir_program *stc__ir_program_new(const char *file, const stc_env *env);
void stc__ir_program_free(ir_program *p);
ir_expr *stc__ir_expr_new(ir_program *p, ir_kind kind, ir_loc loc);
ir_var *stc__ir_var_new(ir_program *p, const char *name, ir_loc loc);
ir_fun *stc__ir_fun_new(ir_program *p, const char *name, ir_loc loc, int nparams);
ir_thread *stc__ir_thread_new(ir_program *p, const char *name, ir_loc loc);
/* Arena-allocated array of n zeroed pointers/structs. */
void *stc__ir_array(ir_program *p, size_t n, size_t elem_size);
/* A literal node that takes over v's reference (released with the arena). */
ir_expr *stc__ir_lit(ir_program *p, stc_value v, ir_loc loc);
/* Appends to the program's lists; -1 when out of memory. */
int stc__ir_add_fun(ir_program *p, ir_fun *f);
int stc__ir_add_thread(ir_program *p, ir_thread *t);
/* Finds a top-level function/thread by name: index or -1. */
int stc__ir_find_fun(const ir_program *p, const char *name);
int stc__ir_find_thread(const ir_program *p, const char *name);

/* Types (arena-allocated). Scalar constructors return fresh nodes. */
ir_type *stc__ir_type_new(ir_program *p, ir_type_kind kind, int n);
ir_type *stc__ir_type_var(ir_program *p, int level);
ir_type *stc__ir_type_resolve(ir_type *t); /* follows TY_VAR refs */
/* Appends the type in STCLang syntax ("[int] -> (str, float)"; free
 * variables as 'a, 'b ...) to a malloc'd string; NULL when out of memory. */
char *stc__ir_type_to_string(ir_type *t);
/* Whether e mentions variable v (directly, in a call or as a capture). */
bool stc__ir_expr_uses(const ir_expr *e, const ir_var *v);
/* How many times e mentions v (as stc__ir_expr_uses counts a mention),
 * counted up to limit at most. */
int stc__ir_expr_count_uses(const ir_expr *e, const ir_var *v, int limit);

/* Marks the tail calls of a function body (docs/LANGUAGE.md 6): the calls
 * to functions, by name or through a function value (not threads or
 * builtins), in tail position: the body itself, both branches of an if,
 * every alternative of a case and the body of a let or let-tuple, when
 * these are in tail position.  Recursion bounded by IR_MAX_DEPTH. */
void stc__ir_mark_tail_calls(ir_expr *body);

/* A chain of binary operators (`a + b + c`, left-associative) nests to
 * the left without limit: it is not nesting in the language's sense
 * (docs/LANGUAGE.md section 2), so every recursive pass walks a chain with
 * a loop instead of recursing down its left spine. stc__ir_chain_init gathers
 * e's spine: nodes[0] = e, nodes[i + 1] = nodes[i]->a while that is an
 * IR_BINOP; the operands in evaluation order are then nodes[n - 1]->a,
 * nodes[n - 1]->b, nodes[n - 2]->b, ..., nodes[0]->b. False when out of
 * memory; stc__ir_chain_free releases (also after a failed init). */
typedef struct ir_chain {
    ir_expr **nodes;
    size_t n;
    ir_expr *small[16];
} ir_chain;
bool stc__ir_chain_init(ir_chain *c, const ir_expr *e);
void stc__ir_chain_free(ir_chain *c);

/* The operator's source spelling ("+", "&&", "not", ...). */
const char *stc__ir_binop_name(ir_binop op);
const char *stc__ir_unop_name(ir_unop op);

#endif

/* kernel.h - a thread's compiled form, shared by kernel.c (running it)
 * and kernel_code.c (compiling it); docs/DESIGN.md 2, "A thread call's
 * compiled form" and "The register code".  Internal to src/eval. */
#ifndef STC_EVAL_KERNEL_H
#define STC_EVAL_KERNEL_H

#include "eval/eval_internal.h"

/* The ops: each expression op writes register d (a whole value, tag
 * included) from registers a and b, or from a and the immediate k.as.i.
 * Their meaning is eval_arith's and eval_compare's (operators.c) on the
 * tags the compiler proved: ints wrap, floats are IEEE. */
enum {
    TK_LOADK, TK_MOV, TK_KEEP, /* d = k; d = a; d = a retained (a str binder's) */
    TK_ADD_I, TK_SUB_I, TK_MUL_I, TK_EQ_I, TK_NE_I, TK_LT_I, TK_LE_I, TK_GT_I, TK_GE_I,
    /* the same, b the immediate; and / % (the immediate not 0 nor -1) */
    TK_ADD_IK, TK_SUB_IK, TK_MUL_IK, TK_EQ_IK, TK_NE_IK, TK_LT_IK, TK_LE_IK, TK_GT_IK, TK_GE_IK,
    TK_DIV_IK, TK_MOD_IK,
    TK_ADD_F, TK_SUB_F, TK_MUL_F, TK_DIV_F, TK_MOD_F,
    TK_LT_F, TK_LE_F, TK_GT_F, TK_GE_F,
    TK_EQ_S, TK_NE_S, TK_EQ_B, TK_NE_B,
    TK_NOT, TK_NEG_I, TK_NEG_F,
    TK_AND, TK_OR, TK_SEL, /* bools a and b; d = a ? b : register j */
    TK_JF, TK_JT, TK_JMP, /* to op j when bool a is false, true; always */
    /* The body's: the state's items into the binders; an int case (to the
     * op of the key a equals); the pair, which ends the call. */
    TK_LETT, TK_CASE, TK_PAIR
};

/* Deepest expression compiled; widest state tuple; most inputs; the
 * frame (on the C stack, for the evaluator's path too); the frame and
 * its temporaries (a pair's items each hold one); ops a body. */
#define TK_MAX_HEIGHT 12
#define TK_MAX_ITEMS 16
#define TK_MAX_IN 4
#define TK_MAX_SLOTS 24
#define TK_MAX_REGS 64
#define TK_MAX_OPS 512
_Static_assert(TK_MAX_REGS <= 256, "a register is a uint8_t");

/* Copies dst[to] = src[from], a str retained when heap (any: one is). */
typedef struct tk_copy {
    uint8_t to, from;
    bool heap;
} tk_copy;

typedef struct tk_copies {
    int n;
    bool any;
    tk_copy *c;
} tk_copies;

/* A let-tuple of the state: its items into the binders' slots, retained
 * (bind); moved when the state is its one mention (EVAL_X_LET_MOVE) and
 * held once (mbind: only the items read other than where they stay in
 * place, see tk_refine; drop: the strs no binder takes). */
typedef struct tk_lett {
    bool move;
    tk_copies bind, mbind, drop;
} tk_lett;

typedef struct tk_case {
    int n;                /* keys */
    int slot;             /* the catch-all's binder (-1: none) */
    const int64_t *keys;
    const int32_t *to;    /* the op of each key's body, then the catch-all's */
} tk_case;

/* The pair: its output's items from registers (on > 0), or one value
 * (a register, or the literal olit when oreg is -1); the state's items
 * from registers into the new tuple (n > 0; all, or mall into the block
 * the state moved in from, which still holds the items left in place),
 * or one value (register st). */
typedef struct tk_pair {
    int on, oreg;
    bool oheap, sheap;
    stc_value olit;
    tk_copies out, all, mall;
    int n, st;
    ir_loc loc, oloc;     /* the state tuple's, the output tuple's (out of memory) */
} tk_pair;

typedef struct tk_op {
    uint8_t op, d, a, b;
    int32_t j;
    union {
        stc_value k; /* TK_LOADK: the IR's literal (borrowed); the *_IK ops: k.as.i */
        tk_lett *lett;
        const tk_case *cas;
        tk_pair *pair;
    } u;
} tk_op;

struct eval_tk {
    const tk_op *code;
    int nops;
    int ninputs;
    stc_tag in_tag[TK_MAX_IN];
    int state_slot;
    int nstate;                  /* the state tuple's arity; 0: a scalar or str state */
    stc_tag st_tag[TK_MAX_ITEMS]; /* its items' tags (nstate 0: st_tag[0] the state's) */
    int nbind, nrel;             /* str binders (set to unit first); str slots to release */
    const int *bind, *rel;
};

#endif

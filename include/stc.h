/* stc.h - the one public header of libstc, STCLang in C.
 *
 * A program is built from state threads: functions that own a private state
 * and map (input, state) -> (output, new state).  A host registers C state
 * threads in an environment, compiles STCLang text (or builds the program
 * with the builder API), runs it, and reads the result and every thread's
 * final state.  All handles are opaque.
 *
 * How every function reports failure:
 *   - a function returning int returns 0 (or a count or a flag it names)
 *     on success and a negative STC_E* code on failure, which
 *     stc_strerror() explains;
 *   - a function returning a pointer (a handle, a malloc'd string) returns
 *     NULL on failure: out of memory, or an argument it cannot use;
 *   - a value constructor returns a value tagged STC_T_INVALID;
 *   - an accessor given NULL or an index out of range returns a neutral
 *     answer (0, NULL, false, an INVALID value) and never crashes;
 *   - every _free(NULL) is a no-op, and nothing in the library aborts the
 *     process or prints on bad input.
 */
#ifndef STC_H
#define STC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STC_VERSION_MAJOR 0
#define STC_VERSION_MINOR 1
#define STC_VERSION_PATCH 0
#define STC_VERSION_STRING "0.1.0"

const char *stc_version(void);

/* ---- Error codes -------------------------------------------------------
 * One table, X(NAME, VALUE, TEXT): the enum below and stc_strerror() are
 * both made from it.  The values never change (they are ABI). */
#define STC_ERROR_MAP(X)                                                                   \
    X(STC_OK, 0, "success")                                                                \
    X(STC_ENOMEM, -1, "out of memory")                                                     \
    X(STC_EINVAL, -2, "invalid argument")                                                  \
    X(STC_ECOMPILE, -3, "the program does not compile")   /* see the diagnostics */        \
    X(STC_ERUNTIME, -4, "runtime error")                  /* see stc_result_error */       \
    X(STC_EIO, -5, "input/output error")                  /* a file or stream failed */    \
    X(STC_ETYPE, -6, "value has the wrong type")          /* for the operation */          \
    X(STC_ERANGE, -7, "out of range")                     /* an index or a size */         \
    X(STC_EEXIST, -8, "name already defined")                                              \
    X(STC_ENOENT, -9, "name not defined")                                                  \
    X(STC_ECANCELED, -10, "run cancelled")                /* stc_cancel_request */         \
    X(STC_ELIMIT, -11, "limit exceeded")                  /* a nesting, depth or size limit */

#define STC_ERROR_ENUM_(name, value, text) name = value,
enum { STC_ERROR_MAP(STC_ERROR_ENUM_) };
#undef STC_ERROR_ENUM_

/* A static, human-readable description of an error code (the TEXT above;
 * "unknown error" for any other int). Never NULL. */
const char *stc_strerror(int code);

/* ---- Values -------------------------------------------------------------
 * A value is a small tagged struct passed by value.  Scalars live inline;
 * str, list, tuple, inl/inr and user objects are immutable heap objects with
 * an atomic reference count, safe to share between threads (retain a value,
 * on the thread that holds it, before handing it to another).  Functions named
 * stc_value_new_* return a value holding one reference the caller owns;
 * release it with stc_value_release().  Scalars need no release (it is a
 * no-op on them). On allocation failure constructors return a value with
 * tag STC_T_INVALID. */

typedef enum stc_tag {
    STC_T_INVALID = 0,
    STC_T_UNIT,
    STC_T_INT,
    STC_T_FLOAT,
    STC_T_BOOL,
    STC_T_STR,
    STC_T_LIST,
    STC_T_TUPLE,
    STC_T_INL,
    STC_T_INR,
    STC_T_FUNC,  /* a function value (closure); internal representation */
    STC_T_USER,  /* an opaque user object with a destructor */
    STC_T_MAP    /* a map {K: V} (stc_map_*) */
} stc_tag;

typedef struct stc_obj stc_obj; /* opaque heap object */

typedef struct stc_value {
    stc_tag tag;
    union {
        int64_t i;
        double f;
        bool b;
        stc_obj *obj;
    } as;
} stc_value;

stc_value stc_value_unit(void);
stc_value stc_value_int(int64_t i);
stc_value stc_value_float(double f);
stc_value stc_value_bool(bool b);
/* Copies len bytes of s (need not be NUL-terminated). */
stc_value stc_value_new_str(const char *s, size_t len);
/* Takes over the references of the n items (they are consumed, even on failure). */
stc_value stc_value_new_list(size_t n, const stc_value *items);
stc_value stc_value_new_tuple(size_t n, const stc_value *items);
/* Takes over the reference of v (consumed, even on failure). */
stc_value stc_value_new_inl(stc_value v);
stc_value stc_value_new_inr(stc_value v);
/* A user object: ptr is passed to destroy(ptr) when the last reference goes. */
stc_value stc_value_new_user(void *ptr, void (*destroy)(void *ptr));

stc_value stc_value_retain(stc_value v); /* returns v with one more reference */
void stc_value_release(stc_value v);

/* Accessors. They do not transfer ownership; borrowed results stay valid as
 * long as the value they came from. */
bool stc_value_is_valid(stc_value v);
const char *stc_value_str(stc_value v, size_t *len); /* NUL-terminated; NULL if not a str */
size_t stc_value_len(stc_value v);                    /* items of a list/tuple/map, bytes of a str */
stc_value stc_value_at(stc_value v, size_t i);        /* borrowed item of list/tuple; INVALID if out of range */
stc_value stc_value_payload(stc_value v);             /* borrowed payload of inl/inr */
void *stc_value_user(stc_value v);                    /* pointer of a user object, else NULL */

/* Maps ({K: V}): immutable like every value, ordered by key (the key
 * order of docs/LANGUAGE.md: ints numerically, floats by IEEE totalOrder,
 * strings bytewise, tuples and lists lexicographically, ...).  Keys are
 * values without functions inside; all keys of one map have one type.
 *   stc_map_new()              an empty map (INVALID when out of memory).
 *   stc_map_put(m, k, v)       m with k bound to v; consumes m, k and v and
 *                              returns the new map (INVALID on failure, with
 *                              everything released).  When the caller held
 *                              m's only reference the map is updated in
 *                              place, in O(log n); else m stays unchanged
 *                              and shares all but O(log n) of its nodes.
 *   stc_map_remove(m, k)       m without k (unchanged if absent); consumes
 *                              m, borrows k.
 *   stc_map_get(m, k)          the value at k, borrowed; INVALID if absent.
 *   stc_map_len(m)             the number of keys (0 if m is not a map).
 * Iterate in ascending key order with an iterator that borrows m (which
 * must stay alive meanwhile); k and v are borrowed:
 *   stc_map_iter it; stc_map_iter_init(&it, m);
 *   while (stc_map_iter_next(&it, &k, &v)) ...
 * C threads take and return maps like any other value ("{str: int}" in a
 * type string). */
stc_value stc_map_new(void);
stc_value stc_map_put(stc_value m, stc_value k, stc_value v);
stc_value stc_map_remove(stc_value m, stc_value k);
stc_value stc_map_get(stc_value m, stc_value k);
size_t stc_map_len(stc_value m);
typedef struct stc_map_iter {
    const void *stack[96]; /* private */
    int top;
} stc_map_iter;
void stc_map_iter_init(stc_map_iter *it, stc_value m);
bool stc_map_iter_next(stc_map_iter *it, stc_value *k, stc_value *v);

/* Structural equality (floats compare with ==, so NaN != NaN, even for a
 * value compared with itself).  Time linear in the objects of a and b, not
 * in their unshared size: a list holding one sublist twice, nested 40 deep,
 * compares in 40 steps, not 2^40. */
bool stc_value_equal(stc_value a, stc_value b);

/* Printing. Returns a malloc'd NUL-terminated string the caller frees with
 * free(), or NULL on failure: errno is ENOMEM when memory ran out, E2BIG
 * when the text would be longer than 1 GiB (shared subvalues print once per
 * use, so a small value can have a huge text: the 40-deep list above has
 * 2^40 leaves; such a value fails at once, without printing).  Text is
 * STCLang syntax ("[1, 2]", "(1, 2.5)", "inl \"a\""), JSON follows the
 * `stc run --json` mapping; stc_result_to_json has the same limit. */
char *stc_value_to_text(stc_value v);
char *stc_value_to_json(stc_value v);

/* ---- Environment and C state threads ----------------------------------- */

typedef struct stc_env stc_env;
typedef struct stc_ctx stc_ctx; /* per-call context handed to a C thread */

/* How a C thread uses its state; tells the runtime what it may parallelise. */
typedef enum stc_access {
    STC_WRITES = 0,      /* reads and writes its state: a serial, in-order stage */
    STC_READS = 1,       /* only reads its state: may be replicated */
    STC_PURE = 2,        /* ignores its state: may be replicated */
    STC_INDEPENDENT = 3  /* output ignores the state, new state ignores the input (g x h) */
} stc_access;

/* A C state thread: read *in (borrowed), update the state, store an owned
 * value in *out.  Return 0, or a negative code after stc_ctx_error(). */
typedef int (*stc_thread_fn)(void *state, const stc_value *in, stc_value *out, stc_ctx *cx);

typedef struct stc_thread_def {
    const char *name;   /* the name a `thread t = NAME` declaration refers to */
    stc_thread_fn fn;
    const char *type;   /* "IN -> OUT" in STCLang type syntax, e.g. "str -> int" */
    const char *state_type; /* STCLang type of the `init` value; NULL: no init allowed */
    size_t state_size;  /* bytes of state the runtime allocates per thread instance */
    /* Initialise a zeroed state.  init is the `init` value, or NULL when the
     * declaration has none.  Return 0 or a negative code. May be NULL. */
    int (*state_init)(void *state, const stc_value *init, void *user);
    void (*state_free)(void *state, void *user);                  /* may be NULL */
    /* The final state as a value (owned by the caller). May be NULL: unit. */
    int (*state_to_value)(const void *state, stc_value *out, void *user);
    stc_access access;
    void *user;         /* passed to the callbacks above and via stc_ctx_user() */
    /* STC_INDEPENDENT threads may also split fn into its two halves; with
     * both set, the parallel runtime calls output_fn (state is NULL) on any
     * worker, items in parallel, and state_fn serially in item order, while
     * the reference evaluator keeps calling fn.  Both must together do what
     * fn does.  Optional: without them the thread runs as a serial stage. */
    stc_thread_fn output_fn;
    int (*state_fn)(void *state, stc_ctx *cx);
} stc_thread_def;

stc_env *stc_env_new(void);
void stc_env_free(stc_env *env);
/* Registers a C thread (the definition is copied). STC_EEXIST if the name is
 * taken, STC_EINVAL if the definition or its type does not parse. */
int stc_env_add_thread(stc_env *env, const stc_thread_def *def);

/* Record an error from inside a C thread; returns STC_ERUNTIME to return. */
int stc_ctx_error(stc_ctx *cx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void *stc_ctx_user(stc_ctx *cx);

/* ---- Diagnostics -------------------------------------------------------- */

typedef struct stc_diags stc_diags;

size_t stc_diags_count(const stc_diags *d);
/* Fields of diagnostic i: file, 1-based line and column, message. */
const char *stc_diags_file(const stc_diags *d, size_t i);
int stc_diags_line(const stc_diags *d, size_t i);
int stc_diags_col(const stc_diags *d, size_t i);
const char *stc_diags_message(const stc_diags *d, size_t i);
/* All diagnostics as "FILE:LINE:COL: error: message" lines, each followed by
 * the source line and a caret. Malloc'd; free() it. NULL if none or no memory. */
char *stc_diags_format(const stc_diags *d);
void stc_diags_free(stc_diags *d);

/* ---- Programs ---------------------------------------------------------- */

typedef struct stc_program stc_program;

/* Compiles STCLang source text (len bytes; need not be NUL-terminated).
 * filename is used in diagnostics.  On success *out is the program and
 * returns 0.  On failure returns STC_ECOMPILE (or STC_ENOMEM) and, if diags
 * is not NULL, *diags receives the diagnostics (free with stc_diags_free).
 * The env must outlive the program. */
int stc_compile(stc_env *env, const char *src, size_t len, const char *filename,
                stc_program **out, stc_diags **diags);
void stc_program_free(stc_program *prog);

/* The compiled dataflow graph as Graphviz DOT text (malloc'd; NULL when
 * out of memory or view is unknown).  STC_GRAPH_STAGES: every smap as its
 * pipeline of stages, named after their threads and source lines, marked
 * serial / replicated / split / fused segment, edges labelled with types.
 * STC_GRAPH_THREADS: the threads as edges between their input and output
 * types (the multigraph of the STCLang paper). */
enum { STC_GRAPH_STAGES = 0, STC_GRAPH_THREADS = 1 };
char *stc_program_graph(const stc_program *prog, int view);
/* The stages view, each stage also labelled with the ranks that may run it
 * under `stc run --mpi` at `ranks` ranks (docs/CLUSTER.md): "ranks 0-K-1"
 * for a stage whose batches may go to other ranks (rank 0 runs those
 * that find every rank busy), "rank 0" for the rest; ranks 1 is
 * stc_program_graph's stages view.  NULL when out of memory or ranks < 1. */
char *stc_program_graph_ranks(const stc_program *prog, int ranks);
/* stc_program_graph_ranks as a run at `workers` workers plans it: a keyed
 * thread's shard stages drawn one by one, as many as such a run has
 * (workers, at most 8; one serial stage at 1 worker), named
 * "[shard i/N]".  NULL when out of memory, ranks < 1 or workers < 1. */
char *stc_program_graph_run(const stc_program *prog, int ranks, int workers);

/* Number and names of the program's threads, in declaration order. */
size_t stc_program_thread_count(const stc_program *prog);
const char *stc_program_thread_name(const stc_program *prog, size_t i);

/* ---- Builder ------------------------------------------------------------
 * Builds the same program IR from C.  Expression handles (stc_b_expr) belong
 * to the builder and are freed with it; each may be used once as a child.
 * Any constructor given a NULL child returns NULL, and the error is reported
 * by stc_builder_finish, so calls can be nested without checks. */

typedef struct stc_builder stc_builder;
typedef struct stc_b_expr stc_b_expr;

stc_builder *stc_builder_new(stc_env *env);
void stc_builder_free(stc_builder *b);

stc_b_expr *stc_b_int(stc_builder *b, int64_t i);
stc_b_expr *stc_b_float(stc_builder *b, double f);
stc_b_expr *stc_b_bool(stc_builder *b, bool v);
stc_b_expr *stc_b_str(stc_builder *b, const char *s);
stc_b_expr *stc_b_unit(stc_builder *b);
/* A variable bound by stc_b_let or a body callback. */
typedef struct stc_b_var stc_b_var;
stc_b_expr *stc_b_ref(stc_builder *b, stc_b_var *var);
/* let NAME = value in body(var) */
stc_b_expr *stc_b_let(stc_builder *b, const char *name, stc_b_expr *value,
                      stc_b_expr *(*body)(stc_builder *b, stc_b_var *var, void *ud), void *ud);
stc_b_expr *stc_b_tuple(stc_builder *b, size_t n, stc_b_expr *const *items);
stc_b_expr *stc_b_list(stc_builder *b, size_t n, stc_b_expr *const *items);
/* The map literal {keys[0]: vals[0], ...} (later entries win); the map
 * builtins (get, put, update, keys, ...) are called with stc_b_call. */
stc_b_expr *stc_b_map(stc_builder *b, size_t n, stc_b_expr *const *keys, stc_b_expr *const *vals);
stc_b_expr *stc_b_inl(stc_builder *b, stc_b_expr *e);
stc_b_expr *stc_b_inr(stc_builder *b, stc_b_expr *e);
/* op is one of "||" "&&" "==" "!=" "<" "<=" ">" ">=" "+" "-" "*" "/" "%" */
stc_b_expr *stc_b_binop(stc_builder *b, const char *op, stc_b_expr *l, stc_b_expr *r);
/* op is "-" or "not" */
stc_b_expr *stc_b_unop(stc_builder *b, const char *op, stc_b_expr *e);
stc_b_expr *stc_b_if(stc_builder *b, stc_b_expr *c, stc_b_expr *t, stc_b_expr *e);
/* Call a function, thread or builtin by name with n arguments. */
stc_b_expr *stc_b_call(stc_builder *b, const char *name, size_t n, stc_b_expr *const *args);
/* case scrutinee of inl x => on_inl(x) | inr y => on_inr(y) */
stc_b_expr *stc_b_case_sum(stc_builder *b, stc_b_expr *scrutinee,
                           stc_b_expr *(*on_inl)(stc_builder *b, stc_b_var *x, void *ud),
                           stc_b_expr *(*on_inr)(stc_builder *b, stc_b_var *y, void *ud), void *ud);
/* case scrutinee of lits[0] => arms[0] | ... | _ => otherwise (otherwise may be NULL:
 * no default, a non-matching value is a runtime error). */
stc_b_expr *stc_b_case_lit(stc_builder *b, stc_b_expr *scrutinee, size_t n,
                           stc_b_expr *const *lits, stc_b_expr *const *arms, stc_b_expr *otherwise);
/* smap(fn x => body(x), list) */
stc_b_expr *stc_b_smap(stc_builder *b, stc_b_expr *list,
                       stc_b_expr *(*body)(stc_builder *b, stc_b_var *x, void *ud), void *ud);

/* Declarations. fun NAME(p0..pn-1) = body(params); thread NAME = FUN [init e]. */
int stc_b_fun(stc_builder *b, const char *name, size_t nparams, const char *const *params,
              stc_b_expr *(*body)(stc_builder *b, stc_b_var *const *params, void *ud), void *ud);
int stc_b_thread(stc_builder *b, const char *name, const char *fun, stc_b_expr *init /* may be NULL */);
int stc_b_main(stc_builder *b, stc_b_expr *body);

/* Validates, type-checks and produces the program (see stc_compile for
 * diags). The builder may be freed afterwards. */
int stc_builder_finish(stc_builder *b, stc_program **out, stc_diags **diags);

/* ---- Running ------------------------------------------------------------ */

/* A cancellation flag a host can raise from any thread while stc_run runs
 * (e.g. on a signal or a timeout): the run stops at the next smap item or
 * function call and fails with STC_ECANCELED. */
typedef struct stc_cancel stc_cancel;
stc_cancel *stc_cancel_new(void);
void stc_cancel_free(stc_cancel *c);
void stc_cancel_request(stc_cancel *c);  /* async-signal-safe */
void stc_cancel_reset(stc_cancel *c);    /* before reusing it for another run */

/* A pool of worker threads a host can keep across runs (each stc_run
 * otherwise starts and stops its own).  Runs given the same pool take
 * turns: one runs at a time, the others wait. */
typedef struct stc_pool stc_pool;
#define STC_MAX_WORKERS 4096 /* workers a pool or a run may have at most */
stc_pool *stc_pool_new(int workers); /* 1..STC_MAX_WORKERS workers; NULL on failure */
void stc_pool_free(stc_pool *p);     /* no run may be using it */
int stc_pool_workers(const stc_pool *p);

typedef struct stc_run_opts {
    int workers;          /* 0: the number of online CPUs (at most STC_MAX_WORKERS) */
    bool profile;         /* measure every pipeline stage (stc_result_profile_*) */
    const char *trace_path; /* write a Chrome trace-event file here (NULL: no trace);
                               stc_run fails with STC_EIO if it cannot be written */
    int queue_capacity;   /* items per batch passed between stages at most; 0: default (1024) */
    bool reference;       /* run the reference evaluator */
    int max_batches;      /* batches in flight at most; 0: default (2 x workers + stages,
                             a stream 2 x workers + 1) */
    stc_cancel *cancel;   /* NULL: the run cannot be cancelled */
    stc_pool *pool;       /* NULL: a pool for this run; else its workers (then
                             `workers` must be 0 or the pool's count) */
    const struct stc_remote *remote; /* NULL: every stage runs here; else where
                             replicated stages may send batches (below) */
} stc_run_opts;

/* ---- Remote executors (stc run --mpi) -----------------------------------
 * A run may hand a batch of items at a replicated pipeline stage to
 * another process running the same program text: libstc encodes the
 * request (which smap, stage and function, by numbers every compile of
 * the text agrees on; the closure's captures; each item's frame), the
 * host's transport carries it to a process that answers it with
 * stc_remote_server_handle, and libstc adopts the reply (the frames the
 * stage wrote, or an item's error, exactly as if the stage had run here).
 * Only replicated stages that call no function value and no thread but
 * read-only STCLang ones (whose states then go with each batch) are
 * sent; anything that cannot travel (user objects, a transport failure,
 * a malformed reply) runs here instead, so the results never change.
 * libstc knows nothing of the transport (the stc command's is MPI). */
typedef struct stc_remote {
    /* Sends req[0, len) and waits for the reply: 0 with *reply (malloc'd,
     * libstc frees it) and *reply_len, or a negative code (the batch then
     * runs here).  Called from pool workers, several at once. */
    int (*call)(void *ud, const void *req, size_t len, void **reply, size_t *reply_len);
    void *ud;
    /* Optional (NULL: `call` is used): sends req[0, len) without waiting.
     * Returns 0 when the transport took it: then it calls done(token, rc,
     * reply, reply_len) exactly once, from any thread (its own, typically),
     * possibly before start returns, with rc and the reply as `call` gives
     * them; req stays valid until then.  Any other return: not taken (the
     * transport is full, or failed), and the batch runs here.  While a
     * batch is away it holds no worker: the worker goes on with other
     * batches.  Called from pool workers, several at once. */
    int (*start)(void *ud, const void *req, size_t len,
                 void (*done)(void *token, int rc, void *reply, size_t reply_len), void *token);
    /* With start: how many batches the transport holds at most at once; the
     * run keeps that many more batches in flight, so that batches away do
     * not leave the workers without work. */
    int slots;
    /* Optional (peers 0 or start_to NULL: every serial stage runs here).
     * The serving processes the transport reaches, numbered 0..peers-1,
     * and start_to, which sends req to one of them as start does (done
     * exactly once, req valid until then).  With them a serial stage
     * whose work is dear may be *owned* by a peer for the rest of an smap
     * run: its thread states travel there with its next batch, the peer
     * keeps them and runs the stage's batches strictly in the order sent,
     * and at the smap's end they come back (docs/DESIGN.md 7c).  So
     * start_to must take every request (no credit limit: the run's tokens
     * bound them; a non-zero return is a transport failure, which ends the
     * run with an error naming the peer), and requests to one peer must be
     * served in the order start_to was called. */
    int peers;
    int (*start_to)(void *ud, int peer, const void *req, size_t len,
                    void (*done)(void *token, int rc, void *reply, size_t reply_len), void *token);
    /* Placement of a serial stage whose turn is a peer: it goes from its
     * first batch, and the peer measures its work on its first batches
     * (CPU time, in each reply); 0, the model: it stays there when that
     * work is at least 4 x the transport's estimated cost for the batches
     * here (25 us a batch + 1 us an item, docs/DESIGN.md 7c), else its
     * states come back and it runs here for the rest of the smap; > 0: it
     * stays when its work is at least this many ns an item; < 0: it stays
     * whatever its work (tests). */
    long long serial_min_ns;
} stc_remote;

/* The answering side: one per serving process and program (not thread
 * safe: one request at a time). */
typedef struct stc_remote_server stc_remote_server;
stc_remote_server *stc_remote_server_new(const stc_program *prog); /* NULL: out of memory */
/* Answers one request: 0 with *reply (malloc'd) and *reply_len; STC_EINVAL
 * for a malformed request or one this program cannot have sent, STC_ENOMEM.
 * An item's runtime error is part of a successful reply. */
int stc_remote_server_handle(stc_remote_server *s, const void *req, size_t len, void **reply, size_t *reply_len);
void stc_remote_server_free(stc_remote_server *s);

/* What a server answered, for its host to report (stc run --mpi --stats,
 * --profile): a row per stage that sent it batches, in the order each
 * first came, and a row for the requests taking owned stages' states back
 * ("states back") and one for those refused ("refused"), when there were
 * any.  So the rows' batches and bytes add up to every request answered.
 * The strings live as long as the server. */
typedef struct stc_remote_stage_stats {
    const char *name;     /* the stage as --profile names it: "f (line 13)" */
    const char *kind;     /* "replicated", "serial", ...; "" for the two extra rows */
    const char *smap;     /* its smap's "FILE:LINE:COL"; "" for the two extra rows */
    int line;             /* its first step's line; 0 for the extra rows */
    bool serial;          /* a serial stage this server owned */
    long long batches;    /* requests answered */
    long long items;      /* items the stage ran */
    long long bytes_in;   /* the requests' bytes */
    long long bytes_out;  /* the replies' bytes (0 for a refused request) */
    double busy_ms;       /* time spent answering them */
} stc_remote_stage_stats;
size_t stc_remote_server_stage_count(const stc_remote_server *s);
stc_remote_stage_stats stc_remote_server_stage(const stc_remote_server *s, size_t i); /* zeros out of range */

/* Spans for a trace: after stc_remote_server_record(s, max) the server
 * keeps a span per request it answers, at most max of them (memory
 * bounded: 32 bytes each); later ones are only counted.  Times are
 * CLOCK_MONOTONIC ns of this process: the host relates them to other
 * processes' clocks.  max 0 stops recording (the spans kept stay). */
typedef struct stc_remote_span {
    size_t stage;                 /* its row (stc_remote_server_stage) */
    long long items;              /* items the stage ran */
    unsigned long long start_ns, end_ns;
} stc_remote_span;
void stc_remote_server_record(stc_remote_server *s, size_t max);
size_t stc_remote_server_span_count(const stc_remote_server *s);
stc_remote_span stc_remote_server_span(const stc_remote_server *s, size_t i); /* zeros out of range */
long long stc_remote_server_spans_dropped(const stc_remote_server *s); /* answered beyond max */

typedef struct stc_result stc_result;

/* Runs the program's main.  Returns 0 on success, STC_ERUNTIME when the
 * program failed or STC_ECANCELED when it was cancelled (the result then
 * describes the error), or another negative code.  *out is set whenever
 * the return is 0, STC_ERUNTIME or STC_ECANCELED; free it with
 * stc_result_free. opts may be NULL for the defaults. */
int stc_run(stc_program *prog, const stc_run_opts *opts, stc_result **out);

/* ---- Results ------------------------------------------------------------
 * What stc_run and stc_run_stream produce: main's value, every thread's
 * final state, the error of a failed run, the runtime's counters and, with
 * opts.profile, the profile. */

stc_value stc_result_value(const stc_result *r);  /* borrowed; INVALID after an error */
size_t stc_result_state_count(const stc_result *r);
const char *stc_result_state_name(const stc_result *r, size_t i);
stc_value stc_result_state(const stc_result *r, size_t i); /* borrowed */
/* The whole result as the `stc run --json` line (malloc'd, no newline);
 * NULL like stc_value_to_json (errno ENOMEM, or E2BIG beyond 1 GiB). */
char *stc_result_to_json(const stc_result *r);

/* The runtime error, if the run failed: NULL message when it did not. */
typedef struct stc_error_info {
    int code;             /* STC_ERUNTIME, STC_ENOMEM, ... */
    const char *message;  /* without location */
    const char *file;     /* source file, or NULL */
    int line, col;        /* 0 when unknown */
    const char *thread;   /* the thread being run, or NULL */
    long long item;       /* index of the innermost smap item, or -1 */
} stc_error_info;
stc_error_info stc_result_error(const stc_result *r);
/* "FILE:LINE:COL: error: message (in thread T, smap item K)"; malloc'd. */
char *stc_result_error_format(const stc_result *r);
void stc_result_free(stc_result *r);

/* What the parallel runtime did in a run (all zero for a reference run). */
typedef struct stc_run_stats {
    int workers;                 /* worker threads used */
    long long smaps_parallel;    /* smap calls run as pipelines */
    long long smaps_sequential;  /* smap calls left to the sequential evaluator
                                    (short lists, or a body that is one serial stage) */
    long long items;             /* list items that went through pipelines */
    long long peak_in_flight;    /* most items alive in a pipeline at once */
    long long max_in_flight;     /* the bound on that: batches in flight x queue capacity */
    long long task_groups;       /* tuples and let chains whose items ran as parallel tasks */
    long long smaps_looped;      /* smaps with few items whose items ran one by one on the
                                    calling thread so that the smaps inside them could run
                                    as pipelines (nested smaps; these count in neither
                                    smaps_parallel nor smaps_sequential) */
    long long remote_batches;    /* batches a remote executor ran (opts.remote) */
    long long remote_bytes_sent; /* their requests' bytes */
    long long remote_bytes_received; /* their replies' bytes */
    long long remote_declined;   /* batches sent but run here (transport failure, bad reply) */
    long long remote_serial;     /* of remote_batches: serial stages' batches run by their owner */
    long long remote_moves;      /* serial stages placed on a peer (their states went and came back) */
    long long smaps_fused;       /* with 2+ workers: pipelines (counted in smaps_parallel)
                                    that ran fused on the calling thread from start to end,
                                    their first batches' stage times predicting too little
                                    gain from the pipeline (or too few items to tell) */
    long long remote_shard_moves;   /* of remote_moves: keyed threads' shard stages */
    long long remote_shard_serial;  /* of remote_serial: their batches and shard maps' trips back */
    long long smaps_retreated;   /* with 2+ workers: times a pipeline went back to running its
                                    smap fused, finishing items more slowly than the fused
                                    trial had (values crossing between cores) */
} stc_run_stats;
stc_run_stats stc_result_stats(const stc_result *r);

/* The profile of a run made with opts.profile: one entry per pipeline
 * stage, pipelines in the order their smap first ran.  Times are summed
 * over every run of that smap. */
typedef struct stc_stage_profile {
    int pipeline;         /* 0, 1, ...: which smap */
    const char *smap;     /* where that smap is: "FILE:LINE:COL" */
    const char *name;     /* the threads it runs, else the functions it calls */
    const char *kind;     /* "serial", "serial, fused segment", "replicated, split", ... */
    int line;             /* source line of its first step */
    bool serial;
    long long items;      /* items it ran (a branch's stage: the items routed to it) */
    long long batches;    /* activations */
    double busy_ms;       /* worker time spent running it */
    double queued_ms;     /* serial stages: time batches waited for their turn */
} stc_stage_profile;
size_t stc_result_profile_count(const stc_result *r); /* 0 without a profile */
stc_stage_profile stc_result_profile_stage(const stc_result *r, size_t i);
/* The wall time of the run, and of pipeline p, in ms (0 without a profile). */
double stc_result_profile_wall_ms(const stc_result *r, int pipeline);
/* Predicted speedup on `workers` workers over 1 worker, from the measured
 * costs: each pipeline takes max(work / workers, its busiest serial stage)
 * plus its measured time outside its stages, the work at 2+ workers
 * including a cost per item handed between stages (docs/OBSERVE.md); or
 * its one-worker time when that bound gains less than 1.25x and its items
 * are neither few (< 64) nor coarse (>= 50 us each): the runtime then runs
 * it fused on one thread.  The time outside pipelines stays sequential.
 * 0 without a profile. */
double stc_result_predict_speedup(const stc_result *r, int workers);
/* The profile as the table `stc run --profile` prints (malloc'd). */
char *stc_result_profile_format(const stc_result *r);

/* After a stream program's run (also a failed one): whether main's value
 * was a list that went to the sink, and how many input items were read. */
bool stc_result_streamed(const stc_result *r);
long long stc_result_input_items(const stc_result *r);

/* ---- Streams ---------------------------------------------------------------
 * A program whose main takes a parameter, `fun main(xs) = ...`, is a stream
 * program: xs is its input, a list whose items a C source produces one at
 * a time.  When main is `smap(F, xs)` with xs used nowhere else, the run
 * streams: items are read as the pipeline has room for them and results
 * go to the sink in input order as they complete, so memory stays bounded
 * by the queue capacity and the in-flight bound, whatever the stream's
 * length.  Any other main first reads the whole input into the list.
 * Either way, when main's value is a list its items go to the sink in
 * order and stc_result_value() is unit; otherwise the sink is not called
 * and the value is main's.  The reference evaluator reads one item, runs
 * it through the whole body, delivers its result, then reads the next;
 * the parallel runtime reads ahead but reports the same results and the
 * same error: a failing source or sink stops the run like a failing
 * thread, and the error is that of the earliest item. */

/* Stores the next item in *item (the runtime takes the reference) and
 * returns 1, returns 0 at the end of the stream, or returns a negative
 * code (after stc_ctx_error() for a message) to fail the run.
 * STC_STREAM_AGAIN means "no item yet, the stream goes on" (merged
 * sources use it; a plain source may simply block). */
typedef int (*stc_source_fn)(void *ud, stc_value *item, stc_ctx *cx);
#define STC_STREAM_AGAIN 2
/* Receives result `index` (borrowed: retain it to keep it). Returns 0, or
 * a negative code (after stc_ctx_error()) to fail the run. */
typedef int (*stc_sink_fn)(void *ud, long long index, stc_value item, stc_ctx *cx);

typedef struct stc_stream {
    stc_source_fn source; /* NULL: an empty input */
    void *source_ud;
    stc_sink_fn sink;     /* NULL: list results are dropped */
    void *sink_ud;
} stc_stream;
/* The source and the sink are each called by one thread at a time, in
 * stream order (not always the same thread).  Items must have the type
 * main's parameter has in the program (e.g. str for `words(l)`). */

/* stc_run with main's input taken from io->source and its results sent
 * to io->sink.  A main without a parameter runs as with stc_run. */
int stc_run_stream(stc_program *prog, const stc_run_opts *opts, const stc_stream *io, stc_result **out);
/* Whether main takes an input stream (`fun main(xs)`). */
bool stc_program_takes_input(const stc_program *prog);

/* Signals: n sources merged into one event stream whose items are
 * (i, item) tuples, i the index of the source the item came from.  The
 * merge takes one item from each source in turn, skipping sources that
 * say STC_STREAM_AGAIN or have ended; when every open source says AGAIN it
 * calls wait(wait_ud) (NULL: sleeps 100 us) and tries again.  The merged
 * stream ends when every source has; a failing source fails it.  So the
 * order is deterministic for sources that never say AGAIN, and otherwise
 * the order of arrival; the run is deterministic for a given merged order.
 * Use stc_merge_source as the source with the merge as its ud. */
typedef struct stc_merge stc_merge;
stc_merge *stc_merge_new(size_t n, const stc_source_fn *sources, void *const *uds,
                         void (*wait)(void *wait_ud), void *wait_ud);
void stc_merge_free(stc_merge *m);
int stc_merge_source(void *merge, stc_value *item, stc_ctx *cx);

#ifdef __cplusplus
}
#endif
#endif /* STC_H */

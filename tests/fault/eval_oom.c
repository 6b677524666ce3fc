/* eval_oom.c - allocation-failure injection for the reference evaluator.
 *
 * For each program, runs eval_run once per allocation it makes, failing
 * that allocation (malloc/calloc/realloc wrapped with ld --wrap), and checks
 * that every run either succeeds with the normal result or reports an error
 * without crashing or leaking (run it under ASan/LSan). Not part of the
 * unit tests (it needs linker flags); build and run from the repository:
 *
 *   gcc -std=c11 -g -fsanitize=address,undefined -D_POSIX_C_SOURCE=200809L \
 *       -Iinclude -Isrc src/\*\/\*.c tests/fault/eval_oom.c -o /tmp/eval_oom -lm -lpthread \
 *       -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc && /tmp/eval_oom
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/env.h"
#include "eval/eval.h"
#include "ir/resolve.h"
#include "ir/types.h"
#include "lang/lang.h"
#include "util/diag.h"
#include "value/result.h"
#include "value/value.h"

void *__real_malloc(size_t); void *__real_calloc(size_t, size_t); void *__real_realloc(void *, size_t);
static long armed = -1, count = 0; static int failed = 0;
static int should_fail(void) { if (armed < 0) return 0; if (count++ == armed) { failed = 1; return 1; } return 0; }
void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return should_fail() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return should_fail() ? NULL : __real_realloc(p, n); }

static int cfn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    int64_t *s = state;
    if (in->as.i < 0) return stc_ctx_error(cx, "neg %lld", (long long)in->as.i);
    *s += in->as.i;
    stc_value items[2] = {stc_value_int(*s), stc_value_new_str("ab", 2)};
    *out = stc_value_new_tuple(2, items);
    return out->tag == STC_T_INVALID ? STC_ENOMEM : 0;
}
static int cinit(void *state, const stc_value *init, void *user) { (void)user; *(int64_t *)state = init ? init->as.i : 0; return 0; }
static int cval(const void *state, stc_value *out, void *user) { (void)user; stc_value items[1] = {stc_value_int(*(const int64_t *)state)}; *out = stc_value_new_list(1, items); return out->tag == STC_T_INVALID ? STC_ENOMEM : 0; }
static void cfree(void *state, void *user) { (void)state; (void)user; }

static const char *progs[] = {
  "fun foo(x, s) = (x + 2, s + 2)\nfun bar(x, s) = (x * 3, s + 3)\nthread f = foo init 0\nthread b1 = bar init 0\nthread b2 = bar init 0\n"
  "main = smap(fn x => let y = f(x) in case y of 4 => b1(y) | 8 => b2(y), [2, 6])\n",
  "fun mk(a) = fn x => fn y => (a, [x, y], \"s\")\nfun acc(x, s) = ((s, x), [x])\nthread t = acc init [0]\n"
  "main = let f = mk(1) in let g = f(2) in (g(3), smap(fn p => t(p), [1, 2, 3]), inl (1, 2), range(0, 10))\n",
  "thread c = cthr init 5\nmain = (smap(fn x => c(x), [1, 2]), c(3))\n",
  "thread c = cthr init 5\nmain = (smap(fn x => c(x), [1, -2]), c(3))\n",
  "fun f(x) = case x of (a, b) => if a > 2 then nth([a], b) else 0\nmain = smap(f, [(1, 0), (3, 0), (4, 1)])\n",
  "fun f(v) = case v of inl x => x | inr y => 0\nmain = (f(inl 1), case inl [(1, \"x\")] of inr q => q)\n",
  "fun r(n) = if n == 0 then [n] else smap(fn x => x + 1, r(n - 1))\nmain = r(50)\n",
  "fun loop(n) = 1 + loop(n + 1)\nmain = loop(0)\n",
  "fun step(a, b, s) = (a - b + s, s + 1)\nthread t = step init 10\nmain = (t(1, 2), smap(t, [(5, 1), (7, 10)]), let p = (0, 0) in t(p), smap(fn (a, b) => a * b, [(1, 2)]))\n",
};

int main(void)
{
    int bad = 0;
    stc_env *env = stc_env_new();
    stc_thread_def def = {.name = "cthr", .fn = cfn, .type = "int -> (int, str)", .state_type = "int",
        .state_size = 8, .state_init = cinit, .state_free = cfree, .state_to_value = cval};
    if (stc_env_add_thread(env, &def)) return 1;
    for (size_t k = 0; k < sizeof progs / sizeof *progs; k++) {
        const char *src = progs[k];
        stc_diags *d = diags_new("f.stc", src, strlen(src));
        ir_program *p = lang_parse(src, strlen(src), "f.stc", env, d);
        if (diags_any(d) || ir_resolve(p, d) || types_check(p, d)) { char *m = stc_diags_format(d); printf("prog %zu: %s\n", k, m); return 1; }
        stc_diags_free(d);
        const char *names[16];
        for (int i = 0; i < p->nthreads; i++) names[i] = p->threads[i]->name;
        int base_rc = 0; char *base = NULL;
        long n;
        int nomem = 0, other = 0;
        for (n = -1;; n++) {
            stc_result *res = result_new((size_t)p->nthreads, names);
            count = 0; failed = 0; armed = n;
            int rc = eval_run(p, res);
            armed = -1;
            char *txt = rc == 0 ? stc_result_to_json(res) : stc_result_error_format(res);
            if (n == -1) { base_rc = rc; base = txt; }
            else {
                if (!failed) { free(txt); stc_result_free(res); break; }
                /* a failed allocation either did not matter or is an error */
                if (rc == 0 ? !txt || !base || strcmp(txt, base) != 0 : !res->err.message) {
                    printf("prog %zu, allocation %ld: rc %d %s\n", k, n, rc, txt ? txt : "?");
                    bad++;
                }
                if (rc == STC_ENOMEM) nomem++; else other++;
                free(txt);
            }
            stc_result_free(res);
        }
        printf("prog %zu: rc %d %s; %ld allocations failed in turn: %d ENOMEM, %d other errors\n", k,
               base_rc, base ? base : "?", n, nomem, other);
        free(base);
        ir_program_free(p);
    }
    stc_env_free(env);
    return bad ? 1 : 0;
}

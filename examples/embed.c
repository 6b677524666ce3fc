/* embed.c - a C host embedding stc.
 *
 * Registers a C state thread `counter` (a running total: each call adds its
 * input to the total and returns the new total), compiles a program that
 * binds it twice, runs it and prints the result and the final states.
 *
 *   cc embed.c $(pkg-config --cflags --libs stc) -o embed && ./embed
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <stc.h>

/* The state of one `thread t = counter ...` instance. The runtime allocates
 * state_size zeroed bytes per instance and hands them to every callback. */
struct counter {
    int64_t total;
};

/* init is the value of `init e` (an int, as state_type says), or NULL when
 * the declaration has no init: then the total starts at 0. */
static int counter_init(void *state, const stc_value *init, void *user)
{
    (void)user;
    struct counter *c = state;
    c->total = init ? init->as.i : 0;
    return 0;
}

/* One call: (input, state) -> (output, new state).  STC_WRITES tells the
 * runtime the state is read and written, so calls run one at a time in
 * list order. */
static int counter_step(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    struct counter *c = state;
    if (in->tag != STC_T_INT) return stc_ctx_error(cx, "counter: expected an int");
    /* Wrap around like STCLang's own + (signed overflow is undefined in C). */
    c->total = (int64_t)((uint64_t)c->total + (uint64_t)in->as.i);
    *out = stc_value_int(c->total);
    return 0;
}

static int counter_to_value(const void *state, stc_value *out, void *user)
{
    (void)user;
    *out = stc_value_int(((const struct counter *)state)->total);
    return 0;
}

static const char program[] =
    "-- total and seen are two instances of the C thread counter\n"
    "thread total = counter init 100\n"
    "thread seen = counter              -- no init: counter_init gets NULL\n"
    "fun double(x) = x * 2\n"
    "main = smap(fn x => (total(double(x)), seen(1)), [1, 2, 3])\n";

int main(void)
{
    int status = 1;
    stc_env *env = stc_env_new();
    stc_program *prog = NULL;
    stc_diags *diags = NULL;
    stc_result *res = NULL;
    char *text = NULL;
    if (!env) goto done;

    int rc = stc_env_add_thread(env, &(stc_thread_def){
        .name = "counter",
        .fn = counter_step,
        .type = "int -> int",
        .state_type = "int",
        .state_size = sizeof(struct counter),
        .state_init = counter_init,
        .state_to_value = counter_to_value,
        .access = STC_WRITES,
    });
    if (rc != 0) {
        fprintf(stderr, "embed: cannot register counter: %s\n", stc_strerror(rc));
        goto done;
    }

    rc = stc_compile(env, program, sizeof program - 1, "embedded.stc", &prog, &diags);
    if (rc != 0) {
        text = stc_diags_format(diags);
        fprintf(stderr, "%s", text ? text : stc_strerror(rc));
        goto done;
    }

    rc = stc_run(prog, &(stc_run_opts){.workers = 2}, &res);
    if (rc != 0) {
        text = res ? stc_result_error_format(res) : NULL;
        fprintf(stderr, "%s\n", text ? text : stc_strerror(rc));
        goto done;
    }

    text = stc_value_to_text(stc_result_value(res));
    if (!text) goto done;
    printf("result: %s\n", text);
    for (size_t i = 0; i < stc_result_state_count(res); i++) {
        free(text);
        text = stc_value_to_text(stc_result_state(res, i));
        if (!text) goto done;
        printf("%s = %s\n", stc_result_state_name(res, i), text);
    }
    free(text);
    text = stc_result_to_json(res);
    if (!text) goto done;
    printf("json: %s\n", text);
    status = 0;

done:
    free(text);
    stc_result_free(res);
    stc_diags_free(diags);
    stc_program_free(prog);
    stc_env_free(env);
    return status;
}

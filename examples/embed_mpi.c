/* embed_mpi.c - a C host running an stc program on every rank of its MPI
 * job (include/stc_mpi.h, docs/CLUSTER.md "Embedding").
 *
 * Every rank registers the C thread `counter` (a running total), compiles
 * the same program, and calls stc_mpi_run with the host's communicator:
 * rank 0 runs the program and prints the result; the other ranks run the
 * replicated stage `score` on the batches rank 0 sends them.  A stage that
 * calls a C thread runs on rank 0 only: counter_step fails the run if it
 * is ever called elsewhere.
 *
 *   mpicc embed_mpi.c $(pkg-config --cflags --libs stc_mpi) -o embed_mpi
 *   mpirun -np 3 ./embed_mpi [--workers N] [--stats] [--fail]
 *
 * --stats: rank 0 says on standard error how many batches went to other
 * ranks, and every rank what stc_mpi_run returned there.  --fail: a program whose replicated stage divides by zero at item
 * 12345, for the same error at every rank count.  Exit code: 0, or 70
 * when the run failed (on every rank: they all get rank 0's code). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <stc_mpi.h>

struct counter {
    int64_t total;
};

static int counter_init(void *state, const stc_value *init, void *user)
{
    (void)user;
    ((struct counter *)state)->total = init ? init->as.i : 0;
    return 0;
}

/* user: this process's rank in the host's communicator. */
static int counter_step(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    struct counter *c = state;
    int rank = *(const int *)stc_ctx_user(cx);
    if (rank != 0) return stc_ctx_error(cx, "counter: called on rank %d (C threads run on rank 0)", rank);
    if (in->tag != STC_T_INT) return stc_ctx_error(cx, "counter: expected an int");
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

/* score is plain STCLang (a replicated stage: other ranks may run it);
 * total(s) calls the C thread (a serial stage on rank 0). */
static const char program[] =
    "thread total = counter init 0\n"
    "fun score(x) = round(sin_iter(20, float(x) / 1000.0) * 100.0)\n"
    "main = let ys = smap(fn x => let s = score(x) in total(s), range(0, 20000)) in\n"
    "       (len(ys), nth(ys, 0), nth(ys, 9999), nth(ys, 19999))\n";

static const char failing[] =
    "thread total = counter init 0\n"
    "fun score(x) = 1000 / (x - 12345)\n"
    "main = let ys = smap(fn x => let s = score(x) in total(s), range(0, 20000)) in len(ys)\n";

/* Prints rank 0's result: the value and the final states. */
static int print_result(const stc_result *res)
{
    char *text = stc_value_to_text(stc_result_value(res));
    if (!text) return -1;
    printf("result: %s\n", text);
    for (size_t i = 0; i < stc_result_state_count(res); i++) {
        free(text);
        if (!(text = stc_value_to_text(stc_result_state(res, i)))) return -1;
        printf("%s = %s\n", stc_result_state_name(res, i), text);
    }
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    int workers = 2, provided = 0, rank = 0, status = 1;
    bool stats = false, fail = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--workers") && i + 1 < argc) workers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stats")) stats = true;
        else if (!strcmp(argv[i], "--fail")) fail = true;
    }
    /* The host owns MPI; libstc_mpi calls it from rank 0's workers one at
     * a time, so SERIALIZED would do. */
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 1;
    /* Any communicator will do: here the world's, split (into one). */
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &comm);
    MPI_Comm_rank(comm, &rank);

    stc_env *env = stc_env_new();
    stc_program *prog = NULL;
    stc_diags *diags = NULL;
    stc_result *res = NULL;
    int rc = env ? stc_env_add_thread(env, &(stc_thread_def){
                       .name = "counter",
                       .fn = counter_step,
                       .type = "int -> int",
                       .state_type = "int",
                       .state_size = sizeof(struct counter),
                       .state_init = counter_init,
                       .state_to_value = counter_to_value,
                       .access = STC_WRITES,
                       .user = &rank,
                   })
                 : STC_ENOMEM;
    const char *text = fail ? failing : program;
    if (rc == 0) rc = stc_compile(env, text, strlen(text), "embedded.stc", &prog, &diags);
    if (rc != 0) { /* every rank compiles the same text: each would say the same */
        if (rank == 0) fprintf(stderr, "embed_mpi: %s\n", stc_strerror(rc));
        goto done;
    }

    /* Every rank: rank 0 runs, the others serve; all get rank 0's code. */
    rc = stc_mpi_run(prog, &(stc_run_opts){.workers = workers}, comm, &res);
    if (stats) fprintf(stderr, "embed_mpi: rank %d: stc_mpi_run returned %d\n", rank, rc);
    status = 0;
    if (rank == 0 && rc == 0) {
        status = print_result(res) == 0 ? 0 : 1;
        if (stats) fprintf(stderr, "embed_mpi: remote batches %lld\n", stc_result_stats(res).remote_batches);
    } else if (rank == 0) {
        char *err = res ? stc_result_error_format(res) : NULL;
        fprintf(stderr, "%s\n", err ? err : stc_strerror(rc));
        free(err);
    }
    if (rc != 0) status = 70;

done:
    stc_result_free(res);
    stc_diags_free(diags);
    stc_program_free(prog);
    stc_env_free(env);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return status;
}

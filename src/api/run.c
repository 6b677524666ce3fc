/* run.c - stc_run: evaluate a program's main.
 * Until the parallel runtime lands, every run uses the reference
 * evaluator; opts are validated so hosts can already pass them. */
#include <stdlib.h>

#include "api/program.h"
#include "api/result.h"
#include "eval/eval.h"

int stc_run(stc_program *prog, const stc_run_opts *opts, stc_result **out)
{
    if (!out) return STC_EINVAL;
    *out = NULL;
    if (!prog) return STC_EINVAL;
    stc_run_opts o = opts ? *opts : (stc_run_opts){0};
    if (o.workers < 0 || o.queue_capacity < 0) return STC_EINVAL;
    const ir_program *p = prog->ir;
    const char **names = NULL;
    if (p->nthreads) {
        names = malloc((size_t)p->nthreads * sizeof *names);
        if (!names) return STC_ENOMEM;
        for (int i = 0; i < p->nthreads; i++) names[i] = p->threads[i]->name;
    }
    stc_result *res = result_new((size_t)p->nthreads, names);
    free(names);
    if (!res) return STC_ENOMEM;
    int rc = eval_run(p, res);
    if (rc != 0 && rc != STC_ERUNTIME && !res->err.message) {
        stc_result_free(res);
        return rc;
    }
    *out = res;
    return rc == 0 ? 0 : STC_ERUNTIME;
}

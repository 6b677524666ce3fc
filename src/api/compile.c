/* compile.c - stc_compile: text -> checked program; the program's accessors. */
#include <stdlib.h>

#include "api/program.h"
#include "eval/eval.h"
#include "flow/graph.h"
#include "ir/resolve.h"
#include "ir/types.h"
#include "lang/lang.h"

int stc__program_finish(ir_program *p, stc_diags *d, stc_program **out, stc_diags **diags)
{
    /* Later passes assume a well-formed IR, so each runs only when the
     * earlier ones were clean. */
    if (!diags_any(d)) stc__ir_resolve(p, d);
    if (!diags_any(d)) stc__types_check(p, d);
    if (!diags_any(d)) stc__eval_prepare(p);
    int rc = 0;
    if (diags_any(d)) {
        rc = d->count == 0 ? STC_ENOMEM : STC_ECOMPILE;
    } else {
        stc_program *prog = calloc(1, sizeof *prog);
        if (!prog) rc = STC_ENOMEM;
        else {
            prog->ir = p;
            *out = prog;
            p = NULL;
        }
    }
    stc__ir_program_free(p);
    if (diags && rc == STC_ECOMPILE) *diags = d;
    else stc_diags_free(d);
    return rc;
}

int stc_compile(stc_env *env, const char *src, size_t len, const char *filename,
                stc_program **out, stc_diags **diags)
{
    if (diags) *diags = NULL;
    if (!out || (!src && len)) return STC_EINVAL;
    *out = NULL;
    if (!src) src = "";
    if (!filename) filename = "<input>";
    stc_diags *d = stc__diags_new(filename, src, len);
    if (!d) return STC_ENOMEM;
    ir_program *p = stc__lang_parse(src, len, filename, env, d);
    if (!p) {
        stc_diags_free(d);
        return STC_ENOMEM;
    }
    return stc__program_finish(p, d, out, diags);
}

void stc_program_free(stc_program *prog)
{
    if (!prog) return;
    stc__ir_program_free(prog->ir);
    free(prog);
}

size_t stc_program_thread_count(const stc_program *prog)
{
    return prog ? (size_t)prog->ir->nthreads : 0;
}

const char *stc_program_thread_name(const stc_program *prog, size_t i)
{
    return prog && i < (size_t)prog->ir->nthreads ? prog->ir->threads[i]->name : NULL;
}

char *stc_program_graph(const stc_program *prog, int view)
{
    return prog ? stc__flow_graph(prog->ir, view, 0, 0) : NULL;
}

char *stc_program_graph_ranks(const stc_program *prog, int ranks)
{
    return prog && ranks >= 1 ? stc__flow_graph(prog->ir, STC_GRAPH_STAGES, ranks, 0) : NULL;
}

char *stc_program_graph_run(const stc_program *prog, int ranks, int workers)
{
    return prog && ranks >= 1 && workers >= 1 ? stc__flow_graph(prog->ir, STC_GRAPH_STAGES, ranks, workers) : NULL;
}

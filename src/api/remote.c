/* remote.c - stc_remote_server (include/stc.h): the answering side of a
 * remote executor, over the flow layer's (src/flow/remote.c). */
#include <stdlib.h>

#include "api/program.h"
#include "flow/flow.h"

struct stc_remote_server {
    flow_remote_server *s;
};

stc_remote_server *stc_remote_server_new(const stc_program *prog)
{
    if (!prog || !prog->ir) return NULL;
    stc_remote_server *r = malloc(sizeof *r);
    if (!r) return NULL;
    if (!(r->s = stc__flow_remote_server_new(prog->ir))) {
        free(r);
        return NULL;
    }
    return r;
}

int stc_remote_server_handle(stc_remote_server *s, const void *req, size_t len, void **reply, size_t *reply_len)
{
    if (!s || !reply || !reply_len || (!req && len)) return STC_EINVAL;
    return stc__flow_remote_serve(s->s, req ? req : "", len, reply, reply_len);
}

void stc_remote_server_free(stc_remote_server *s)
{
    if (!s) return;
    stc__flow_remote_server_free(s->s);
    free(s);
}

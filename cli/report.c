/* report.c - messages for failures that several parts of `stc` share. */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int cli_oom(void)
{
    fprintf(stderr, "stc: out of memory\n");
    return CLI_EXIT_OSERR;
}

int cli_print_failed(void)
{
    if (errno != E2BIG) return cli_oom();
    fprintf(stderr, "stc: the result is too large to print (over 1 GiB of text)\n");
    return CLI_EXIT_SOFTWARE;
}

int cli_report_failure(int rc, const stc_result *res)
{
    stc_error_info info = res ? stc_result_error(res) : (stc_error_info){0};
    if (rc == STC_ECANCELED || info.code == STC_ECANCELED) {
        fprintf(stderr, "stc: interrupted\n");
        return CLI_EXIT_INTERRUPTED;
    }
    if (rc == STC_ENOMEM || info.code == STC_ENOMEM) {
        char *text = res && info.message ? stc_result_error_format(res) : NULL;
        if (!text) return cli_oom();
        fprintf(stderr, "%s\n", text);
        free(text);
        return CLI_EXIT_OSERR;
    }
    if (res && info.message) {
        char *text = stc_result_error_format(res);
        if (!text) return cli_oom();
        fprintf(stderr, "%s\n", text);
        free(text);
        return CLI_EXIT_SOFTWARE;
    }
    fprintf(stderr, "stc: run failed: %s\n", stc_strerror(rc));
    return rc == STC_ERUNTIME || rc == STC_ELIMIT ? CLI_EXIT_SOFTWARE : CLI_EXIT_OSERR;
}

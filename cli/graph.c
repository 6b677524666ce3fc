/* graph.c - `stc graph`: DOT on standard output, or rendered to SVG by
 * Graphviz's dot, which reads the graph on its standard input. */
#include "graph.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output.h"
#include "report.h"

/* dot's output option for a file name: "-oNAME" in one argument, so dot
 * cannot take NAME for an option of its own (`-V`), with "./" before a
 * name that starts with '-'.  NULL for "-" (dot writes to standard output,
 * which is ours) or when out of memory (*oom). */
static char *cli_graph_out_arg(const char *svg, bool *oom)
{
    *oom = false;
    if (!strcmp(svg, "-")) return NULL;
    const char *dir = svg[0] == '-' ? "./" : "";
    size_t n = strlen(svg) + strlen(dir) + 3;
    char *arg = malloc(n);
    if (!arg) *oom = true;
    else snprintf(arg, n, "-o%s%s", dir, svg);
    return arg;
}

/* Runs dot with the graph on its standard input. */
static int cli_graph_svg(const char *dot, const char *svg)
{
    bool oom;
    char *out_arg = cli_graph_out_arg(svg, &oom);
    if (oom) return cli_oom();
    int in[2];
    if (pipe(in) != 0) {
        free(out_arg);
        fprintf(stderr, "stc: graph: %s\n", strerror(errno));
        return CLI_EXIT_OSERR;
    }
    /* The name goes through argv, so no shell ever sees it. */
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        close(in[0]);
        close(in[1]);
        execlp("dot", "dot", "-Tsvg", out_arg, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    free(out_arg);
    if (pid < 0) {
        fprintf(stderr, "stc: graph: %s\n", strerror(errno));
        close(in[1]);
        return CLI_EXIT_OSERR;
    }
    void (*old)(int) = signal(SIGPIPE, SIG_IGN); /* dot missing: write fails, no signal */
    size_t len = strlen(dot), off = 0;
    while (off < len) {
        ssize_t w = write(in[1], dot + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    close(in[1]);
    signal(SIGPIPE, old);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        fprintf(stderr, "stc: graph: the 'dot' program is not installed (Debian package graphviz: "
                        "apt-get install graphviz); without --svg, stc graph prints the DOT text\n");
        return CLI_EXIT_UNAVAILABLE;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "stc: graph: dot failed to write '%s'\n", svg);
        return CLI_EXIT_IOERR;
    }
    return CLI_EXIT_OK;
}

int cli_graph(stc_program *prog, const cli_args *a)
{
    char *dot = a->workers && !a->threads ? stc_program_graph_run(prog, a->ranks ? a->ranks : 1, a->workers)
                : a->ranks && !a->threads ? stc_program_graph_ranks(prog, a->ranks)
                                          : stc_program_graph(prog, a->threads ? STC_GRAPH_THREADS : STC_GRAPH_STAGES);
    if (!dot) return cli_oom();
    int code = a->svg ? cli_graph_svg(dot, a->svg) : cli_output_text(dot);
    free(dot);
    return code;
}

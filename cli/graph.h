/* graph.h - `stc graph`: the dataflow graph as DOT, or as SVG by dot. */
#ifndef STC_CLI_GRAPH_H
#define STC_CLI_GRAPH_H

#include "args.h"
#include "stc.h"

/* Prints the graph (a->threads: the thread graph) on standard output, or
 * renders it into a->svg ("-": standard output).  Returns the exit code. */
int cli_graph(stc_program *prog, const cli_args *a);

#endif

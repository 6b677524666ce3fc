/* graph.h - the dataflow graph the flow compiler plans for a program, as
 * Graphviz DOT text (stc_program_graph in stc.h wraps it). */
#ifndef STC_FLOW_GRAPH_H
#define STC_FLOW_GRAPH_H

#include "ir/ir.h"

/* view is STC_GRAPH_STAGES or STC_GRAPH_THREADS (stc.h); ranks > 1 (the
 * stages view): each stage also says which ranks of `stc run --mpi` at
 * that many ranks may run it (stc_program_graph_ranks).  Malloc'd text;
 * NULL when out of memory or view is unknown. */
char *stc__flow_graph(const ir_program *p, int view, int ranks);

#endif

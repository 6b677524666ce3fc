/* graph.h - the dataflow graph the flow compiler plans for a program, as
 * Graphviz DOT text (stc_program_graph in stc.h wraps it). */
#ifndef STC_FLOW_GRAPH_H
#define STC_FLOW_GRAPH_H

#include "ir/ir.h"

/* view is STC_GRAPH_STAGES or STC_GRAPH_THREADS (stc.h); ranks > 1 (the
 * stages view): each stage also says which ranks of `stc run --mpi` at
 * that many ranks may run it (stc_program_graph_ranks).  Malloc'd text;
 * workers > 0: a keyed thread's shards as a run at that many workers has
 * them (stc__flow_shards_for), each drawn; 0: two drawn, as 1/S and S/S.
 * NULL when out of memory, view is unknown or workers < 0. */
char *stc__flow_graph(const ir_program *p, int view, int ranks, int workers);

#endif

/* trace.h - a Chrome trace-event file written while a run goes on.
 *
 * Each worker records slices (a stage activation, a parked interval) into
 * its own fixed buffer, without locks; a full buffer is written out to the
 * file under the writer's mutex, so memory stays bounded however long the
 * run.  The file loads in Perfetto and chrome://tracing: one track per
 * worker, slices named after the stage. */
#ifndef STC_TRACE_H
#define STC_TRACE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct trace_writer trace_writer;

/* Opens path for writing; NULL with errno set when it cannot. */
trace_writer *stc__trace_open(const char *path, int workers, const char *process_name);
/* Records a slice on worker's track.  name and cat must stay valid until
 * stc__trace_close (the runtime keeps its stage names for the whole run).
 * items/batch < 0 are left out. */
void stc__trace_slice(trace_writer *tw, int worker, const char *name, const char *cat, uint64_t t0_ns,
                 uint64_t t1_ns, long long items, long long batch);
/* Writes what is left and the track names, closes the file and frees tw.
 * Returns 0, or -1 if any write failed. NULL is a no-op returning 0. */
int stc__trace_close(trace_writer *tw);

#endif

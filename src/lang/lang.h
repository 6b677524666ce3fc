/* lang.h - the STCLang front end: source text -> IR (before stc__ir_resolve). */
#ifndef STC_LANG_H
#define STC_LANG_H

#include <stddef.h>

#include "ir/ir.h"
#include "util/diag.h"

/* Parses a whole program. Returns the program (possibly incomplete when d
 * holds errors; the caller frees it) or NULL when out of memory. Never
 * crashes, loops or overflows the stack on any bytes. */
ir_program *stc__lang_parse(const char *src, size_t len, const char *file, const stc_env *env,
                       stc_diags *d);

/* Parses a type in STCLang syntax (as in annotations and stc_thread_def.type)
 * into p's arena. NULL on a syntax error (reported to d at line 1) or OOM. */
ir_type *stc__lang_parse_type(ir_program *p, const char *text, stc_diags *d);

#endif

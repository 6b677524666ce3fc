/* errors.c - error texts (from the table in stc.h) and the version string. */
#include "stc.h"

const char *stc_version(void) { return STC_VERSION_STRING; }

const char *stc_strerror(int code)
{
    switch (code) {
#define ERRORS_CASE(name, value, text) case name: return text;
        STC_ERROR_MAP(ERRORS_CASE)
#undef ERRORS_CASE
    default: return "unknown error";
    }
}

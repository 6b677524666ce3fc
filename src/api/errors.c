/* errors.c - error codes and the version string. */
#include "stc.h"

const char *stc_version(void) { return STC_VERSION_STRING; }

const char *stc_strerror(int code)
{
    switch (code) {
    case STC_OK: return "success";
    case STC_ENOMEM: return "out of memory";
    case STC_EINVAL: return "invalid argument";
    case STC_ECOMPILE: return "the program does not compile";
    case STC_ERUNTIME: return "runtime error";
    case STC_EIO: return "input/output error";
    case STC_ETYPE: return "value has the wrong type";
    case STC_ERANGE: return "out of range";
    case STC_EEXIST: return "name already defined";
    case STC_ENOENT: return "name not defined";
    case STC_ECANCELED: return "run cancelled";
    case STC_ELIMIT: return "limit exceeded";
    default: return "unknown error";
    }
}

/* args.c - parsing the `stc` command line.
 *
 *   stc run [--json] [--workers N] [--reference] [--verify] [--stats]
 *           [--profile] [--trace OUT.json] [--queue-capacity N]
 *           [--input IN]... [--quiet] [--no-states] [--mpi] FILE
 *   stc graph [--threads | --ranks K] [--workers N] [--svg OUT.svg] FILE
 *   stc check FILE
 *   stc help | --help | -h
 *   stc --version | version
 *
 * Options and FILE may come in any order after the command; `--` ends the
 * options (so a file may start with '-'); `-` alone is standard input
 * (as FILE: the program; then a stream program's lines need --input).
 * Both `--workers N` and `--workers=N` are accepted. */
#include "args.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int args_fail(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int args_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int cli_parse_int(const char *s, long min, long max, int *out)
{
    if (!s || !*s) return -1;
    long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
        if (v > max) return -1; /* also stops any overflow: max fits an int */
    }
    if (v < min) return -1;
    *out = (int)v;
    return 0;
}

/* The value of option `name` at argv[*i]: either after '=' in the same
 * argument or the next argument (then *i advances).  NULL if missing. */
static const char *args_value(int argc, char **argv, int *i, const char *name)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (arg[n] == '=') return arg + n + 1;
    if (*i + 1 >= argc || !argv[*i + 1]) return NULL;
    return argv[++*i];
}

/* Does argument `arg` name option `name` (alone or as name=value)? */
static int args_is(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

static int args_number(const char *opt, const char *val, long min, long max, int *out, char *err,
                       size_t errlen)
{
    if (!val) return args_fail(err, errlen, "option '%s' needs a value", opt);
    if (cli_parse_int(val, min, max, out) != 0)
        return args_fail(err, errlen, "invalid value '%s' for %s (expected a whole number from %ld to %ld)",
                         val, opt, min, max);
    return 0;
}

/* Options that take no value must not be given one (`--json=1`). */
static int args_flag(const char *arg, const char *name, bool *flag, char *err, size_t errlen)
{
    if (arg[strlen(name)] == '=')
        return args_fail(err, errlen, "option '%s' takes no value", name);
    *flag = true;
    return 0;
}

int cli_parse_args(int argc, char **argv, const char *env_queue_capacity, cli_args *out,
                   char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen) err[0] = '\0';
    if (argc < 2 || !argv || !argv[1]) return args_fail(err, errlen, "no command given");

    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        out->cmd = CLI_CMD_HELP; /* `stc help anything` still just prints the help */
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        if (argc > 2) return args_fail(err, errlen, "unexpected argument '%s'", argv[2]);
        out->cmd = CLI_CMD_VERSION;
        return 0;
    }
    if (!strcmp(cmd, "run")) out->cmd = CLI_CMD_RUN;
    else if (!strcmp(cmd, "check")) out->cmd = CLI_CMD_CHECK;
    else if (!strcmp(cmd, "graph")) out->cmd = CLI_CMD_GRAPH;
    else if (cmd[0] == '-') return args_fail(err, errlen, "unknown option '%s'", cmd);
    else return args_fail(err, errlen, "unknown command '%s'", cmd);

    bool run = out->cmd == CLI_CMD_RUN, graph = out->cmd == CLI_CMD_GRAPH, only_files = false, have_qc = false;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (!arg) break;
        if (only_files || arg[0] != '-' || !strcmp(arg, "-")) {
            if (out->file) return args_fail(err, errlen, "unexpected extra argument '%s'", arg);
            out->file = arg;
            continue;
        }
        if (!strcmp(arg, "--")) { only_files = true; continue; }
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            out->cmd = CLI_CMD_HELP;
            return 0;
        }
        int rc = 0;
        if (run && args_is(arg, "--json")) {
            rc = args_flag(arg, "--json", &out->json, err, errlen);
        } else if (run && args_is(arg, "--reference")) {
            rc = args_flag(arg, "--reference", &out->reference, err, errlen);
        } else if (run && args_is(arg, "--profile")) {
            rc = args_flag(arg, "--profile", &out->profile, err, errlen);
        } else if (run && args_is(arg, "--trace")) {
            if (!(out->trace = args_value(argc, argv, &i, "--trace")) || !*out->trace)
                return args_fail(err, errlen, "option '--trace' needs a file name");
        } else if (graph && args_is(arg, "--ranks")) {
            rc = args_number("--ranks", args_value(argc, argv, &i, "--ranks"), 1, 1 << 20, &out->ranks, err, errlen);
        } else if (graph && args_is(arg, "--threads")) {
            rc = args_flag(arg, "--threads", &out->threads, err, errlen);
        } else if (graph && args_is(arg, "--svg")) {
            if (!(out->svg = args_value(argc, argv, &i, "--svg")) || !*out->svg)
                return args_fail(err, errlen, "option '--svg' needs a file name");
        } else if (run && args_is(arg, "--input")) {
            const char *v = args_value(argc, argv, &i, "--input");
            if (!v || !*v) return args_fail(err, errlen, "option '--input' needs a file name (- for standard input)");
            if (out->ninputs == CLI_MAX_INPUTS)
                return args_fail(err, errlen, "at most %d '--input' options", CLI_MAX_INPUTS);
            for (int k = 0; k < out->ninputs; k++)
                if (!strcmp(v, "-") && !strcmp(out->inputs[k], "-"))
                    return args_fail(err, errlen, "standard input can be read only once ('--input -' twice)");
            out->inputs[out->ninputs++] = v;
        } else if (run && args_is(arg, "--no-states")) {
            rc = args_flag(arg, "--no-states", &out->no_states, err, errlen);
        } else if (run && args_is(arg, "--quiet")) {
            rc = args_flag(arg, "--quiet", &out->quiet, err, errlen);
        } else if (run && args_is(arg, "--mpi")) {
            rc = args_flag(arg, "--mpi", &out->mpi, err, errlen);
        } else if (run && args_is(arg, "--stats")) {
            rc = args_flag(arg, "--stats", &out->stats, err, errlen);
        } else if (run && args_is(arg, "--verify")) {
            rc = args_flag(arg, "--verify", &out->verify, err, errlen);
        } else if ((run || graph) && args_is(arg, "--workers")) {
            rc = args_number("--workers", args_value(argc, argv, &i, "--workers"), 1,
                             CLI_MAX_WORKERS, &out->workers, err, errlen);
        } else if (run && args_is(arg, "--queue-capacity")) {
            rc = args_number("--queue-capacity", args_value(argc, argv, &i, "--queue-capacity"), 1,
                             CLI_MAX_QUEUE_CAPACITY, &out->queue_capacity, err, errlen);
            have_qc = true;
        } else {
            return args_fail(err, errlen, "unknown option '%s' for '%s'", arg, cmd);
        }
        if (rc) return rc;
    }
    if (!out->file) return args_fail(err, errlen, "'%s' needs a FILE (use - for standard input)", cmd);
    for (int k = 0; k < out->ninputs; k++)
        if (!strcmp(out->file, "-") && !strcmp(out->inputs[k], "-"))
            return args_fail(err, errlen, "the program is read from standard input, so its input lines must "
                                          "come from '--input FILE'");
    if (run && !have_qc && env_queue_capacity && *env_queue_capacity &&
        args_number("STC_QUEUE_CAPACITY", env_queue_capacity, 1, CLI_MAX_QUEUE_CAPACITY,
                    &out->queue_capacity, err, errlen))
        return -1;
    return 0;
}

/* replay.c - runs a libFuzzer target on files, without libFuzzer.
 *
 *   fuzz_X_replay [-v] PATH...
 *
 * Calls LLVMFuzzerTestOneInput once per file: PATH is a file or a
 * directory, whose regular files (recursively; names starting with '.' are
 * skipped) are replayed in name order.  Each input is passed in a malloc'd
 * buffer of exactly its size, so a sanitizer build catches over-reads.
 * -v prints every file name before its run.  If an input crashes (a trap,
 * abort or fault), the name of the file is printed before the process
 * dies.  Ends with "replay: N inputs"; exit status 0, or 1 when a PATH
 * cannot be read.  The same files can be given to the libFuzzer binaries
 * (which also accept files and directories) to debug them there. */
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char replay_current[4096]; /* the input being run, for the crash handler */
static bool replay_verbose;
static long replay_count;

static void replay_on_crash(int sig)
{
    static const char msg[] = "\nreplay: crashed on input: ";
    ssize_t r = write(2, msg, sizeof msg - 1);
    r = write(2, replay_current, strlen(replay_current));
    r = write(2, "\n", 1);
    (void)r;
    signal(sig, SIG_DFL);
    raise(sig);
}

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open '%s'\n", path);
        return 1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *data = malloc(cap);
    while (data) {
        if (len == cap) {
            uint8_t *more = realloc(data, cap *= 2);
            if (!more) { free(data); data = NULL; break; }
            data = more;
        }
        size_t got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    bool bad = !data || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read '%s'\n", path);
        free(data);
        return 1;
    }
    /* An exact-size copy: reading past the input is then a heap overflow. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) { free(data); return 1; }
    memcpy(exact, data, len);
    free(data);
    snprintf(replay_current, sizeof replay_current, "%s", path);
    if (replay_verbose) fprintf(stderr, "replay: %s\n", path);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    replay_count++;
    return 0;
}

static int replay_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: cannot read '%s'\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) return replay_file(path);
    DIR *dir = opendir(path);
    if (!dir) {
        fprintf(stderr, "replay: cannot open the directory '%s'\n", path);
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int bad = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            char **more = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
            if (!more) { bad = 1; break; }
            names = more;
        }
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len))) { bad = 1; break; }
        snprintf(names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir(dir);
    if (n) qsort(names, n, sizeof *names, replay_name_cmp);
    for (size_t i = 0; i < n; i++) {
        bad |= replay_path(names[i]);
        free(names[i]);
    }
    free(names);
    if (bad) fprintf(stderr, "replay: problems in the directory '%s'\n", path);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0, paths = 0;
    /* Name the input on a crash, leaving a sanitizer's own handlers alone. */
    static const int sigs[] = {SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
            !(old.sa_flags & SA_SIGINFO))
            signal(sigs[i], replay_on_crash);
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) {
            replay_verbose = true;
            continue;
        }
        paths++;
        bad |= replay_path(argv[i]);
    }
    if (!paths) {
        fprintf(stderr, "usage: %s [-v] PATH...\n", argv[0]);
        return 64;
    }
    printf("replay: %ld inputs\n", replay_count);
    return bad ? 1 : 0;
}

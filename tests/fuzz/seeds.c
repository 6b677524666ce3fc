/* seeds.c - builds the fuzzers' seed corpus from STCLang files.
 *
 *   fuzz_seeds OUTDIR FILE...
 *
 * Empties OUTDIR of regular files (creating it if needed), then writes one
 * seed per program: a FILE with `-- test: NAME` lines (the format of
 * tests/lang, see tests/lang_runner.c) is split at those lines, every test
 * becoming the file's prelude (the lines before the first marker) followed
 * by the test's own lines, so that it compiles on its own; any other FILE is
 * copied whole.  Seeds are named DIR_BASE-NN.stc or DIR_BASE.stc after the
 * FILE's directory and base name.  Prints "seeds: N programs in OUTDIR". */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *seeds_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap + 1);
    for (size_t got = 1; s && got;) {
        if (n == cap) {
            char *more = realloc(s, (cap *= 2) + 1);
            if (!more) { free(s); s = NULL; break; }
            s = more;
        }
        got = fread(s + n, 1, cap - n, f);
        n += got;
    }
    if (s && ferror(f)) { free(s); s = NULL; }
    fclose(f);
    if (s) s[n] = '\0';
    *len = n;
    return s;
}

static int seeds_write(const char *path, const char *a, size_t alen, const char *b, size_t blen)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    int bad = fwrite(a, 1, alen, f) != alen || fwrite(b, 1, blen, f) != blen;
    bad |= fclose(f) != 0;
    return bad;
}

/* The "DIR_BASE" prefix of a seed name: parent directory and base name
 * without ".stc". */
static void seeds_prefix(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    const char *dir = "";
    size_t dirlen = 0;
    if (base) {
        const char *p = base;
        while (p > path && p[-1] != '/') p--;
        dir = p;
        dirlen = (size_t)(base - p);
        base++;
    } else {
        base = path;
    }
    size_t blen = strlen(base);
    if (blen > 4 && !strcmp(base + blen - 4, ".stc")) blen -= 4;
    snprintf(out, size, "%.*s%s%.*s", (int)dirlen, dir, dirlen ? "_" : "", (int)blen, base);
}

static int seeds_is_marker(const char *s, size_t n) { return n >= 8 && !strncmp(s, "-- test:", 8); }

/* The offset of the first marker line at or after offset i (a line start),
 * or len. */
static size_t seeds_next_marker(const char *t, size_t len, size_t i)
{
    while (i < len) {
        if (seeds_is_marker(t + i, len - i)) return i;
        while (i < len && t[i] != '\n') i++;
        if (i < len) i++;
    }
    return len;
}

/* Writes the seeds of one file; returns the number written, -1 on error. */
static int seeds_file(const char *outdir, const char *path)
{
    size_t len = 0;
    char *text = seeds_read(path, &len);
    if (!text) {
        fprintf(stderr, "seeds: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char prefix[512], out[1024];
    seeds_prefix(path, prefix, sizeof prefix);
    int count = 0, bad = 0;
    size_t prelude = seeds_next_marker(text, len, 0);
    for (size_t i = prelude, j; i < len; i = j) {
        /* A test runs from its marker line to the next one or the end. */
        j = i;
        while (j < len && text[j] != '\n') j++;
        j = seeds_next_marker(text, len, j < len ? j + 1 : len);
        snprintf(out, sizeof out, "%s/%s-%02d.stc", outdir, prefix, ++count);
        bad |= seeds_write(out, text, prelude, text + i, j - i);
    }
    if (!count) {
        snprintf(out, sizeof out, "%s/%s.stc", outdir, prefix);
        bad |= seeds_write(out, text, len, "", 0);
        count = 1;
    }
    free(text);
    if (bad) {
        fprintf(stderr, "seeds: cannot write the seeds of '%s' in '%s'\n", path, outdir);
        return -1;
    }
    return count;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUTDIR FILE...\n", argv[0]);
        return 64;
    }
    const char *outdir = argv[1];
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "seeds: cannot create '%s': %s\n", outdir, strerror(errno));
        return 1;
    }
    DIR *dir = opendir(outdir);
    if (!dir) {
        fprintf(stderr, "seeds: cannot open '%s': %s\n", outdir, strerror(errno));
        return 1;
    }
    char path[1024];
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", outdir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
    }
    closedir(dir);
    int total = 0, bad = 0;
    for (int i = 2; i < argc; i++) {
        int n = seeds_file(outdir, argv[i]);
        if (n < 0) bad = 1;
        else total += n;
    }
    printf("seeds: %d programs in %s\n", total, outdir);
    return bad;
}

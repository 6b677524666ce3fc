/* stcgz.c - a parallel gzip built on stc and zlib.
 *
 *   stcgz [-w WORKERS] [-1..-9] [-q] [INPUT [OUTPUT]]
 *
 * The input is cut into 128 KiB blocks.  A C stream source reads them and
 * hands each to the program as (block, dict, last), dict being the last
 * 32 KiB of the block before.  Three C state threads do the work:
 *
 *   deflate_block  STC_PURE    raw deflate of one block, primed with dict,
 *                              ended by a sync flush (Z_FINISH for the last
 *                              block), and the block's crc32: replicated
 *   gz_crc         STC_WRITES  folds the block crcs with crc32_combine: serial
 *   gz_write       STC_WRITES  writes the gzip header, then every block's
 *                              deflate bytes, in order: serial
 *
 * A sync flush ends each block on a byte boundary with no final-block bit,
 * so the blocks concatenate into one deflate stream (pigz's scheme).  Every
 * block's bytes depend only on the block and its dictionary, so the output
 * is the same for any worker count.  After the run the host writes the
 * trailer (crc32, length mod 2^32) from gz_crc's final state.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <stc.h>

#define BLOCK_SIZE (128 * 1024) /* pigz's default block */
#define DICT_SIZE (32 * 1024)   /* deflate's window */
#define EXIT_USAGE 64           /* sysexits' EX_USAGE */

/* Each block's compressed bytes go through gz_crc to gz_write in order; the
 * body is one expression per item, so stc pipelines it: deflate replicated,
 * crc and write as serial stages. */
static const char program[] =
    "-- stcgz: (block, dict, last) items in, compressed blocks out in order\n"
    "thread pack = deflate_block   -- (str, str, bool) -> (str, int, int)\n"
    "thread crc = gz_crc           -- (str, int, int) -> str\n"
    "thread out = gz_write         -- str -> int\n"
    "fun main(blocks) = smap(fn b => out(crc(pack(b))), blocks)\n";

/* ---- The source: 128 KiB blocks, one read ahead ------------------------- */

struct reader {
    FILE *in;
    const char *name;       /* for messages */
    unsigned char *cur;     /* the block to hand out next */
    unsigned char *next;    /* the block after it, read ahead to know `last` */
    size_t cur_len, next_len;
    unsigned char dict[DICT_SIZE]; /* tail of the block handed out before */
    size_t dict_len;
    int started, done;
    long long blocks;       /* items produced (for the summary) */
    unsigned long long bytes_in;
};

/* Fills buf with up to BLOCK_SIZE bytes; fread only stops short at the end
 * of the input or on an error. */
static int read_block(struct reader *r, unsigned char *buf, size_t *len, stc_ctx *cx)
{
    *len = fread(buf, 1, BLOCK_SIZE, r->in);
    if (*len < BLOCK_SIZE && ferror(r->in))
        return stc_ctx_error(cx, "%s: read error: %s", r->name, strerror(errno));
    r->bytes_in += *len;
    return 0;
}

static int read_source(void *ud, stc_value *item, stc_ctx *cx)
{
    struct reader *r = ud;
    int rc;
    if (r->done) return 0;
    if (!r->started) {
        r->started = 1;
        if ((rc = read_block(r, r->cur, &r->cur_len, cx)) < 0) return rc;
    }
    /* Read ahead to know whether cur is the last block.  After a short
     * block there is nothing more to read (and on a terminal a read would
     * wait for a second end of file). */
    r->next_len = 0;
    if (r->cur_len == BLOCK_SIZE && (rc = read_block(r, r->next, &r->next_len, cx)) < 0)
        return rc;
    /* An empty input still makes one (empty, last) block: gzip's empty
     * member needs a final deflate block. */
    int last = r->next_len == 0;
    stc_value parts[3] = {
        stc_value_new_str((const char *)r->cur, r->cur_len),
        stc_value_new_str((const char *)r->dict, r->dict_len),
        stc_value_bool(last),
    };
    if (!stc_value_is_valid(parts[0]) || !stc_value_is_valid(parts[1])) {
        stc_value_release(parts[0]);
        stc_value_release(parts[1]);
        return stc_ctx_error(cx, "out of memory");
    }
    *item = stc_value_new_tuple(3, parts);
    if (!stc_value_is_valid(*item)) return stc_ctx_error(cx, "out of memory");
    r->blocks++;
    if (last) {
        r->done = 1;
        return 1;
    }
    /* The next block's dictionary is this (full) block's tail. */
    memcpy(r->dict, r->cur + BLOCK_SIZE - DICT_SIZE, DICT_SIZE);
    r->dict_len = DICT_SIZE;
    unsigned char *t = r->cur;
    r->cur = r->next;
    r->cur_len = r->next_len;
    r->next = t;
    return 1;
}

/* ---- deflate_block: (block, dict, last) -> (deflated, crc32, length) ----- */

struct deflate_conf {
    int level;
};

static int deflate_block(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state; /* STC_PURE: everything is per call, so calls run in parallel */
    const struct deflate_conf *conf = stc_ctx_user(cx);
    size_t len, dict_len;
    const char *block = stc_value_str(stc_value_at(*in, 0), &len);
    const char *dict = stc_value_str(stc_value_at(*in, 1), &dict_len);
    stc_value lastv = stc_value_at(*in, 2);
    if (!block || !dict || lastv.tag != STC_T_BOOL)
        return stc_ctx_error(cx, "deflate_block: expected (str, str, bool)");
    if (len > UINT_MAX || dict_len > UINT_MAX)
        return stc_ctx_error(cx, "deflate_block: block too large");

    z_stream z;
    memset(&z, 0, sizeof z);
    int zrc = deflateInit2(&z, conf->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    if (zrc != Z_OK) return stc_ctx_error(cx, "deflateInit2: %s", zError(zrc));
    if (dict_len > 0 &&
        (zrc = deflateSetDictionary(&z, (const Bytef *)dict, (uInt)dict_len)) != Z_OK) {
        deflateEnd(&z);
        return stc_ctx_error(cx, "deflateSetDictionary: %s", zError(zrc));
    }
    /* deflateBound covers Z_FINISH; a sync flush adds an empty stored
     * block (5 bytes) and the bit buffer, so leave room for those. */
    size_t cap = deflateBound(&z, (uLong)len) + 16;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&z);
        return stc_ctx_error(cx, "out of memory");
    }
    int flush = lastv.as.b ? Z_FINISH : Z_SYNC_FLUSH;
    z.next_in = (Bytef *)(uintptr_t)block; /* zlib does not write its input */
    z.avail_in = (uInt)len;
    for (;;) {
        z.next_out = buf + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out);
        zrc = deflate(&z, flush);
        if (zrc == Z_STREAM_END) break; /* Z_FINISH is done */
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) break;
        if (z.avail_out > 0) {
            /* Room left: a sync flush is complete; anything else is a
             * zlib state we do not expect (so no endless loop). */
            if (flush == Z_SYNC_FLUSH && zrc == Z_OK && z.avail_in == 0) break;
            zrc = Z_BUF_ERROR;
            break;
        }
        /* Out of room despite the bound: grow and go on. */
        unsigned char *more = realloc(buf, cap * 2);
        if (!more) {
            deflateEnd(&z);
            free(buf);
            return stc_ctx_error(cx, "out of memory");
        }
        buf = more;
        cap *= 2;
    }
    size_t out_len = z.total_out;
    deflateEnd(&z);
    if (zrc != Z_OK && zrc != Z_STREAM_END) {
        free(buf);
        return stc_ctx_error(cx, "deflate: %s", zError(zrc));
    }
    stc_value parts[3] = {
        stc_value_new_str((const char *)buf, out_len),
        stc_value_int((int64_t)crc32(0, (const Bytef *)block, (uInt)len)),
        stc_value_int((int64_t)len),
    };
    free(buf);
    if (!stc_value_is_valid(parts[0])) return stc_ctx_error(cx, "out of memory");
    *out = stc_value_new_tuple(3, parts);
    if (!stc_value_is_valid(*out)) return stc_ctx_error(cx, "out of memory");
    return 0;
}

/* ---- gz_crc: fold the block crcs in order ------------------------------- */

struct crc_state {
    uint32_t crc;   /* crc32 of everything so far */
    uint64_t total; /* bytes so far */
};

static int gz_crc(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    struct crc_state *s = state;
    stc_value data = stc_value_at(*in, 0), crc = stc_value_at(*in, 1), len = stc_value_at(*in, 2);
    if (data.tag != STC_T_STR || crc.tag != STC_T_INT || len.tag != STC_T_INT)
        return stc_ctx_error(cx, "gz_crc: expected (str, int, int)");
    s->crc = (uint32_t)crc32_combine(s->crc, (uLong)crc.as.i, (z_off_t)len.as.i);
    s->total += (uint64_t)len.as.i;
    *out = stc_value_retain(data); /* pass the deflate bytes on, no copy */
    return 0;
}

/* The final state, (crc32, total length), for the trailer. */
static int gz_crc_to_value(const void *state, stc_value *out, void *user)
{
    (void)user;
    const struct crc_state *s = state;
    stc_value parts[2] = {stc_value_int((int64_t)s->crc), stc_value_int((int64_t)s->total)};
    *out = stc_value_new_tuple(2, parts);
    return stc_value_is_valid(*out) ? 0 : STC_ENOMEM;
}

/* ---- gz_write: the header, then every block in order --------------------- */

struct output {
    FILE *f;
    const char *name; /* for messages */
};

struct write_state {
    const struct output *out;
    int header_done;
    uint64_t written;
};

static int gz_write_init(void *state, const stc_value *init, void *user)
{
    (void)init; /* declared without state_type: always NULL */
    ((struct write_state *)state)->out = user;
    return 0;
}

static int gz_write(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    struct write_state *s = state;
    /* mtime 0, no name and OS 3 (Unix): the header depends on nothing. */
    static const unsigned char header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    size_t len;
    const char *data = stc_value_str(*in, &len);
    if (!data) return stc_ctx_error(cx, "gz_write: expected a str");
    size_t n = 0;
    if (!s->header_done) {
        if (fwrite(header, 1, sizeof header, s->out->f) != sizeof header) goto fail;
        s->header_done = 1;
        n += sizeof header;
    }
    if (len > 0 && fwrite(data, 1, len, s->out->f) != len) goto fail;
    n += len;
    s->written += n;
    *out = stc_value_int((int64_t)n);
    return 0;
fail:
    return stc_ctx_error(cx, "%s: write error: %s", s->out->name, strerror(errno));
}

static int gz_write_to_value(const void *state, stc_value *out, void *user)
{
    (void)user;
    *out = stc_value_int((int64_t)((const struct write_state *)state)->written);
    return 0;
}

/* ---- The host ------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: stcgz [-w WORKERS] [-1..-9] [-q] [INPUT [OUTPUT]]\n"
               "  gzip-compresses INPUT (default or '-': stdin) to OUTPUT (default\n"
               "  or '-': stdout) in 128 KiB blocks compressed in parallel.\n"
               "  -w N   workers (default 0: one per online CPU)\n"
               "  -1..-9 compression level (default 6)\n"
               "  -q     no summary on a terminal\n");
}

static int parse_workers(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 4096) return -1;
    *out = (int)v;
    return 0;
}

/* Index of the final state of thread `name`, or -1. */
static long find_state(const stc_result *res, const char *name)
{
    for (size_t i = 0; i < stc_result_state_count(res); i++)
        if (strcmp(stc_result_state_name(res, i), name) == 0) return (long)i;
    return -1;
}

/* Every block allocates a few 64-256 KiB buffers (its str values, zlib's
 * window and hash tables) and frees them a few ms later.  glibc gives such
 * memory back to the kernel (munmap, or trimming the heap top) and faults
 * it in again for the next block: ~80 page faults per block, which on our
 * VMs made runs 20-40% slower.  Keep it in the heap instead;
 * the pipeline bounds how many blocks are alive, so the heap stays small. */
static void tune_malloc(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

static int put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
    return 4;
}

int main(int argc, char **argv)
{
    int workers = 0, level = 6, quiet = 0, opt;
    opterr = 0; /* we print our own usage message */
    while ((opt = getopt(argc, argv, ":w:123456789qh")) != -1) {
        switch (opt) {
        case 'w':
            if (parse_workers(optarg, &workers) < 0) {
                fprintf(stderr, "stcgz: -w: '%s' is not a worker count (0..4096)\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        case ':':
            fprintf(stderr, "stcgz: -%c needs an argument\n", optopt);
            usage(stderr);
            return EXIT_USAGE;
        case '?':
            fprintf(stderr, "stcgz: unknown option '-%c'\n", optopt);
            usage(stderr);
            return EXIT_USAGE;
        default: level = opt - '0'; break;
        }
    }
    if (argc - optind > 2) {
        fprintf(stderr, "stcgz: too many arguments\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *in_name = optind < argc ? argv[optind] : "-";
    const char *out_name = optind + 1 < argc ? argv[optind + 1] : "-";
    int in_std = strcmp(in_name, "-") == 0, out_std = strcmp(out_name, "-") == 0;

    tune_malloc();
    int status = 1;
    struct reader *rd = NULL;
    struct output outp = {.f = NULL, .name = out_std ? "stdout" : out_name};
    struct deflate_conf conf = {.level = level};
    stc_env *env = NULL;
    stc_program *prog = NULL;
    stc_diags *diags = NULL;
    stc_result *res = NULL;
    char *text = NULL;
    FILE *in = NULL;

    in = in_std ? stdin : fopen(in_name, "rb");
    if (!in) {
        fprintf(stderr, "stcgz: %s: %s\n", in_name, strerror(errno));
        goto done;
    }
    outp.f = out_std ? stdout : fopen(out_name, "wb");
    if (!outp.f) {
        fprintf(stderr, "stcgz: %s: %s\n", out_name, strerror(errno));
        goto done;
    }
    rd = calloc(1, sizeof *rd);
    if (rd) {
        rd->cur = malloc(BLOCK_SIZE);
        rd->next = malloc(BLOCK_SIZE);
    }
    if (!rd || !rd->cur || !rd->next) {
        fprintf(stderr, "stcgz: out of memory\n");
        goto done;
    }
    rd->in = in;
    rd->name = in_std ? "stdin" : in_name;

    env = stc_env_new();
    if (!env) {
        fprintf(stderr, "stcgz: out of memory\n");
        goto done;
    }
    const stc_thread_def defs[] = {
        {.name = "deflate_block", .fn = deflate_block, .type = "(str, str, bool) -> (str, int, int)",
         .access = STC_PURE, .user = &conf},
        {.name = "gz_crc", .fn = gz_crc, .type = "(str, int, int) -> str",
         .state_size = sizeof(struct crc_state), .state_to_value = gz_crc_to_value,
         .access = STC_WRITES},
        {.name = "gz_write", .fn = gz_write, .type = "str -> int",
         .state_size = sizeof(struct write_state), .state_init = gz_write_init,
         .state_to_value = gz_write_to_value, .access = STC_WRITES, .user = &outp},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        int rc = stc_env_add_thread(env, &defs[i]);
        if (rc != 0) {
            fprintf(stderr, "stcgz: cannot register %s: %s\n", defs[i].name, stc_strerror(rc));
            goto done;
        }
    }
    int rc = stc_compile(env, program, sizeof program - 1, "stcgz.stc", &prog, &diags);
    if (rc != 0) {
        text = stc_diags_format(diags);
        fprintf(stderr, "stcgz: the embedded program does not compile:\n%s",
                text ? text : stc_strerror(rc));
        goto done;
    }

    stc_stream io = {.source = read_source, .source_ud = rd};
    rc = stc_run_stream(prog, &(stc_run_opts){.workers = workers}, &io, &res);
    if (rc != 0) {
        text = res ? stc_result_error_format(res) : NULL;
        fprintf(stderr, "stcgz: %s\n", text ? text : stc_strerror(rc));
        goto done;
    }

    long ci = find_state(res, "crc");
    stc_value fin = ci >= 0 ? stc_result_state(res, (size_t)ci) : stc_value_unit();
    stc_value crcv = stc_value_at(fin, 0), totv = stc_value_at(fin, 1);
    if (crcv.tag != STC_T_INT || totv.tag != STC_T_INT) {
        fprintf(stderr, "stcgz: the crc thread has no final state\n");
        goto done;
    }
    unsigned char trailer[8];
    put_le32(trailer, (uint32_t)crcv.as.i);
    put_le32(trailer + 4, (uint32_t)totv.as.i); /* ISIZE is the length mod 2^32 */
    if (fwrite(trailer, 1, sizeof trailer, outp.f) != sizeof trailer || fflush(outp.f) != 0) {
        fprintf(stderr, "stcgz: %s: write error: %s\n", outp.name, strerror(errno));
        goto done;
    }
    if (!quiet && isatty(STDERR_FILENO)) {
        long wi = find_state(res, "out");
        stc_value wv = wi >= 0 ? stc_result_state(res, (size_t)wi) : stc_value_unit();
        long long outb = wv.tag == STC_T_INT ? (long long)wv.as.i + (long long)sizeof trailer : 0;
        fprintf(stderr, "stcgz: %s: %llu -> %lld bytes (%.1f%%), %lld blocks, %d workers\n",
                rd->name, rd->bytes_in, outb,
                rd->bytes_in ? 100.0 * (double)outb / (double)rd->bytes_in : 0.0, rd->blocks,
                stc_result_stats(res).workers);
    }
    status = 0;

done:
    /* Close the output even on failure (so its buffer is not lost silently)
     * and report a failing close: it may be where a write error shows. */
    if (outp.f && outp.f != stdout) {
        if (fclose(outp.f) != 0 && status == 0) {
            fprintf(stderr, "stcgz: %s: write error: %s\n", outp.name, strerror(errno));
            status = 1;
        }
    } else if (outp.f && status == 0 && fflush(stdout) != 0) {
        fprintf(stderr, "stcgz: stdout: write error: %s\n", strerror(errno));
        status = 1;
    }
    if (in && in != stdin) fclose(in);
    if (rd) {
        free(rd->cur);
        free(rd->next);
        free(rd);
    }
    free(text);
    stc_result_free(res);
    stc_diags_free(diags);
    stc_program_free(prog);
    stc_env_free(env);
    return status;
}

/* gen_text: a deterministic generator of Zipf-like English-looking text
 * for the wordfreq example.
 *
 *   gen_text N [SEED] [VOCAB]   writes N words to standard output
 *
 * Words are drawn from a vocabulary of VOCAB (default 50000) made-up words
 * of 1-4 syllables; the word of rank r is drawn with probability
 * proportional to 1 / r (Zipf's law, exponent 1), so a few words are very
 * common and most are rare, as in a real text.  Lines hold 1-20 words
 * separated by one space, sometimes two or a tab; about one word in 15
 * starts with a capital letter and one line in 50 is empty.  Only ASCII
 * letters, blanks and newlines are written, so "a word" means the same to
 * STCLang's words() after lower(), to Python's str.split() after lower()
 * and to `tr -s ' \t' '\n'` after `tr A-Z a-z`.  The same arguments give
 * the same bytes on every platform: integer arithmetic only (the Zipf
 * weights are fixed-point).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64 */
static uint64_t rng_state;
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}
static uint32_t rng_below(uint32_t n) { return (uint32_t)(rng_next() % n); }

static const char *const onsets[] = {"b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t",
                                     "v", "w", "th", "st", "pr", "gr", "ch", "sh", "", "qu"};
static const char *const vowels[] = {"a", "e", "i", "o", "u", "ea", "ou", "ai", "y"};
static const char *const codas[] = {"", "", "n", "r", "s", "t", "l", "nd", "ng", "ck"};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static int usage(void)
{
    fprintf(stderr, "usage: gen_text N [SEED] [VOCAB]  (N words; VOCAB 1..1000000, default 50000)\n");
    return 64;
}

static int parse(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-') return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v > max) return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t n, seed = 1, vocab = 50000;
    if (argc < 2 || argc > 4 || parse(argv[1], UINT64_MAX / 2, &n) || (argc > 2 && parse(argv[2], UINT64_MAX, &seed)) ||
        (argc > 3 && (parse(argv[3], 1000000, &vocab) || vocab == 0)))
        return usage();
    rng_state = seed * 0x2545F4914F6CDD1Du + 1;
    /* The vocabulary: distinct made-up words (a repeat is replaced). */
    char **word = malloc(vocab * sizeof *word);
    uint64_t *cum = malloc(vocab * sizeof *cum);
    if (!word || !cum) return 71;
    size_t tsize = 1;
    while (tsize < 4 * vocab) tsize *= 2;
    char **table = calloc(tsize, sizeof *table); /* open addressing: no repeats */
    if (!table) return 71;
    for (uint64_t i = 0; i < vocab;) {
        char buf[64] = "";
        int syl = 1 + (int)rng_below(4);
        for (int k = 0; k < syl; k++) {
            strcat(buf, onsets[rng_below(N_OF(onsets))]);
            strcat(buf, vowels[rng_below(N_OF(vowels))]);
            if (k + 1 == syl || rng_below(3) == 0) strcat(buf, codas[rng_below(N_OF(codas))]);
        }
        uint64_t h = 1469598103934665603u;
        for (const char *p = buf; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211u;
        size_t j = (size_t)h & (tsize - 1);
        while (table[j] && strcmp(table[j], buf)) j = (j + 1) & (tsize - 1);
        if (table[j]) continue; /* a repeat: draw again */
        size_t len = strlen(buf) + 1;
        if (!(word[i] = malloc(len))) return 71;
        table[j] = memcpy(word[i++], buf, len);
    }
    /* Zipf weights 2^40 / rank, cumulative. */
    uint64_t total = 0;
    for (uint64_t r = 0; r < vocab; r++) cum[r] = total += ((uint64_t)1 << 40) / (r + 1);
    uint64_t line_left = 1 + rng_below(20);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t x = rng_next() % total;
        uint64_t lo = 0, hi = vocab - 1; /* the first rank with cum > x */
        while (lo < hi) {
            uint64_t mid = (lo + hi) / 2;
            if (cum[mid] > x) hi = mid;
            else lo = mid + 1;
        }
        const char *w = word[lo];
        if (rng_below(15) == 0) {
            putchar(w[0] >= 'a' && w[0] <= 'z' ? w[0] - 'a' + 'A' : w[0]);
            fputs(w + 1, stdout);
        } else {
            fputs(w, stdout);
        }
        if (--line_left == 0 || i + 1 == n) {
            putchar('\n');
            if (rng_below(50) == 0) putchar('\n');
            line_left = 1 + rng_below(20);
        } else {
            uint32_t sep = rng_below(40);
            fputs(sep == 0 ? "  " : sep == 1 ? "\t" : " ", stdout);
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout)) return 74;
    for (uint64_t i = 0; i < vocab; i++) free(word[i]);
    free(word), free(cum), free(table);
    return 0;
}

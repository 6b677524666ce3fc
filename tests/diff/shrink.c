/* shrink.c - greedy text-level shrinking of STCLang programs (see shrink.h).
 *
 * The shrinker knows the token structure of STCLang (identifiers, numbers,
 * strings, operators, brackets) but not its grammar: a variant that no
 * longer parses or type-checks is simply rejected by the predicate. It
 * relies on the generator's habit of parenthesizing every compound
 * expression, which makes `(if ...)`, `(case ...)` and `(let ...)` groups
 * easy to take apart. */
#include "shrink.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct tok {
    int start, end;
    char kind; /* 'a' name or keyword, 'n' integer, 'f' float, 's' string, 'o' operator or bracket */
} tok;

typedef struct shrinker {
    char *cur;
    tok *t;
    int n, cap;
    shrink_pred pred;
    void *ud;
    int tries;
    shrink_budget budget;
    struct timespec t0;
} shrinker;

static void tokenize(shrinker *sh)
{
    static const char *const ops2[] = {"=>", "==", "!=", "<=", ">=", "&&", "||", "->"};
    const char *s = sh->cur;
    sh->n = 0;
    for (int i = 0; s[i];) {
        if (isspace((unsigned char)s[i])) { i++; continue; }
        if (s[i] == '-' && s[i + 1] == '-') {
            while (s[i] && s[i] != '\n') i++;
            continue;
        }
        int st = i;
        char kind = 'o';
        if (isalpha((unsigned char)s[i]) || s[i] == '_') {
            while (isalnum((unsigned char)s[i]) || s[i] == '_') i++;
            kind = 'a';
        } else if (isdigit((unsigned char)s[i])) {
            while (isdigit((unsigned char)s[i])) i++;
            kind = 'n';
            if ((s[i] == '.' && isdigit((unsigned char)s[i + 1])) || s[i] == 'e' || s[i] == 'E') {
                kind = 'f';
                i++;
                while (isalnum((unsigned char)s[i]) || s[i] == '.' ||
                       ((s[i] == '-' || s[i] == '+') && (s[i - 1] == 'e' || s[i - 1] == 'E')))
                    i++;
            }
        } else if (s[i] == '"') {
            for (i++; s[i] && s[i] != '"'; i++)
                if (s[i] == '\\' && s[i + 1]) i++;
            if (s[i]) i++;
            kind = 's';
        } else {
            i++;
            for (size_t k = 0; k < sizeof ops2 / sizeof ops2[0]; k++)
                if (s[st] == ops2[k][0] && s[st + 1] == ops2[k][1]) i = st + 2;
        }
        if (sh->n == sh->cap) {
            sh->cap = sh->cap ? 2 * sh->cap : 256;
            tok *nt = realloc(sh->t, (size_t)sh->cap * sizeof *nt);
            if (!nt) abort();
            sh->t = nt;
        }
        sh->t[sh->n++] = (tok){st, i, kind};
    }
}

static bool is(const shrinker *sh, int k, const char *w)
{
    if (k < 0 || k >= sh->n) return false;
    size_t len = (size_t)(sh->t[k].end - sh->t[k].start);
    return strlen(w) == len && !memcmp(sh->cur + sh->t[k].start, w, len);
}

static bool is_keyword(const shrinker *sh, int k)
{
    static const char *const kw[] = {"fun", "thread", "let", "in", "if", "then", "else", "case", "of",
                                     "fn", "inl", "inr", "not", "true", "false", "init"};
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (is(sh, k, kw[i])) return true;
    return false;
}

static bool is_open(const shrinker *sh, int k) { return is(sh, k, "(") || is(sh, k, "["); }
static bool is_close(const shrinker *sh, int k) { return is(sh, k, ")") || is(sh, k, "]"); }

static int match_close(const shrinker *sh, int i)
{
    int depth = 0;
    for (int k = i; k < sh->n; k++) {
        if (is_open(sh, k)) depth++;
        else if (is_close(sh, k) && --depth == 0) return k;
    }
    return -1;
}

/* Tokens in (i, j) at bracket depth 0 relative to i that spell w. */
static int find_top(const shrinker *sh, int i, int j, const char *w, int *out, int max)
{
    int depth = 0, n = 0;
    for (int k = i + 1; k < j; k++) {
        if (is_open(sh, k)) depth++;
        else if (is_close(sh, k)) depth--;
        else if (!depth && is(sh, k, w) && n < max) out[n++] = k;
    }
    return n;
}

static char *xmalloc(size_t n)
{
    char *p = malloc(n);
    if (!p) abort();
    return p;
}

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void append(text *t, const char *p, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        char *np = realloc(t->p, t->cap);
        if (!np) abort();
        t->p = np;
    }
    memcpy(t->p + t->len, p, n);
    t->len += n;
    t->p[t->len] = '\0';
}

#define TS(k) (sh->t[k].start)
#define TE(k) (sh->t[k].end)

/* Appends the text of tokens [from, to) of sh->cur, with every name equal to
 * token v replaced by `(repl)`. */
static void append_subst(text *out, const shrinker *sh, int from, int to, int v, const char *repl, size_t rl)
{
    const char *s = sh->cur;
    int vl = TE(v) - TS(v);
    for (int k = from; k < to; k++) {
        if (k > from) append(out, s + TE(k - 1), (size_t)(TS(k) - TE(k - 1)));
        if (TE(k) - TS(k) == vl && !memcmp(s + TS(k), s + TS(v), (size_t)vl)) {
            append(out, "(", 1);
            append(out, repl, rl);
            append(out, ")", 1);
        } else {
            append(out, s + TS(k), (size_t)(TE(k) - TS(k)));
        }
    }
}

/* cur[0, a) + mid + cur[b, end), with mid = (open, text[ma, mb), close). */
static char *splice(const shrinker *sh, int a, int b, const char *open, const char *text, int ma, int mb,
                    const char *close)
{
    size_t len = strlen(sh->cur), lo = strlen(open), lc = strlen(close), lm = (size_t)(mb - ma);
    char *r = xmalloc(len + lo + lm + lc + 1), *p = r;
    memcpy(p, sh->cur, (size_t)a), p += a;
    memcpy(p, open, lo), p += lo;
    memcpy(p, text + ma, lm), p += lm;
    memcpy(p, close, lc), p += lc;
    strcpy(p, sh->cur + b);
    return r;
}

static double elapsed(const shrinker *sh)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - sh->t0.tv_sec) + (double)(t.tv_nsec - sh->t0.tv_nsec) / 1e9;
}

static bool exhausted(const shrinker *sh)
{
    return sh->tries >= sh->budget.max_tries || elapsed(sh) > sh->budget.max_seconds;
}

/* Tries a candidate (consumed); keeps it if it still fails. */
static bool try_cand(shrinker *sh, char *cand, bool same_len_ok)
{
    size_t lc = strlen(cand), lu = strlen(sh->cur);
    if (exhausted(sh) || lc > lu || (lc == lu && (!same_len_ok || !strcmp(cand, sh->cur)))) {
        free(cand);
        return false;
    }
    sh->tries++;
    if (!sh->pred(cand, sh->ud)) {
        free(cand);
        return false;
    }
    free(sh->cur);
    sh->cur = cand;
    tokenize(sh);
    return true;
}

static bool pass_lines(shrinker *sh)
{
    bool progress = false;
    int lines = 0;
    for (const char *p = sh->cur; *p; p++) lines += *p == '\n';
    for (int l = lines; l >= 0; l--) {
        int line = 0, a = 0;
        const char *s = sh->cur;
        for (; s[a] && line < l; a++) line += s[a] == '\n';
        if (!s[a] && line < l) continue;
        int b = a;
        while (s[b] && s[b] != '\n') b++;
        if (s[b]) b++;
        if (b > a) progress |= try_cand(sh, splice(sh, a, b, "", "", 0, 0, ""), false);
    }
    return progress;
}

#define MAXSEP 64

/* Candidates for the group of tokens [i, j] (i an open bracket); true when one was kept. */
static bool shrink_group(shrinker *sh, int i, int j)
{
    const char *s = sh->cur;
    bool call = s[sh->t[i].start] == '(' && i > 0 && sh->t[i - 1].kind == 'a' && !is_keyword(sh, i - 1);
    int ps = call ? sh->t[i - 1].start : sh->t[i].start, pe = sh->t[j].end;
    int sep[MAXSEP], ns, k2[MAXSEP];
    /* the scratch copy lets candidates read the text while sh->cur is replaced */
    char *copy = xmalloc(strlen(s) + 1);
    strcpy(copy, s);
#define TRY(a, b, open, ma, mb, close) \
    do { if (try_cand(sh, splice(sh, a, b, open, copy, ma, mb, close), false)) goto kept; } while (0)
    TRY(ps, pe, "0", 0, 0, "");
    if (s[TS(i)] == '[') TRY(ps, pe, "[]", 0, 0, "");
    if (j == i + 1) goto none;
    if (is(sh, i + 1, "if") && find_top(sh, i, j, "then", sep, 1) && find_top(sh, i, j, "else", k2, 1)) {
        TRY(ps, pe, "(", TS(sep[0] + 1), TS(k2[0]), ")");
        TRY(ps, pe, "(", TS(k2[0] + 1), TS(j), ")");
    } else if (is(sh, i + 1, "case") && find_top(sh, i, j, "of", k2, 1)) {
        int of = k2[0], nalt;
        TRY(ps, pe, "(", TS(i + 2), TS(of), ")");
        ns = find_top(sh, of, j, "|", sep, MAXSEP - 1);
        nalt = ns + 1;
        for (int a = 0; a < nalt; a++) { /* alternative a: tokens (lo, hi) */
            int lo = a ? sep[a - 1] : of, hi = a < ns ? sep[a] : j, arrow[1];
            if (find_top(sh, lo, hi, "=>", arrow, 1)) TRY(ps, pe, "(", TS(arrow[0] + 1), TS(hi), ")");
        }
        for (int a = 0; nalt > 1 && a < nalt; a++) {
            if (a < ns) TRY(a ? TS(sep[a - 1]) : TS(of + 1), a ? TS(sep[a]) : TS(sep[0] + 1), "", 0, 0, "");
            else TRY(TS(sep[a - 1]), TS(j), "", 0, 0, "");
        }
    } else if (is(sh, i + 1, "let") && find_top(sh, i, j, "in", k2, 1)) {
        int in = k2[0];
        TRY(ps, pe, "(", TS(in + 1), TS(j), ")");
        if (sh->t[i + 2].kind == 'a' && is(sh, i + 3, "=")) { /* (e2 with v := (e1)) */
            text body = {0};
            append(&body, "", 0);
            append_subst(&body, sh, in + 1, j, i + 2, copy + TS(i + 4), (size_t)(TE(in - 1) - TS(i + 4)));
            bool kept = try_cand(sh, splice(sh, ps, pe, "(", body.p, 0, (int)body.len, ")"), false);
            free(body.p);
            if (kept) goto kept;
        }
    } else if (!is(sh, i + 1, "fn")) { /* a call, a tuple, a list, or (e) */
        ns = find_top(sh, i, j, ",", sep, MAXSEP);
        for (int a = 0; a <= ns; a++) {
            int lo = a ? sep[a - 1] : i, hi = a < ns ? sep[a] : j;
            if (hi > lo + 1) TRY(ps, pe, "", TS(lo + 1), TE(hi - 1), "");
        }
        for (int a = 0; a <= ns && ns > 0; a++) {
            if (a < ns) TRY(TS(a ? sep[a - 1] + 1 : i + 1), TS(sep[a] + 1), "", 0, 0, "");
            else TRY(TS(sep[a - 1]), TS(j), "", 0, 0, "");
        }
    }
    /* hoisting: the group replaced by a group or call nested in it */
    for (int k = i + 1, tried = 0; k < j && tried < 24; k++) {
        if (!is_open(sh, k)) continue;
        int m = match_close(sh, k);
        bool nested_call = s[TS(k)] == '(' && sh->t[k - 1].kind == 'a' && !is_keyword(sh, k - 1);
        if (m < 0 || m >= j) continue;
        tried++;
        TRY(ps, pe, "", nested_call ? TS(k - 1) : TS(k), TE(m), "");
    }
none:
    free(copy);
    return false;
kept:
    free(copy);
    return true;
#undef TRY
}

static bool pass_groups(shrinker *sh)
{
    bool progress = false;
    for (int i = 0; i < sh->n && !exhausted(sh); i++) {
        if (!is_open(sh, i)) continue;
        int j = match_close(sh, i);
        if (j < 0) continue;
        if (shrink_group(sh, i, j)) {
            progress = true;
            i--; /* the text changed: look at this position again */
        }
    }
    return progress;
}

/* `let v = e1 in` outside parentheses (main's stages): drop it, replacing v
 * by (e1) up to the end of its scope (a closing bracket or comma at its
 * depth, or the next declaration). */
static bool pass_lets(shrinker *sh)
{
    bool progress = false;
    for (int i = 0; i + 3 < sh->n && !exhausted(sh); i++) {
        if (!is(sh, i, "let") || is(sh, i - 1, "(") || sh->t[i + 1].kind != 'a' || !is(sh, i + 2, "=")) continue;
        int depth = 0, lets = 0, in = -1, end = sh->n;
        for (int k = i + 3; k < sh->n && in < 0; k++) {
            if (is_open(sh, k)) depth++;
            else if (is_close(sh, k)) depth--;
            else if (!depth && is(sh, k, "let")) lets++;
            else if (!depth && is(sh, k, "in") && lets-- == 0) in = k;
            if (depth < 0) break;
        }
        if (in < 0 || in == i + 3) continue;
        depth = 0;
        for (int k = in + 1; k < sh->n && end == sh->n; k++) {
            if (is_open(sh, k)) depth++;
            else if (is_close(sh, k) && --depth < 0) end = k;
            if ((!depth && is(sh, k, ",")) || is(sh, k, "fun") || is(sh, k, "thread") ||
                (is(sh, k, "main") && is(sh, k + 1, "=")))
                end = k;
        }
        const char *s = sh->cur;
        text r = {0};
        append(&r, s, (size_t)TS(i));
        append_subst(&r, sh, in + 1, end, i + 1, s + TS(i + 3), (size_t)(TE(in - 1) - TS(i + 3)));
        append(&r, s + TE(end - 1), strlen(s + TE(end - 1)));
        if (try_cand(sh, r.p, false)) {
            progress = true;
            i--;
        }
    }
    return progress;
}

static bool pass_ints(shrinker *sh)
{
    bool progress = false;
    for (int i = 0; i < sh->n && !exhausted(sh); i++) {
        if (sh->t[i].kind != 'n') continue;
        long long v = strtoll(sh->cur + TS(i), NULL, 10), c[4] = {0, 1, 0, 0};
        c[2] = v / 2, c[3] = v - 1;
        for (int k = 0; k < 4; k++) {
            if (c[k] >= v || (k && c[k] <= c[k - 1])) continue;
            char num[32];
            snprintf(num, sizeof num, "%lld", c[k]);
            if (try_cand(sh, splice(sh, TS(i), TE(i), num, "", 0, 0, ""), true)) {
                progress = true;
                i--;
                break;
            }
        }
    }
    return progress;
}

char *shrink_text(const char *src, shrink_pred still_fails, void *ud, shrink_budget budget, int *tries)
{
    shrinker sh = {.pred = still_fails, .ud = ud, .budget = budget};
    clock_gettime(CLOCK_MONOTONIC, &sh.t0);
    sh.cur = xmalloc(strlen(src) + 1);
    strcpy(sh.cur, src);
    tokenize(&sh);
    bool progress = true;
    while (progress && !exhausted(&sh)) {
        progress = pass_lines(&sh);
        progress |= pass_groups(&sh);
        progress |= pass_lets(&sh);
        progress |= pass_ints(&sh);
    }
    free(sh.t);
    if (tries) *tries = sh.tries;
    return sh.cur;
}

// logstats_tbb - examples/logstats written as a oneTBB user would write it:
// the yardstick for how far two cores take this workload on this machine
// (bench/logstats_scale.sh). Same input, same output bytes as
// `stc run --quiet examples/logstats/logstats.stc` (the script checks).
//
//   logstats_tbb [--threads T] [--lines-per-token N] [--tokens K] [--split] LOG
//
// The pipeline (tbb::parallel_pipeline):
//   read     serial_in_order   N lines into a token (their bytes copied)
//   parse    parallel          each line into (good, minute, status, bytes, ms)
//   fold     serial_in_order   the five states, the lines' results as text
//            (--split: five serial_in_order filters, one per state, as
//            stc's plan has them, then one that formats the results)
//   write    serial_in_order   the token's text to standard output
// then the final states in stc's format (latency's doubles in their
// shortest round-trip form, as stc prints them).
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_pipeline.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Parsed {
    bool good = false;
    std::string_view minute; // into the token's bytes
    long status = 0, bytes = 0;
    double ms = 0;
};

struct Token {
    std::string text;               // the lines' bytes
    std::vector<std::string_view> lines;
    std::vector<Parsed> parsed;
    std::string out;                // the lines' results
};

struct States {
    long n = 0, bad = 0;
    long cls[4] = {0, 0, 0, 0};
    long bytes = 0;
    double sum = 0, max = 0;
    std::string cur, best;
    long run = 0, best_n = 0;
};

[[noreturn]] void die(const char *what, std::string_view line)
{
    std::fprintf(stderr, "logstats_tbb: %s in line '%.*s'\n", what, (int)line.size(), line.data());
    std::exit(1);
}

// words(l) on blanks; stc's parse_int / parse_float accept the whole field only.
Parsed parse(std::string_view l)
{
    std::string_view w[8];
    int n = 0;
    size_t i = 0;
    while (i < l.size()) {
        while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) i++;
        if (i == l.size()) break;
        size_t j = i;
        while (j < l.size() && l[j] != ' ' && l[j] != '\t') j++;
        if (n < 8) w[n] = l.substr(i, j - i);
        n++;
        i = j;
    }
    Parsed p;
    if (n != 7) return p;
    auto to_long = [&](std::string_view f) {
        long v = 0;
        auto r = std::from_chars(f.data(), f.data() + f.size(), v);
        if (r.ec != std::errc() || r.ptr != f.data() + f.size()) die("not an int", l);
        return v;
    };
    p.status = to_long(w[4]);
    if (p.status < 200 || p.status > 599) return p;
    p.good = true;
    p.minute = w[0].size() >= 16 ? w[0].substr(0, 16) : w[0];
    p.bytes = to_long(w[5]);
    auto r = std::from_chars(w[6].data(), w[6].data() + w[6].size(), p.ms);
    if (r.ec != std::errc() || r.ptr != w[6].data() + w[6].size()) die("not a float", l);
    return p;
}

void fold_lines(States &s, const Token &t)
{
    for (const Parsed &p : t.parsed) {
        s.n++;
        if (!p.good) s.bad++;
    }
}
void fold_classes(States &s, const Token &t)
{
    for (const Parsed &p : t.parsed)
        if (p.good) {
            long c = p.status / 100;
            s.cls[c >= 2 && c <= 4 ? c - 2 : 3]++;
        }
}
void fold_bytes(States &s, const Token &t)
{
    for (const Parsed &p : t.parsed)
        if (p.good) s.bytes += p.bytes;
}
void fold_latency(States &s, const Token &t)
{
    for (const Parsed &p : t.parsed)
        if (p.good) {
            s.sum += p.ms;
            if (p.ms > s.max) s.max = p.ms;
        }
}
void fold_busiest(States &s, const Token &t)
{
    for (const Parsed &p : t.parsed)
        if (p.good) {
            bool same = p.minute == s.cur;
            long n2 = same ? s.run + 1 : 1;
            if (!same) s.cur.assign(p.minute);
            s.run = n2;
            if (n2 > s.best_n) {
                s.best_n = n2;
                s.best = s.cur;
            }
        }
}
void format_results(Token &t)
{
    t.out.clear();
    for (const Parsed &p : t.parsed) {
        if (!p.good) {
            t.out += "bad\n";
            continue;
        }
        long c = p.status / 100;
        t.out += c == 2 ? "2xx\n" : c == 3 ? "3xx\n" : c == 4 ? "4xx\n" : "5xx\n";
    }
}

std::string shortest(double d)
{
    char b[64];
    auto r = std::to_chars(b, b + sizeof b, d);
    std::string s(b, r.ptr);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0"; // stc prints 0.0, not 0
    return s;
}

// The input in blocks; a token gets whole lines only.
struct Reader {
    std::FILE *f;
    std::string carry;
    bool eof = false;
    size_t per_token;

    bool next(Token &t)
    {
        t.text.swap(carry);
        carry.clear();
        t.lines.clear();
        size_t nl = 0, pos = 0;
        for (;;) {
            // count whole lines already held
            for (;;) {
                const char *q = static_cast<const char *>(std::memchr(t.text.data() + pos, '\n', t.text.size() - pos));
                if (!q) break;
                pos = (size_t)(q - t.text.data()) + 1;
                if (++nl == per_token) break;
            }
            if (nl == per_token || eof) break;
            char buf[65536];
            size_t got = std::fread(buf, 1, sizeof buf, f);
            if (got == 0) {
                eof = true;
                if (pos < t.text.size()) { // a last line without its newline
                    t.text += '\n';
                }
                continue;
            }
            t.text.append(buf, got);
        }
        carry.assign(t.text, pos, std::string::npos);
        t.text.resize(pos);
        for (size_t i = 0; i < t.text.size();) {
            size_t j = t.text.find('\n', i);
            t.lines.emplace_back(t.text.data() + i, j - i);
            i = j + 1;
        }
        return !t.lines.empty();
    }
};

} // namespace

int main(int argc, char **argv)
{
    int threads = 1, tokens = 0;
    size_t per_token = 128;
    bool split = false;
    const char *path = nullptr;
    for (int i = 1; i < argc; i++) {
        std::string_view a = argv[i];
        if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
        else if (a == "--lines-per-token" && i + 1 < argc) per_token = (size_t)std::atol(argv[++i]);
        else if (a == "--tokens" && i + 1 < argc) tokens = std::atoi(argv[++i]);
        else if (a == "--split") split = true;
        else if (!path && a[0] != '-') path = argv[i];
        else {
            std::fprintf(stderr, "usage: logstats_tbb [--threads T] [--lines-per-token N] [--tokens K] [--split] LOG\n");
            return 64;
        }
    }
    if (!path || threads < 1 || per_token < 1) {
        std::fprintf(stderr, "usage: logstats_tbb [--threads T] [--lines-per-token N] [--tokens K] [--split] LOG\n");
        return 64;
    }
    if (tokens < 1) tokens = 4 * threads;
    std::FILE *f = std::fopen(path, "rb");
    if (!f) {
        std::perror(path);
        return 1;
    }
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, (size_t)threads);
    Reader in{f, {}, false, per_token};
    States s;
    using tbb::filter_mode;
    auto read = tbb::make_filter<void, Token *>(filter_mode::serial_in_order, [&](tbb::flow_control &fc) -> Token * {
        auto t = std::make_unique<Token>();
        if (!in.next(*t)) {
            fc.stop();
            return nullptr;
        }
        return t.release();
    });
    auto parse_all = tbb::make_filter<Token *, Token *>(filter_mode::parallel, [](Token *t) {
        t->parsed.resize(t->lines.size());
        for (size_t i = 0; i < t->lines.size(); i++) t->parsed[i] = parse(t->lines[i]);
        return t;
    });
    auto stage = [&](void (*fold)(States &, const Token &)) {
        return tbb::make_filter<Token *, Token *>(filter_mode::serial_in_order, [&s, fold](Token *t) {
            fold(s, *t);
            return t;
        });
    };
    auto fold_all = tbb::make_filter<Token *, Token *>(filter_mode::serial_in_order, [&s](Token *t) {
        fold_lines(s, *t);
        fold_classes(s, *t);
        fold_bytes(s, *t);
        fold_latency(s, *t);
        fold_busiest(s, *t);
        format_results(*t);
        return t;
    });
    auto format = tbb::make_filter<Token *, Token *>(filter_mode::serial_in_order, [](Token *t) {
        format_results(*t);
        return t;
    });
    auto write = tbb::make_filter<Token *, void>(filter_mode::serial_in_order, [](Token *t) {
        std::fwrite(t->out.data(), 1, t->out.size(), stdout);
        delete t;
    });
    if (split)
        tbb::parallel_pipeline((size_t)tokens, read & parse_all & stage(fold_lines) & stage(fold_classes) &
                                                   stage(fold_bytes) & stage(fold_latency) & stage(fold_busiest) &
                                                   format & write);
    else
        tbb::parallel_pipeline((size_t)tokens, read & parse_all & fold_all & write);
    std::fclose(f);
    std::printf("lines = (%ld, %ld)\n", s.n, s.bad);
    std::printf("classes = (%ld, %ld, %ld, %ld)\n", s.cls[0], s.cls[1], s.cls[2], s.cls[3]);
    std::printf("bytes = %ld\n", s.bytes);
    std::printf("latency = (%s, %s)\n", shortest(s.sum).c_str(), shortest(s.max).c_str());
    std::printf("busiest = (\"%s\", %ld, \"%s\", %ld)\n", s.cur.c_str(), s.run, s.best.c_str(), s.best_n);
    return std::ferror(stdout) ? 1 : 0;
}

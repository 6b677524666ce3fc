#!/usr/bin/env python3
"""The ysb example's computation in plain Python, to check ysb.stc: reads the
ad table then the JSON events (gen_events) on stdin or from the file named by
argv[1], and prints the windows as they close, then the state of `windows`
in STCLang's text syntax ("windows = (SEEN, {W: {C: N, ...}, ...}, LATE)"),
exactly as `stc run` prints them.  Windows: 10 s of event time, closed once
an event time at or past their end plus 2 s has been seen."""
import json
import sys

WINDOW, LATENESS = 10000, 2000


def main():
    f = open(sys.argv[1], "rb") if len(sys.argv) > 1 else sys.stdin.buffer
    ads = {}
    seen, late, open_ = 0, 0, {}
    out = sys.stdout
    for raw in f:
        line = raw.rstrip(b"\n").decode("ascii")
        if not line.startswith("{"):
            ad, campaign = line.split()[:2]
            ads[ad] = campaign
            continue
        e = json.loads(line)
        if e.get("event_type", "") != "view":
            continue
        c = ads.get(e.get("ad_id", ""), "")
        if c == "":
            continue
        t = int(e["event_time"])
        w = t - t % WINDOW
        now = max(seen, t)
        if w + WINDOW + LATENESS <= seen:
            late += 1
            seen = now
            continue
        seen = now
        cs = open_.setdefault(w, {})
        cs[c] = cs.get(c, 0) + 1
        for k in sorted(k for k in open_ if k + WINDOW + LATENESS <= now):
            for camp, n in sorted(open_.pop(k).items()):
                out.write("%d %s %d\n" % (k, camp, n))
    inner = lambda cs: "{" + ", ".join('"%s": %d' % (c, n) for c, n in sorted(cs.items())) + "}"
    out.write("windows = (%d, {%s}, %d)\n" % (seen, ", ".join("%d: %s" % (k, inner(open_[k])) for k in sorted(open_)), late))


main()

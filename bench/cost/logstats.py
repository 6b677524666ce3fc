# logstats.py - examples/logstats/logstats.stc's aggregation in plain
# Python 3, the yardstick of bench/cost.sh (same output as logstats.awk).
import sys

def main():
    out = sys.stdout
    write = out.write
    n = bad = 0
    cls = [0, 0, 0, 0]
    nbytes = 0
    lat_sum = lat_max = 0.0
    cur, run, best, best_n = "", 0, "", 0
    for line in sys.stdin.buffer:
        n += 1
        w = line.split()
        status = int(w[4]) if len(w) == 7 else 0
        if len(w) != 7 or status < 200 or status > 599:
            bad += 1
            write("bad\n")
            continue
        c = status // 100
        cls[c - 2] += 1
        write("%dxx\n" % c)
        nbytes += int(w[5])
        ms = float(w[6])
        lat_sum += ms
        if ms > lat_max:
            lat_max = ms
        m = w[0][:16].decode()
        run = run + 1 if m == cur else 1
        cur = m
        if run > best_n:
            best_n, best = run, m
    write("lines = (%d, %d)\n" % (n, bad))
    write("classes = (%d, %d, %d, %d)\n" % tuple(cls))
    write("bytes = %d\n" % nbytes)
    write("latency = (%r, %r)\n" % (lat_sum, lat_max))
    write('busiest = ("%s", %d, "%s", %d)\n' % (cur, run, best, best_n))

main()

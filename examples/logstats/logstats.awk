# logstats.awk - logstats.stc's aggregation in awk: the independent check of
# test.sh and the yardstick of bench/cost.sh. One result line per input
# line, then the five final states (latency printed with %.17g; stc prints
# the shortest form). awk's default field splitting (runs of blanks)
# matches words() on these lines, and awk adds the latencies in the same
# order as the latency thread, so the sum is the same double.
NF != 7 || $5 + 0 < 200 || $5 + 0 > 599 { print "bad"; bad++; next }
{
    c = int($5 / 100); cls[c]++; print c "xx"
    bytes += $6
    sum += $7; if ($7 + 0 > max) max = $7 + 0
    m = substr($1, 1, 16)
    run = (m == cur) ? run + 1 : 1; cur = m
    if (run > best_n) { best_n = run; best = m }
}
END {
    printf "lines = (%d, %d)\n", NR, bad
    printf "classes = (%d, %d, %d, %d)\n", cls[2], cls[3], cls[4], cls[5]
    printf "bytes = %.0f\n", bytes
    printf "latency = (%.17g, %.17g)\n", sum, max
    printf "busiest = (\"%s\", %d, \"%s\", %d)\n", cur, run, best, best_n
}

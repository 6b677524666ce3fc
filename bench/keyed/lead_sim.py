#!/usr/bin/env python3
"""lead_sim.py - how many batches in flight two keyed shard stages need.

Shard stages run one after another (docs/DESIGN.md 7b, "Lead between
shards"): batch k reaches shard 1 only after shard 0 has run it, and a
new batch starts only when a token is free (the batch k - T has left
shard 1).  Each item's key picks its shard at random; an item costs one
unit in its own shard and nothing in the other.  With one worker per
shard, the speedup over one worker is N / makespan.

    python3 bench/keyed/lead_sim.py [ITEMS]
"""
import random
import sys


def speedup(n, tokens, batch, seed=1):
    rnd = random.Random(seed)
    shard = [rnd.randint(0, 1) for _ in range(n)]
    nb = n // batch
    t0 = [0.0] * nb  # when shard 0 finishes batch k
    t1 = [0.0] * nb  # when shard 1 finishes batch k (its token is free)
    for k in range(nb):
        items = shard[k * batch:(k + 1) * batch]
        w0 = items.count(0)
        start = max(t0[k - 1] if k else 0.0, t1[k - tokens] if k >= tokens else 0.0)
        t0[k] = start + w0
        t1[k] = max(t1[k - 1] if k else 0.0, t0[k]) + (batch - w0)
    return nb * batch / t1[-1]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    print("tokens  speedup at batches of 1, 2, 4 items (%d items, 2 shards)" % n)
    for tokens in (7, 11, 15, 23, 39, 71):
        print("%6d  %s" % (tokens, "  ".join("%.3f" % speedup(n, tokens, b) for b in (1, 2, 4))))
    print("a stream's batches of ~50 keys, 5 tokens: %.3f" % speedup(10 * n, 5, 50))


if __name__ == "__main__":
    main()

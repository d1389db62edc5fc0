import sys, statistics as st, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if not line.startswith("TRACE"): continue
    f = line.split()
    cfg, rep = f[3], int(f[4]); ev = float(f[5].split("=")[1]); v = list(map(int, f[7:]))
    rows[(cfg, rep)].append((ev, v))
def med(xs): return st.median(xs) if xs else float('nan')
print("%-75s %3s %6s %7s | %6s %6s %7s %6s %6s %6s %6s %6s | %6s %6s %7s %6s %7s" % ("config", "rep", "ev_us", "entry_ns", "init", "data0", "kstep", "mma", "epi", "drain", "end", "maxend", "p_k0", "p_k15", "presync", "p_exit", "p_start"))
for (cfg, rep), bl in sorted(rows.items()):
    if rep == 0: continue
    ev = bl[0][0]
    gts = [v[0] for _, v in bl]
    c = lambda v, i: v[i] - v[1] if v[i] else float('nan')
    init = med([c(v, 3) for _, v in bl]); d0 = med([c(v, 8) for _, v in bl])
    ks = med([(v[23] - v[8]) / 15 for _, v in bl if v[23]])
    mma = med([c(v, 4) for _, v in bl]); epi = med([v[5] - v[4] for _, v in bl])
    drain = med([v[6] - v[5] for _, v in bl]); end = med([c(v, 7) for _, v in bl])
    mx = max(c(v, 7) for _, v in bl)
    pk0 = med([c(v, 26) for _, v in bl]); pk15 = med([c(v, 41) for _, v in bl])
    pre = med([c(v, 43) for _, v in bl]); pexit = med([c(v, 42) for _, v in bl]); pstart = med([c(v, 44) for _, v in bl])
    short = cfg.replace("BM=64,BN=128,BK=64,", "").replace("CONSUMERS=1,WS=1,", "")
    print("%-75s %3d %6.2f %7d | %6d %6d %7.1f %6d %6d %6d %6d %6d | %6d %6d %7d %6d %7d" % (short, rep, ev, max(gts) - min(gts), init, d0, ks, mma, epi, drain, end, mx, pk0, pk15, pre, pexit, pstart))

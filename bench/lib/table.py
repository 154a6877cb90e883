#!/usr/bin/python3
"""Prints the Markdown table of a benchmark suite from the JSON its tools wrote.

Every row is a figure measured in the run against a baseline measured in the
same run, with its spread (one standard deviation; "-" when a figure was
measured once). The ratio's spread combines the relative spreads of both
figures: r * sqrt((sa/a)^2 + (sb/b)^2).

Subcommands (each prints one table on stdout; errors go to stderr, exit 1):

  hyperfine --baseline NAME [--second NAME] FILE.json...
      FILE.json: `hyperfine --export-json`, one per group (a workload); the
      group's name is the file's stem. Commands are named with `-n`. An
      optional FILE.meta.json beside it gives per group {"events": N} (adds
      "added ns/event over <second or baseline>", from wall time with its
      spread and from CPU time, which a loaded machine disturbs less; with
      "rate": true, M
      events/s instead), {"bytes": {NAME: n}} (the trace bytes of a command)
      and {"rss_kib": {NAME: n}} (a command's peak RSS), {"out_bytes":
      {NAME: n}} (bytes a command wrote: per event in the table); {"per": N,
      "per_name": "process"} adds the ms added per process (per N).

  gbench --baseline CONFIG [--events-per-item K] FILE.json...
      FILE.json: a Google Benchmark `--benchmark_format=json` run with
      `--benchmark_repetitions` and aggregates; the file's stem is the
      configuration. Per benchmark: ns per item (1e9 / items_per_second, CPU),
      ratio to the baseline configuration's, and the ns added per event over
      it ((ns - base) / K).

  codec FILE.json
      codec_comparison_benchmark's JSON: per stream and codec the compression
      ratio (raw 16-bit words / compressed bytes), parlot2's ratio over it,
      compressed bytes per million events, and compression and decompression
      speed in M events/s.

  samples --baseline NAME [--unit U] [--per WHAT] FILE.tsv
      FILE.tsv: lines "GROUP<tab>P<tab>NAME<tab>VALUE", repeated measurements
      a suite took itself (a program's own ns per call, a peak RSS). Prints
      per group and NAME the mean, spread, ratio to the baseline NAME and
      (mean - baseline) / P (P: calls, threads, as --per names it).
"""

import argparse
import json
import math
import os
import statistics
import sys


def fail(msg):
    print(f"table.py: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def fmt(x, digits=3):
    """A number with `digits` significant digits, no exponent below 1e9."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    places = max(0, digits - 1 - mag)
    return f"{x:,.{places}f}"


def pm(mean, sd, digits=3):
    return fmt(mean, digits) if sd is None else f"{fmt(mean, digits)} ± {fmt(sd, 2)}"


def ratio(a, sa, b, sb):
    """a / b and its spread from the relative spreads of a and b."""
    if not b:
        return None, None
    r = a / b
    if sa is None or sb is None or a == 0:
        return r, None
    return r, abs(r) * math.sqrt((sa / a) ** 2 + (sb / b) ** 2)


def diff(a, sa, b, sb, per):
    if sa is None or sb is None:
        return (a - b) / per, None
    return (a - b) / per, math.sqrt(sa**2 + sb**2) / per


def print_table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")


def stem(path):
    base = os.path.basename(path)
    return base[: -len(".json")] if base.endswith(".json") else base


def cmd_hyperfine(args):
    rows = []
    groups = []
    for path in args.files:
        if path.endswith(".meta.json"):
            continue  # a group's meta file, read with its group
        data = load(path)
        results = {r["command"]: r for r in data.get("results", [])}
        if args.baseline not in results:
            fail(f"{path}: no command named '{args.baseline}'")
        meta_path = path[: -len(".json")] + ".meta.json"
        meta = load(meta_path) if os.path.exists(meta_path) else {}
        groups.append((stem(path), results, meta))
    any_added = any("events" in m and not m.get("rate") for _, _, m in groups)
    any_rate = any(m.get("rate") for _, _, m in groups)
    any_rss = any("rss_kib" in m for _, _, m in groups)
    any_bytes = any("bytes" in m for _, _, m in groups)
    any_out = any("out_bytes" in m for _, _, m in groups)
    per_names = {m["per_name"] for _, _, m in groups if "per_name" in m}
    second = args.second
    header = ["group", "command", "wall s", f"× {args.baseline}"]
    if second:
        header.append(f"× {second}")
    header.append("CPU s")
    if any_added:
        header.append(f"added ns/event over {second or args.baseline}")
        header.append("added CPU ns/event")
    for per_name in sorted(per_names):
        header.append(f"added ms per {per_name} over {second or args.baseline}")
    if any_rate:
        header.append("M events/s")
    if any_rss:
        header.append("peak RSS KiB")
    if any_bytes:
        header.append("trace bytes")
    if any_out:
        header.append("output bytes/event")
    for name, results, meta in groups:
        base = results[args.baseline]
        ref = results.get(second) if second else base
        events = meta.get("events")
        for cmd, r in results.items():
            sd = r["stddev"]
            row = [name, cmd, pm(r["mean"], sd)]
            row.append("1" if cmd == args.baseline else
                       pm(*ratio(r["mean"], sd, base["mean"], base["stddev"])))
            if second:
                row.append("1" if cmd == second else
                           pm(*ratio(r["mean"], sd, ref["mean"], ref["stddev"])) if ref else "-")
            row.append(fmt(r["user"] + r["system"]))
            if any_added:
                if events and not meta.get("rate") and ref and cmd not in (args.baseline, second):
                    row.append(pm(*diff(r["mean"] * 1e9, _ns(sd), ref["mean"] * 1e9,
                                        _ns(ref["stddev"]), events)))
                    cpu = r["user"] + r["system"] - ref["user"] - ref["system"]
                    row.append(fmt(cpu * 1e9 / events))
                else:
                    row.extend(["-", "-"])
            for per_name in sorted(per_names):
                if meta.get("per_name") == per_name and cmd not in (args.baseline, second):
                    row.append(pm(*diff(r["mean"] * 1e3, _ms(sd), ref["mean"] * 1e3,
                                        _ms(ref["stddev"]), meta.get("per", 1))))
                else:
                    row.append("-")
            if any_rate:
                row.append(fmt(events / r["mean"] / 1e6) if events and meta.get("rate") else "-")
            if any_rss:
                v = meta.get("rss_kib", {}).get(cmd)
                row.append(f"{v:,}" if v is not None else "-")
            if any_bytes:
                b = meta.get("bytes", {}).get(cmd)
                row.append(f"{b:,}" if b is not None else "-")
            if any_out:
                b = meta.get("out_bytes", {}).get(cmd)
                row.append(fmt(b / events) if b is not None and events else "-")
            rows.append(row)
    print_table(header, rows)


def _ms(sd):
    return None if sd is None else sd * 1e3


def _ns(sd):
    return None if sd is None else sd * 1e9


def gbench_aggregates(path):
    """{benchmark name: (ns per item mean, sd)} from a Google Benchmark JSON."""
    data = load(path)
    out = {}
    for b in data.get("benchmarks", []):
        kind = b.get("aggregate_name")
        name = b.get("run_name", b["name"])
        rate = b.get("items_per_second")
        if rate is None:
            continue
        entry = out.setdefault(name, {})
        if kind in ("mean", "stddev"):
            entry[kind] = rate
        elif kind is None:  # no aggregates: one repetition
            entry.setdefault("runs", []).append(rate)
    result = {}
    for name, e in out.items():
        if "mean" in e:
            m, s = e["mean"], e.get("stddev")
        else:
            runs = e["runs"]
            m = statistics.fmean(runs)
            s = statistics.stdev(runs) if len(runs) > 1 else None
        # ns per item = 1e9 / rate; relative spread carries over.
        ns = 1e9 / m
        result[name] = (ns, None if s is None else ns * s / m)
    return result


def cmd_gbench(args):
    configs = [(stem(p), gbench_aggregates(p)) for p in args.files]
    base = dict(configs).get(args.baseline)
    if base is None:
        fail(f"no file for the baseline configuration '{args.baseline}'")
    header = ["benchmark", "config", "ns per item", f"× {args.baseline}",
              f"added ns/event over {args.baseline}"]
    rows = []
    for name in base:
        b, sb = base[name]
        for config, figures in configs:
            if name not in figures:
                continue
            v, sv = figures[name]
            if config == args.baseline:
                rows.append([name, config, pm(v, sv), "1", "-"])
                continue
            added = pm(*diff(v, sv, b, sb, args.events_per_item))
            rows.append([name, config, pm(v, sv), pm(*ratio(v, sv, b, sb)), added])
    print_table(header, rows)


def cmd_codec(args):
    data = load(args.file)
    # name: BM_Compress/<codec>/<stream>; aggregates mean/stddev.
    figures = {}
    for b in data.get("benchmarks", []):
        parts = b.get("run_name", b["name"]).split("/")
        if len(parts) < 3:
            continue
        op, codec, stream = parts[0], parts[1], "/".join(parts[2:])
        kind = b.get("aggregate_name", "mean")
        e = figures.setdefault((stream, codec), {})
        if kind != "mean":
            if kind == "stddev" and "events" in b:
                e[f"{op}.stddev"] = b["events"] / 1e6
            continue
        e["ratio"] = b.get("ratio")
        if b.get("stream_events"):
            e["per_m"] = b["compressed_bytes"] / b["stream_events"] * 1e6
        if "events" in b:
            e[f"{op}.mean"] = b["events"] / 1e6
    streams = list(dict.fromkeys(s for s, _ in figures))
    header = ["stream", "codec", "ratio", "parlot2's ratio / this", "bytes per M events",
              "compress M events/s", "decompress M events/s"]
    rows = []
    for s in streams:
        ref = figures.get((s, "parlot2"), {}).get("ratio")
        for (stream, codec), e in figures.items():
            if stream != s:
                continue
            r = e.get("ratio")
            rows.append([s, codec, fmt(r, 4), fmt(ref / r) if r and ref else "-",
                         fmt(e.get("per_m")),
                         pm(e.get("BM_Compress.mean"), e.get("BM_Compress.stddev")),
                         pm(e.get("BM_Decompress.mean"), e.get("BM_Decompress.stddev"))])
    print_table(header, rows)


def cmd_samples(args):
    groups = {}
    try:
        with open(args.file, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 4:
                    fail(f"{args.file}:{n}: expected GROUP, P, NAME, VALUE")
                g, per, name, value = fields
                entry = groups.setdefault(g, {"per": float(per), "rows": {}})
                entry["rows"].setdefault(name, []).append(float(value))
    except (OSError, ValueError) as e:
        fail(f"{args.file}: {e}")
    header = ["group", "configuration", f"mean {args.unit}", f"× {args.baseline}",
              f"added {args.unit} per {args.per} over {args.baseline}"]
    rows = []
    for gname, g in groups.items():
        stats = {name: (statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else None)
                 for name, xs in g["rows"].items()}
        if args.baseline not in stats:
            fail(f"{args.file}: {gname}: no '{args.baseline}' row")
        b, sb = stats[args.baseline]
        for name, (m, s) in stats.items():
            if name == args.baseline:
                rows.append([gname, name, pm(m, s), "1", "-"])
                continue
            rows.append([gname, name, pm(m, s), pm(*ratio(m, s, b, sb)),
                         pm(*diff(m, s, b, sb, g["per"]))])
    print_table(header, rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hyperfine")
    h.add_argument("--baseline", required=True)
    h.add_argument("--second")
    h.add_argument("files", nargs="+")
    g = sub.add_parser("gbench")
    g.add_argument("--baseline", required=True)
    g.add_argument("--events-per-item", type=float, default=1.0)
    g.add_argument("files", nargs="+")
    c = sub.add_parser("codec")
    c.add_argument("file")
    s = sub.add_parser("samples")
    s.add_argument("--baseline", required=True)
    s.add_argument("--unit", default="ns")
    s.add_argument("--per", default="run", help="what a group's 'per' counts (call, thread)")
    s.add_argument("file")
    args = p.parse_args()
    {"hyperfine": cmd_hyperfine, "gbench": cmd_gbench, "codec": cmd_codec,
     "samples": cmd_samples}[args.cmd](args)


if __name__ == "__main__":
    main()

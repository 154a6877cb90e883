#!/usr/bin/python3
"""Times commands interleaved with hyperfine, and prints their table.

On a loaded machine the load changes from one minute to the next, so
`hyperfine` running every run of one command before the next command
compares different loads. Here every round runs each command once (one
`hyperfine --runs 1` with all of them, the order rotated each round so no
command always runs first), and a command's ratio to the baseline is the
median over the rounds of the ratio within the round: both measured under
the same load.

Subcommands (errors go to stderr, exit 1):

  run --rounds N --out FILE.json [--prepare CMD] -n NAME COMMAND [-n NAME COMMAND]...
      Round 0 is a warm-up and is dropped; then N rounds. COMMAND is run
      without a shell (hyperfine -N): a program and its arguments, split at
      blanks, `env VAR=value ...` to set the environment. --prepare runs
      before every command (hyperfine --prepare). FILE.json:
      {"rounds": N, "order": [names], "load": [load average per round],
       "results": {NAME: {"wall": [s per round], "cpu": [user+sys s per round]}}}

  table --baseline NAME FILE.json...
      One Markdown table, a group per file (its stem): per command the mean
      wall and CPU (user+sys) seconds with one standard deviation, and the
      median over rounds of the ratio to the baseline's time in the same
      round, for wall and for CPU. An optional FILE.meta.json beside a file
      gives {"events": {NAME: n}} (events of a traced run) and
      {"labels": {NAME: "text"}} (a command's name in the table).
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile


def fail(msg):
    print(f"interleave.py: {msg}", file=sys.stderr)
    sys.exit(1)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def one_round(commands, prepare, order):
    """Runs each command once in `order`; returns {name: (wall s, cpu s)}."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        args = ["hyperfine", "-N", "--style", "none", "--output", "null", "--runs", "1",
                "--export-json", out.name]
        if prepare:
            args += ["--prepare", prepare]
        for name in order:
            args += ["-n", name, commands[name]]
        done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            fail(f"hyperfine failed:\n{done.stderr}")
        data = load_json(out.name)
    times = {}
    for r in data["results"]:
        times[r["command"]] = (r["times"][0], r["user"] + r["system"])
    return times


def cmd_run(args):
    if not args.n:
        fail("no command (-n NAME COMMAND)")
    commands = dict(args.n)
    names = [name for name, _ in args.n]
    if len(commands) != len(names):
        fail("two commands with the same name")
    results = {name: {"wall": [], "cpu": []} for name in names}
    load = []
    for round_no in range(args.rounds + 1):
        k = round_no % len(names)
        order = names[k:] + names[:k]
        times = one_round(commands, args.prepare, order)
        if round_no == 0:
            continue  # warm-up: caches, page cache, CPU frequency
        load.append(os.getloadavg()[0])
        for name in names:
            wall, cpu = times[name]
            results[name]["wall"].append(wall)
            results[name]["cpu"].append(cpu)
        print(f"interleave.py: round {round_no}/{args.rounds} done, load {load[-1]:.2f}",
              file=sys.stderr)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"rounds": args.rounds, "order": names, "load": load, "results": results}, f,
                  indent=1)


def fmt(x, digits=3):
    """A number with `digits` significant digits, no exponent."""
    if x is None:
        return "-"
    if x == 0:
        return "0"
    places = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{places}f}"


def mean_sd(values):
    m = statistics.fmean(values)
    return m, (statistics.stdev(values) if len(values) > 1 else None)


def pm(values):
    m, sd = mean_sd(values)
    return fmt(m) if sd is None else f"{fmt(m)} ± {fmt(sd, 2)}"


def paired_ratio(values, base):
    """Median over rounds of values[i] / base[i], and min-max of those ratios."""
    ratios = [v / b for v, b in zip(values, base) if b > 0]
    if not ratios:
        return "-"
    med = statistics.median(ratios)
    if len(ratios) < 3:
        return f"{med:.2f}"
    return f"{med:.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def cmd_table(args):
    header = ["program", "build", "wall s", f"× {args.baseline} (wall)", "CPU s",
              f"× {args.baseline} (CPU)", "events traced"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for path in args.files:
        if path.endswith(".meta.json"):
            continue
        data = load_json(path)
        results = data["results"]
        if args.baseline not in results:
            fail(f"{path}: no command named '{args.baseline}'")
        meta_path = path[: -len(".json")] + ".meta.json"
        meta = load_json(meta_path) if os.path.exists(meta_path) else {}
        events = meta.get("events", {})
        labels = meta.get("labels", {})
        group = os.path.basename(path)[: -len(".json")]
        base = results[args.baseline]
        for name in data["order"]:
            r = results[name]
            row = [group, labels.get(name, name), pm(r["wall"]),
                   "1" if name == args.baseline else paired_ratio(r["wall"], base["wall"]),
                   pm(r["cpu"]),
                   "1" if name == args.baseline else paired_ratio(r["cpu"], base["cpu"]),
                   f"{events[name]:,}" if isinstance(events.get(name), int) else "-"]
            print("| " + " | ".join(row) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("--rounds", type=int, required=True)
    run.add_argument("--out", required=True)
    run.add_argument("--prepare")
    run.add_argument("-n", nargs=2, action="append", metavar=("NAME", "COMMAND"))
    table = sub.add_parser("table")
    table.add_argument("--baseline", required=True)
    table.add_argument("files", nargs="+")
    args = parser.parse_args()
    if args.cmd == "run":
        if args.rounds < 1:
            fail("--rounds must be at least 1")
        cmd_run(args)
    else:
        cmd_table(args)


if __name__ == "__main__":
    main()

"""The Python binding against parlot-read on the same traces: every number
the package gives must be the command's."""
import json
import os
import re
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import parlot
from conftest import read


def jsonl_events(trace_dir):
    """`parlot-read trace --format jsonl`'s events (marks left out)."""
    rows = [json.loads(line) for line in read("trace", "--format", "jsonl", trace_dir).splitlines()]
    return [r for r in rows if r["kind"] != "mark"]


def test_events_equal_trace_jsonl(trace_dir):
    events = parlot.open(trace_dir).events()
    expected = jsonl_events(trace_dir)
    assert len(events) == len(expected) > 0
    assert list(events["pid"]) == [r["pid"] for r in expected]
    assert list(events["tid"]) == [r["tid"] for r in expected]
    assert list(events["depth"]) == [r["depth"] for r in expected]
    assert list(events["kind"].astype(str)) == [r["kind"] for r in expected]
    assert list(events["function"].astype(str)) == [r["function"] for r in expected]
    assert [f if isinstance(f, str) else "" for f in events["file"]] == [r["file"] for r in expected]
    assert [0 if pd.isna(x) else int(x) for x in events["line"]] == [r["line"] for r in expected]


def test_events_columns_and_types(quicksort_trace):
    t = parlot.open(quicksort_trace)
    events = t.events()
    for column in ("rank", "pid", "thread", "depth", "kind", "function", "time_ns", "file", "line"):
        assert column in events.columns
    assert isinstance(events["function"].dtype, pd.CategoricalDtype)
    assert set(events["kind"].cat.categories) == {"enter", "exit"}
    # One process, one thread per worker plus main, numbered from 0.
    assert events["rank"].unique().tolist() == [0]
    assert sorted(events["thread"].unique()) == list(range(len(t.threads())))
    # Every thread's calls are well nested: as many exits as entries.
    counts = events.groupby(["thread", "kind"], observed=True).size().unstack()
    assert (counts["enter"] == counts["exit"]).all()
    # quicksort_threads is compiled with -g: its own functions have a file and line.
    sorter = events[events["function"] == "main"].iloc[0]
    assert sorter["file"].endswith("quicksort_threads.c") and sorter["line"] > 0


def test_times_are_those_of_the_report(trace_dir):
    """Self time and calls recomputed from time_ns equal `report --by function`."""
    events = parlot.open(trace_dir).events()
    assert events["time_ns"].notna().all()
    self_ns, calls, max_depth = {}, {}, {}
    for _, thread in events.groupby(["pid", "tid"], sort=False):
        times = thread["time_ns"].to_numpy(dtype=np.int64)
        assert (np.diff(times) >= 0).all(), "times go back within a thread"
        names = thread["function"].astype(str).to_numpy()
        enters = (thread["kind"] == "enter").to_numpy()
        depths = thread["depth"].to_numpy()
        stack = []
        for i in range(len(times)):
            if enters[i]:
                stack.append(names[i])
                calls[names[i]] = calls.get(names[i], 0) + 1
                max_depth[names[i]] = max(max_depth.get(names[i], 0), int(depths[i]) + 1)
            else:
                stack.pop()
            if stack and i + 1 < len(times):
                self_ns[stack[-1]] = self_ns.get(stack[-1], 0) + int(times[i + 1] - times[i])
    report = report_rows(trace_dir)
    assert set(report) == set(calls)
    for name, row in report.items():
        assert row["calls"] == calls[name], name
        assert row["self"] == self_ns.get(name, 0), name
        assert row["max_depth"] == max_depth[name], name


def report_rows(trace_dir):
    """`parlot-read report --by function`: function -> its numbers."""
    rows = {}
    for line in read("report", "--by", "function", trace_dir).splitlines():
        if line.startswith("#") or line.lstrip().startswith("total"):
            continue
        total, self_, calls, depth, name = line.split(maxsplit=4)
        rows[name] = {"total": int(total), "self": int(self_), "calls": int(calls),
                      "max_depth": int(depth)}
    return rows


def test_stats_equal_report(trace_dir):
    stats = parlot.open(trace_dir).stats()
    assert list(stats.columns[:5]) == ["function", "calls", "total", "self", "max_depth"]
    assert stats.attrs["unit"] == "ns"
    expected = report_rows(trace_dir)
    got = {r.function: {"total": r.total, "self": r.self, "calls": r.calls,
                        "max_depth": r.max_depth} for r in stats.itertuples()}
    assert got == expected
    assert (np.diff(stats["total"].to_numpy()) <= 0).all()  # the report's order


def test_loops_equal_command(trace_dir):
    loops = parlot.open(trace_dir).loops()
    expected = []
    for line in read("loops", "--all", "--no-simplify", trace_dir).splitlines():
        m = re.fullmatch(r"(.*) \((\d+) events\): (.*)", line)
        assert m, line
        expected.append((m.group(1), int(m.group(2)), m.group(3)))
    assert list(zip(loops["label"], loops["events"], loops["loops"])) == expected


def test_loops_max_body(quicksort_trace):
    t = parlot.open(quicksort_trace)
    expected = [line.split(": ", 1)[1] for line in
                read("loops", "--all", "--no-simplify", "--max-body", "2", quicksort_trace).splitlines()]
    assert list(t.loops(max_body=2)["loops"]) == expected
    with pytest.raises(ValueError):
        t.loops(max_body=0)


def test_stacks_equal_command(trace_dir):
    stacks = parlot.open(trace_dir).stacks()
    assert stacks.text == read("stacks", "--no-sites", trace_dir)
    assert str(stacks) == stacks.text
    assert stacks.dot == read("stacks", "--no-sites", "--format", "dot", trace_dir)
    assert list(stacks.frame["depth"]) == [len(s) for s in stacks.frame["stack"]]


def test_stacks_of_a_killed_process(fork_trace):
    """Child 4 hung in wait_forever when it was killed: its stack shows it."""
    frame = parlot.open(fork_trace).stacks().frame
    hung = [s for s in frame["stack"] if "wait_forever" in s]
    assert len(hung) == 1
    assert hung[0][:3] == ["main", "spawn_children", "child_work"]


@pytest.mark.parametrize("by", ["trace", "loops", "edges", "stack"])
def test_classes_equal_command(trace_dir, by):
    classes = parlot.open(trace_dir).classes(by=by)
    expected = []
    for line in read("classes", "--no-cause", "--no-simplify", "--by", by, trace_dir).splitlines():
        m = re.fullmatch(r"class (\S): (.*) \((\d+) threads?\), representative (.*)", line)
        if m:
            expected.append((m.group(1), m.group(2), int(m.group(3)), m.group(4)))
    assert list(zip(classes["label"], classes["threads"], classes["size"],
                    classes["representative"])) == expected
    assert list(classes["size"]) == [len(m) for m in classes["members"]]


def test_classes_find_the_outlier(fork_trace):
    classes = parlot.open(fork_trace).classes(by="loops")
    assert len(classes) >= 2
    with pytest.raises(ValueError):
        parlot.open(fork_trace).classes(by="colour")


@pytest.mark.parametrize("chunk", [1, 777, 100000])
def test_chunks_concatenate_to_the_frame(trace_dir, chunk):
    t = parlot.open(trace_dir)
    full = t.events()
    if chunk == 1:
        full = full.head(3000)  # a chunk per event: only the start
        pieces = []
        for c in t.events(chunk=1):
            pieces.append(c)
            if len(pieces) == 3000:
                break
    else:
        pieces = list(t.events(chunk=chunk))
    assert all(0 < len(c) <= chunk for c in pieces)
    # Each chunk holds the events of one thread only.
    assert all(c["tid"].nunique() == 1 for c in pieces)
    joined = pd.concat(pieces, ignore_index=True)
    pd.testing.assert_frame_equal(joined, full)


def test_columns_are_numpy(quicksort_trace):
    t = parlot.open(quicksort_trace)
    total = 0
    for thread, c in t.columns(chunk=4096):
        assert c["function_id"].dtype == np.uint32 and c["time_ns"].dtype == np.int64
        assert len(c["function_id"]) <= 4096
        total += len(c["function_id"])
    assert total == len(t.events()) == int(t.threads()["events"].sum())


def test_processes_and_threads(trace_dir):
    t = parlot.open(trace_dir)
    info = read("info", trace_dir)
    processes = t.processes()
    for pid in processes["pid"]:
        assert str(pid) in info
    threads = t.threads()
    assert len(threads) == sum(processes["threads"])
    assert threads["events"].sum() == len(t.events())


def test_mpi_ranks(mpi_trace):
    t = parlot.open(mpi_trace)
    assert t.ranked
    events = t.events()
    assert sorted(events["rank"].unique()) == [0, 1, 2]
    assert "MPI_Init" in set(events["function"].astype(str))


def test_one_process_directory(fork_trace):
    """A process directory of a run opens on its own."""
    first = parlot.open(fork_trace).processes()["directory"][0]
    alone = parlot.open(first)
    assert len(alone.processes()) == 1
    assert len(alone.events()) == int(alone.threads()["events"].sum()) > 0


def test_not_a_trace(tmp_path):
    with pytest.raises(parlot.FormatError) as e:
        parlot.open(tmp_path / "missing")
    assert "missing" in str(e.value)


def thread_file(trace_dir):
    """The largest thread file of the trace (one with several blocks)."""
    threads = parlot.open(trace_dir).threads()
    return max(threads["file"], key=lambda f: os.path.getsize(f))


def test_corrupt_data_names_file_and_offset(quicksort_trace, tmp_path):
    """Bytes changed inside a block's data: the file opens (only block
    headers are read then), decoding it raises FormatError naming it."""
    original = open(thread_file(quicksort_trace), "rb").read()
    for attempt, at in enumerate(range(len(original) // 4, len(original) - 64, 97)):
        damaged = tmp_path / f"trace{attempt}"
        shutil.copytree(quicksort_trace, damaged)
        path = thread_file(damaged)
        data = bytearray(original)
        for i in range(at, at + 16):
            data[i] ^= 0x5A
        open(path, "wb").write(bytes(data))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                t = parlot.open(damaged)  # a block header hit: try further on
                break
            except parlot.TraceWarning:
                continue
    else:
        pytest.fail("every change hit a block header")
    with pytest.raises(parlot.FormatError) as e:
        t.events()
    assert e.value.file == path
    assert isinstance(e.value.offset, int) and 0 < e.value.offset < len(data)
    assert path in str(e.value) and "offset" in str(e.value)
    with pytest.raises(parlot.FormatError):
        for _ in t.events(chunk=1000):
            pass


def test_cut_short_file_warns(quicksort_trace, tmp_path):
    damaged = tmp_path / "trace"
    shutil.copytree(quicksort_trace, damaged)
    path = thread_file(damaged)
    size = len(open(path, "rb").read())
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    t = parlot.open(damaged)
    with pytest.warns(parlot.TraceWarning, match=re.escape(path)):
        events = t.events()
    # The other threads are whole, the cut one up to its last whole block.
    assert 0 < len(events) < len(parlot.open(quicksort_trace).events())
    with pytest.warns(parlot.TraceWarning, match=re.escape(path)):
        t.stats()


def test_older_format_versions(old_trace):
    """Traces of every format version read as parlot-read reads them; a
    version-1 trace has no time (time_ns <NA>, stats on the logical clock)."""
    t = parlot.open(old_trace)
    events = t.events()
    expected = jsonl_events(old_trace)
    assert list(events["function"].astype(str)) == [r["function"] for r in expected]
    assert list(events["depth"]) == [r["depth"] for r in expected]
    stats = t.stats()
    assert {r.function: r.total for r in stats.itertuples()} == {
        name: row["total"] for name, row in report_rows(old_trace).items()}
    logical = "logical clock" in read("report", "--by", "function", old_trace).splitlines()[0]
    assert stats.attrs["unit"] == ("events" if logical else "ns")
    assert events["time_ns"].isna().all() == logical


def test_summaries_from_several_threads(fork_trace):
    """One Trace used from several Python threads at once (the binding
    works without the GIL): every result is the one computed alone."""
    import concurrent.futures
    t = parlot.open(fork_trace)
    jobs = {"stats": lambda: t.stats().to_dict("list"),
            "loops": lambda: t.loops().to_dict("list"),
            "stacks": lambda: t.stacks().text,
            "classes": lambda: t.classes(by="edges").drop(columns="members").to_dict("list"),
            "events": lambda: len(t.events())}
    alone = {name: job() for name, job in jobs.items()}
    fresh = parlot.open(fork_trace)  # its function names not looked up yet
    jobs["frame"] = lambda: fresh.events()["function"].astype(str).tolist()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        futures = [(name, pool.submit(job)) for _ in range(3) for name, job in jobs.items()]
        for name, f in futures:
            if name == "frame":
                assert f.result() == t.events()["function"].astype(str).tolist()
            else:
                assert f.result() == alone[name], name


@pytest.mark.parametrize("fmt", ["hatchet", "folded", "speedscope", "callgrind", "dot", "chrome"])
def test_export_equals_command(trace_dir, fmt, tmp_path):
    mine, theirs = tmp_path / "python.out", tmp_path / "command.out"
    parlot.open(trace_dir).export(fmt, mine)
    read("export", trace_dir, "--format", fmt, "-o", theirs)
    assert mine.read_bytes() == theirs.read_bytes()


def test_export_errors(quicksort_trace, tmp_path):
    t = parlot.open(quicksort_trace)
    with pytest.raises(ValueError):
        t.export("no-such-format", tmp_path / "x")
    with pytest.raises(RuntimeError):
        t.export("folded", tmp_path / "missing-dir" / "x")


def test_hatchet(quicksort_trace):
    """The hatchet literal: one root per outermost function; every
    function's calls, summed over the tree's nodes, are the report's."""
    t = parlot.open(quicksort_trace)
    literal = t.hatchet_literal()
    assert sorted(root["frame"]["name"] for root in literal) == ["main", "sort_worker"]
    calls = {}
    stack = list(literal)
    while stack:
        node = stack.pop()
        name = node["frame"]["name"]
        calls[name] = calls.get(name, 0) + node["metrics"]["calls"]
        stack.extend(node.get("children", []))
    stats = t.stats()
    assert calls == dict(zip(stats["function"], stats["calls"]))
    try:
        import hatchet  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            t.to_hatchet()
    else:
        assert "calls" in t.to_hatchet().dataframe.columns


def test_chunks_take_bounded_memory(long_trace):
    """Streaming a trace holds one chunk at a time: the peak of numpy's
    allocations (tracemalloc sees them) stays far below the whole frame's."""
    import tracemalloc
    t = parlot.open(long_trace)
    events = int(t.threads()["events"].sum())
    assert events > 4_000_000
    tracemalloc.start()
    try:
        seen = 0
        for chunk in t.events(chunk=20_000):
            seen += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seen == events
    # A chunk is under 1 MB; the whole frame would be 37 bytes an event.
    assert peak < 8_000_000 < 37 * events, peak


@pytest.mark.parametrize("which", ["marks_trace", "quicksort_trace"])
def test_marks_equal_trace_jsonl(request, which):
    trace_dir = request.getfixturevalue(which)
    marks = parlot.open(trace_dir).marks()
    expected = [json.loads(line) for line in read("trace", "--format", "jsonl", trace_dir).splitlines()]
    expected = [r for r in expected if r["kind"] == "mark"]
    assert list(marks.columns) == ["rank", "pid", "thread", "tid", "index", "depth", "label"]
    assert [(m.pid, m.tid, m.index, m.depth, m.label) for m in marks.itertuples()] == [
        (r["pid"], r["tid"], r["index"], r["depth"], r["label"]) for r in expected]
    if which == "marks_trace":
        assert len(marks) >= 3

"""The Trace object: DataFrames built from the C++ binding's numpy columns."""
import builtins
import json
import os
import tempfile
import warnings

import numpy as np
import pandas as pd

from . import _parlot

#: Events per chunk of columns(): small enough to stay in the caches.
_COLUMNS = 1 << 16

#: The `kind` column's categories (code 0: entry, 1: exit).
KINDS = ("enter", "exit")


class TraceWarning(UserWarning):
    """Damage read around: a thread file cut short, a missing function
    table, a thread file that could not be opened. The message names the
    file (and the offset where its data ends)."""


def open(path):  # noqa: A001 (the package's entry point is parlot.open)
    """Opens a trace: a run directory (PARLOT_DIR, several processes) or one
    process directory. Returns a Trace. Raises FormatError when `path` is not
    a trace directory or a process file is malformed."""
    return Trace(path)


class Stacks:
    """The open call stack of every thread at the end of its trace
    (`parlot-read stacks`).

    Attributes: `frame`, a DataFrame with one row per thread (rank, fork,
    thread, pid, tid, label, depth and `stack`, the function names outermost
    first); `text`, the merged prefix tree as `parlot-read stacks` prints it;
    `dot`, the same tree in Graphviz DOT (`--format dot`)."""

    def __init__(self, frame, text, dot):
        self.frame = frame
        self.text = text
        self.dot = dot

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"<parlot.Stacks of {len(self.frame)} threads>"


class Trace:
    """A trace directory opened for reading (see parlot.open)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._run = _parlot.Run(self.path)
        for message in self._run.messages:
            warnings.warn(message, TraceWarning, stacklevel=3)
        self._process_list = self._run.processes()
        self._thread_list = self._run.threads()
        self._functions = None

    # -- tables of the run -------------------------------------------------

    def processes(self):
        """One row per process, in the order the reader walks them (by MPI
        rank, then start time): directory, pid, ppid, rank (the MPI rank, or
        the process's position when the run has no ranks), fork, mpi_rank (as
        the launcher gave it, "" when none), host, executable, arguments,
        start_ns and end_ns (CLOCK_REALTIME ns; end 0 when unfinished),
        functions and threads."""
        return pd.DataFrame(self._process_list)

    def threads(self):
        """One row per thread file: process (row of processes()), file, rank,
        fork, thread (index in its process), pid, tid, events (as its file
        promises them) and label ("rank R thread T", as parlot-read prints)."""
        return pd.DataFrame(self._thread_list)

    @property
    def ranked(self):
        """Whether the run has MPI ranks."""
        return self._run.ranked

    # -- events -------------------------------------------------------------

    def _function_maps(self):
        """Per process: (function code by ID, file code by ID, line by ID),
        codes into the run's function and file categories."""
        if self._functions is not None:
            return self._functions
        names, files = {}, {}
        maps = []
        for p in range(len(self._process_list)):
            n, f, lines = self._run.function_table(p)
            fcode = np.fromiter((names.setdefault(x, len(names)) for x in n), np.int32, len(n))
            filecode = np.fromiter(
                (files.setdefault(x, len(files)) if x else -1 for x in f), np.int32, len(f)
            )
            maps.append([fcode, filecode, np.asarray(lines, dtype=np.int32)])
        self._functions = (maps, names, files)
        return self._functions

    def _extend(self, process, function_ids):
        """Names IDs beyond process `process`'s function table (a trace
        without one): their codes are added to the maps."""
        maps, names, files = self._function_maps()
        fcode, filecode, lines = maps[process]
        top = int(function_ids.max()) + 1
        if top <= len(fcode):
            return
        extra = [self._run.function_info(process, i) for i in range(len(fcode), top)]
        maps[process] = [
            np.concatenate([fcode, [names.setdefault(n, len(names)) for n, _, _ in extra]]).astype(np.int32),
            np.concatenate(
                [filecode, [files.setdefault(f, len(files)) if f else -1 for _, f, _ in extra]]
            ).astype(np.int32),
            np.concatenate([lines, [line for _, _, line in extra]]).astype(np.int32),
        ]

    def columns(self, chunk=_COLUMNS):
        """The events as numpy columns, a chunk of at most `chunk` events of
        one thread at a time: yields (thread, columns), `thread` the row of
        threads() and `columns` a dict of function_id (uint32, the process's
        function ID), depth (uint32), enter (bool) and time_ns (int64,
        CLOCK_MONOTONIC ns interpolated between clock samples; -1 when the
        thread has none). The fastest form: no strings, no pandas."""
        for i in range(len(self._thread_list)):
            decoder = _parlot.ThreadDecoder(self._run, i)
            while True:
                got = decoder.read(chunk)
                if got is None:
                    break
                fid, depth, enter, time_ns = got
                yield i, {"function_id": fid, "depth": depth, "enter": enter, "time_ns": time_ns}
            if decoder.damage is not None:
                warnings.warn(decoder.damage, TraceWarning, stacklevel=2)

    def _frame(self, c, spans):
        """The DataFrame of the event columns `c` (as columns() gives them),
        `spans` saying whose they are: (thread, begin, end) row ranges."""
        maps, names, files = self._function_maps()
        n = len(c["function_id"])
        fid = c["function_id"]
        rank, pid, thread, tid = (np.empty(n, np.int32) for _ in range(4))
        fcodes = np.empty(n, np.int32)
        filecodes = np.empty(n, np.int32)
        line = np.empty(n, np.int32)
        for i, begin, end in spans:
            t = self._thread_list[i]
            ids = fid[begin:end]
            if end > begin and ids.max() >= len(maps[t["process"]][0]):
                self._extend(t["process"], ids)
            fmap, filemap, linemap = maps[t["process"]]
            rank[begin:end] = t["rank"]
            pid[begin:end] = t["pid"]
            thread[begin:end] = t["thread"]
            tid[begin:end] = t["tid"]
            np.take(fmap, ids, out=fcodes[begin:end], mode="clip")  # ids checked above
            np.take(filemap, ids, out=filecodes[begin:end], mode="clip")  # ids checked above
            np.take(linemap, ids, out=line[begin:end], mode="clip")  # ids checked above
        time = c["time_ns"]
        return pd.DataFrame(
            {
                "rank": rank,
                "pid": pid,
                "thread": thread,
                "tid": tid,
                "depth": c["depth"],
                "kind": pd.Categorical.from_codes(
                    (~c["enter"]).view(np.int8), categories=list(KINDS)),
                "function": pd.Categorical.from_codes(fcodes, categories=list(names)),
                "time_ns": pd.arrays.IntegerArray(time, time < 0),
                "file": pd.Categorical.from_codes(filecodes, categories=list(files)),
                "line": pd.arrays.IntegerArray(line, line <= 0),
            },
            copy=False,
        )

    def _full_frame(self):
        """events() in one frame: every thread decoded into one set of
        arrays sized by the events the files promise (grown if a file holds
        more), no concatenation."""
        capacity = max(1, int(sum(t["events"] for t in self._thread_list)))
        dtypes = {"function_id": np.uint32, "depth": np.uint32, "enter": np.bool_,
                  "time_ns": np.int64}
        c = {k: np.empty(capacity, d) for k, d in dtypes.items()}
        spans, used = [], 0
        for i in range(len(self._thread_list)):
            decoder = _parlot.ThreadDecoder(self._run, i)
            begin = used
            while True:
                if used == capacity:
                    capacity *= 2
                    for k, d in dtypes.items():
                        grown = np.empty(capacity, d)
                        grown[:used] = c[k][:used]
                        c[k] = grown
                got = decoder.read_into(c["function_id"], c["depth"], c["enter"], c["time_ns"], used)
                if got == 0:
                    break
                used += got
            spans.append((i, begin, used))
            if decoder.damage is not None:
                warnings.warn(decoder.damage, TraceWarning, stacklevel=3)
        return self._frame({k: v[:used] for k, v in c.items()}, spans)

    def events(self, chunk=None):
        """The events of every thread, one row each, in the order `parlot-read
        trace` prints them (processes in order, each thread's events in
        order), with the columns rank (MPI rank, or the process's position
        without ranks), pid, thread (index in its process), tid, depth (0 =
        outermost), kind ("enter"/"exit", categorical), function (its name,
        categorical), time_ns (CLOCK_MONOTONIC ns interpolated between the
        thread's clock samples; <NA> without samples), file and line (the
        function's declaration from DWARF; <NA> when unknown).

        With `chunk=N`, returns an iterator of such DataFrames instead, each
        of at most N events of one thread, in the same order: memory stays
        bounded by N however large the trace (they concatenate to the full
        frame; the categories of `function` and `file` are the run's, the
        same in every chunk)."""
        if chunk is None:
            return self._full_frame()
        if chunk < 1:
            raise ValueError("chunk must be at least 1 event")
        return (self._frame(c, [(i, 0, len(c["function_id"]))]) for i, c in self.columns(chunk))

    # -- summaries ------------------------------------------------------------

    def _warn(self, damage):
        for message in damage:
            warnings.warn(message, TraceWarning, stacklevel=3)

    def marks(self):
        """The user marks (parlot_mark) of every thread, in the order
        `parlot-read trace` shows them: rank, pid, thread, tid, index (the
        mark sits just before that event of its thread, counted from 0 as
        events().groupby(["pid", "tid"]).cumcount() counts; at the end of
        the stream when it is the thread's event count), depth (calls open
        there) and label (the program's bytes as text, undecodable bytes
        replaced)."""
        rows, damage = self._run.marks()
        self._warn(damage)
        columns = self._thread_columns([r[0] for r in rows])
        frame = pd.DataFrame({k: columns[k] for k in ("rank", "pid", "thread", "tid")})
        frame["index"] = np.array([r[1] for r in rows], dtype=np.int64)
        frame["depth"] = np.array([r[2] for r in rows], dtype=np.int64)
        frame["label"] = [r[3] for r in rows]
        return frame

    def stats(self):
        """Per function, merged by name over every thread: function, calls,
        total (inclusive cost of its outermost activations), self (exclusive
        cost) and max_depth (1 = outermost), the numbers of `parlot-read
        report --by function`, in its order (total descending). The costs
        are in ns when every thread has clock samples, else on the logical
        clock (events); `frame.attrs["unit"]` says which ("ns" or "events")
        and `frame.attrs["time_axis"]` is the report's description."""
        s = self._run.stats()
        self._warn(s["damage"])
        frame = pd.DataFrame(s["rows"], columns=["function", "calls", "total", "self", "max_depth"])
        frame = frame.sort_values("total", ascending=False, kind="stable").reset_index(drop=True)
        frame.attrs["unit"] = s["unit"]
        frame.attrs["time_axis"] = s["description"]
        return frame

    def export(self, format, path):  # noqa: A002 (the command's option name)
        """Writes the trace to `path` in a `parlot-read export --format`
        format ("chrome", "perfetto", "speedscope", "folded", "callgrind",
        "dot", "hatchet", "otf2" when built), the bytes the command writes
        without options (dot: the 50 most called edges). Raises ValueError
        for an unknown format, RuntimeError when `path` cannot be written."""
        self._warn(self._run.export(format, os.fspath(path)))

    def to_hatchet(self):
        """The merged call tree as a Hatchet GraphFrame
        (hatchet.GraphFrame.from_literal of the "hatchet" export): metrics
        calls, "calls (inc)", "time (ns)" and "time (ns) (inc)" ("events" on
        the logical clock). Raises ImportError when hatchet is not
        installed (it is not a Debian package: pip install hatchet)."""
        import hatchet  # only here: optional

        return hatchet.GraphFrame.from_literal(self.hatchet_literal())

    def hatchet_literal(self):
        """The "hatchet" export as Python lists and dicts (what
        to_hatchet() gives Hatchet)."""
        with tempfile.TemporaryDirectory(prefix="parlot-") as d:
            path = os.path.join(d, "tree.json")
            self.export("hatchet", path)
            with builtins.open(path, encoding="utf-8") as f:
                return json.load(f)

    def _thread_columns(self, indices):
        rows = [self._thread_list[i] for i in indices]
        return {
            key: [r[key] for r in rows] for key in ("label", "rank", "fork", "thread", "pid", "tid")
        }

    def loops(self, max_body=8):
        """Each thread's calls summarised as nested loops (`parlot-read
        loops`), bodies of up to `max_body` items: one row per thread with
        label, rank, fork, thread, pid, tid, events (summarised) and loops
        (the summary text, e.g. "main { 1000 x [ step ] }")."""
        rows, damage = self._run.loops(max_body)
        self._warn(damage)
        frame = pd.DataFrame(self._thread_columns([r[0] for r in rows]))
        frame["events"] = np.array([r[1] for r in rows], dtype=np.int64)
        frame["loops"] = [r[2] for r in rows]
        return frame

    def stacks(self):
        """Every thread's open call stack at the end of its trace, merged as
        `parlot-read stacks` merges them: a Stacks (frame, text, dot)."""
        s = self._run.stacks()
        self._warn(s["damage"])
        frame = pd.DataFrame(self._thread_columns(s["threads"]))
        frame["depth"] = np.array([len(x) for x in s["stacks"]], dtype=np.int64)
        frame["stack"] = s["stacks"]
        return Stacks(frame, s["text"], s["dot"])

    def classes(self, by="trace", max_body=8):
        """Threads grouped into equivalence classes (`parlot-read classes
        --by BY`: "trace", identical streams; "loops", loop structure;
        "edges", caller -> callee sets; "stack", final open stacks), outliers
        first: one row per class with label (A = largest), threads (the
        members as ranges, as printed), size, representative (its first
        thread's label), hash, and members (the members' labels)."""
        rows, damage = self._run.classes(by, max_body)
        self._warn(damage)
        return pd.DataFrame(
            {
                "label": [r[0] for r in rows],
                "threads": [r[1] for r in rows],
                "size": np.array([r[2] for r in rows], dtype=np.int64),
                "representative": [r[3] for r in rows],
                "hash": np.array([r[4] for r in rows], dtype=np.uint64),
                "members": [[self._thread_list[i]["label"] for i in r[5]] for r in rows],
            }
        )

    def __repr__(self):
        return (
            f"<parlot.Trace {self.path!r}: {len(self._process_list)} processes, "
            f"{len(self._thread_list)} threads>"
        )


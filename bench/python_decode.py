#!/usr/bin/python3
"""Decoding speed of the Python binding: events per second into numpy
columns (Trace.columns), into DataFrames of 1 M events (events(chunk=...))
and into the full DataFrame (Trace.events), in CPU time of one core, against the C++ decode of the same trace in the same run (decode and
call tracking, what `parlot-read trace` does before formatting).

Usage: bench/python_decode.py [--build DIR] [--trace DIR] [--keys N] [--repeat R]
Without --trace it records quicksort_threads N 1 (one sorting thread) from
the build tree into a temporary directory. Run with /usr/bin/python3 (the
interpreter the binding was built for); PYTHONPATH is set from --build."""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def best_of(repeat, fn):
    """Smallest CPU time (s) of this process over `repeat` runs of fn(), and
    its result. CPU time, not wall time: every form decodes on one thread,
    and on a loaded machine the wall time mostly measures the others."""
    best, result = None, None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        elapsed = time.process_time() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(here, "..", "build"))
    ap.add_argument("--trace")
    ap.add_argument("--keys", type=int, default=4_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    sys.path.insert(0, os.path.join(build, "python"))
    import parlot  # noqa: E402 (from the build tree)
    from parlot import _parlot  # noqa: E402

    with tempfile.TemporaryDirectory(prefix="parlot-pybench-") as tmp:
        trace = a.trace
        if trace is None:
            trace = os.path.join(tmp, "trace")
            subprocess.run([os.path.join(build, "frontend", "parlot"), "record", "-q", "-d", trace,
                            "--", os.path.join(build, "examples", "quicksort_threads"),
                            str(a.keys), "1"], check=True, stdout=subprocess.DEVNULL)
        t = parlot.open(trace)
        run = _parlot.Run(trace)

        def numpy_columns():
            n = 0
            for _, c in t.columns():
                n += len(c["function_id"])
            return n

        cxx_s, events = best_of(a.repeat, lambda: run.decode_all())
        numpy_s, n_numpy = best_of(a.repeat, numpy_columns)
        chunks_s, n_chunks = best_of(
            a.repeat, lambda: sum(len(c) for c in t.events(chunk=1 << 20)))
        frame_s, frame = best_of(a.repeat, lambda: len(t.events()))
        assert n_numpy == events == n_chunks == frame, (n_numpy, events, n_chunks, frame)
        print(f"trace: {trace}: {events} events, {len(t.threads())} threads")
        print(f"C++ decode + call tracking (parlot-read trace's decode): "
              f"{events / cxx_s / 1e6:8.1f} M events/s")
        print(f"Python: numpy columns (Trace.columns):                  "
              f"{events / numpy_s / 1e6:8.1f} M events/s ({cxx_s / numpy_s:.2f} x C++)")
        print(f"Python: DataFrames of 1 M events (events(chunk=2**20)): "
              f"{events / chunks_s / 1e6:8.1f} M events/s ({cxx_s / chunks_s:.2f} x C++)")
        print(f"Python: one DataFrame (Trace.events()):                 "
              f"{events / frame_s / 1e6:8.1f} M events/s ({cxx_s / frame_s:.2f} x C++)")
        print(f"load average: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()

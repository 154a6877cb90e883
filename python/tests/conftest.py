"""Traces recorded once per session from the build tree's examples, and
parlot-read's output on them (the reference every test compares with).

Environment (set by ctest, python/CMakeLists.txt): PYTHONPATH holds the
build's python/ folder; PARLOT_FRONTEND, PARLOT_READ, PARLOT_EXAMPLES_DIR
name the build's `parlot`, `parlot-read` and examples; MPIEXEC names
mpirun when the build found MPI."""
import os
import shutil
import subprocess

import pytest


def _tool(name):
    path = os.environ.get(name)
    if not path:
        pytest.skip(f"{name} not set (run through ctest)")
    return path


def _record(directory, argv, mpi_ranks=0, check=True):
    frontend = _tool("PARLOT_FRONTEND")
    cmd = [frontend, "record", "-q", "-d", str(directory), "--"] + argv
    if mpi_ranks:
        cmd = [os.environ["MPIEXEC"], "--allow-run-as-root", "--oversubscribe",
               "-np", str(mpi_ranks)] + cmd
    subprocess.run(cmd, check=check, stdout=subprocess.DEVNULL, timeout=300)
    assert os.path.isdir(directory), f"{cmd} left no trace"
    return directory


def read(*args):
    """parlot-read's stdout for `args`."""
    out = subprocess.run([_tool("PARLOT_READ")] + [str(a) for a in args], check=True,
                         stdout=subprocess.PIPE, timeout=300)
    return out.stdout.decode("utf-8", "replace")


@pytest.fixture(scope="session")
def examples():
    return _tool("PARLOT_EXAMPLES_DIR")


@pytest.fixture(scope="session")
def quicksort_trace(tmp_path_factory, examples):
    """4 threads sorting 20000 keys: one process, five threads."""
    d = tmp_path_factory.mktemp("quicksort") / "trace"
    return _record(d, [os.path.join(examples, "quicksort_threads"), "20000", "4"])


@pytest.fixture(scope="session")
def fork_trace(tmp_path_factory, examples):
    """A parent and 5 children, child 2 taking another branch and child 4
    hanging until the parent SIGTERMs it: six processes."""
    d = tmp_path_factory.mktemp("forks") / "trace"
    # The hung child counts as failed: fork_tree exits with status 1.
    return _record(d, [os.path.join(examples, "fork_tree"), "5", "20", "--outlier", "2",
                       "--hang", "4"], check=False)


@pytest.fixture(scope="session")
def mpi_trace(tmp_path_factory, examples):
    """halo_mpi on 3 ranks (skipped without MPI)."""
    mpiexec = os.environ.get("MPIEXEC") or shutil.which("mpirun")
    halo = os.path.join(examples, "halo_mpi")
    if not mpiexec or not os.path.exists(halo):
        pytest.skip("no MPI in this build")
    os.environ["MPIEXEC"] = mpiexec
    d = tmp_path_factory.mktemp("mpi") / "trace"
    return _record(d, [halo, "30"], mpi_ranks=3)


@pytest.fixture(scope="session", params=["quicksort", "forks", "mpi"])
def trace_dir(request):
    """Each recorded trace in turn."""
    return request.getfixturevalue({"quicksort": "quicksort_trace", "forks": "fork_trace",
                                    "mpi": "mpi_trace"}[request.param])


@pytest.fixture(scope="session", params=["v1", "v2", "v3", "v4"])
def old_trace(request, tmp_path_factory):
    """The quicksort traces of earlier format versions (test/data), their
    executable gone: functions named by address."""
    import tarfile
    data = os.path.join(os.path.dirname(__file__), "..", "..", "test", "data")
    d = tmp_path_factory.mktemp(request.param)
    with tarfile.open(os.path.join(data, f"{request.param}_quicksort_trace.tar.gz")) as tar:
        tar.extractall(d)
    (top,) = [p for p in d.iterdir() if p.is_dir()]
    return top


@pytest.fixture(scope="session")
def long_trace(tmp_path_factory, examples):
    """One thread sorting 500000 keys: about 5 M events."""
    d = tmp_path_factory.mktemp("long") / "trace"
    return _record(d, [os.path.join(examples, "quicksort_threads"), "500000", "1"])


@pytest.fixture(scope="session")
def marks_trace(tmp_path_factory, examples):
    """examples/user_api: marks its phases with parlot_mark."""
    d = tmp_path_factory.mktemp("marks") / "trace"
    return _record(d, [os.path.join(examples, "user_api")])

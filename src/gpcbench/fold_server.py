"""A warm process that runs fold jobs, so that the numerical stack is imported once per host
and code state instead of once per fold job (1-2 CPU-s each, thousands of jobs).

A fold job that must fit (``gpcbench run-fold``, after the ledger offered no result) connects
to the fold server of its host and code state over a Unix socket, hands it its argument list,
working directory, environment and standard streams (file descriptors), and waits for the
exit status. The server forks a child per fold, which runs the fold exactly as the job would
have (``gpcbench run-fold ... --in-process``) with the job's streams, directory and
environment; so each fold is still its own process, its result record, log, watchdog and
exit status are the job's, and a job that is killed takes its fold with it (the server kills
the child's process group when the job's connection closes).

The server is started by the first job that finds none, and exits after ``IDLE_S`` seconds
without a fold. Its socket is named by a hash of everything the imported code depends on
(interpreter, package directory and sources, PYTHONPATH, thread and numba settings, which
modules read when imported), so an edit to any
module is served by a new server. ``GPCBENCH_FOLD_SERVER=0`` runs every fold job in its own
process, as does any job that cannot reach a server (it says why: a socket path longer than
Linux allows, a server that failed to start, or none answering within START_TIMEOUT_S).
Standard library only; Linux (``socket.send_fds``).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import json
import os
import pkgutil
import platform
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ENABLE_VARIABLE = "GPCBENCH_FOLD_SERVER"
IDLE_VARIABLE = "GPCBENCH_FOLD_SERVER_IDLE_S"
IDLE_S = 120.0
START_TIMEOUT_S = 60.0
PACKAGE = Path(__file__).resolve().parent
#: Imported by the server before it serves: what fold jobs would import (estimators lazily).
WARM_PACKAGES = ("gpcbench.experiments.run_fold", "gpcbench.estimators", "gpcbench.baselines")
HEADER_BYTES = 8
STATUS_BYTES = 4
SOCKET_PATH_MAX = 107  # bytes of sun_path before its terminating NUL (Linux unix(7))


class ServerUnavailable(Exception):
    """No fold server can take this job; the message says why."""


def enabled() -> bool:
    return (os.environ.get(ENABLE_VARIABLE, "1") != "0" and sys.platform == "linux"
            and hasattr(socket, "send_fds"))


def server_key() -> str:
    """Hash of what the server's imported code depends on."""
    digest = hashlib.sha256()
    for part in (sys.executable, sys.version, platform.node(), str(PACKAGE),
                 os.environ.get("PYTHONPATH", ""),
                 *sorted(f"{k}={v}" for k, v in os.environ.items()
                         if k.endswith("_NUM_THREADS") or k.startswith("NUMBA_"))):
        digest.update(part.encode() + b"\0")
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:20]


def socket_path() -> Path:
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / f"gpcbench-{os.getuid()}"
    base.mkdir(mode=0o700, exist_ok=True)
    return base / f"fold-{server_key()}.sock"


# -- the job's side -----------------------------------------------------------------------

def _connect(path: Path) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except OSError:
        conn.close()
        return None
    return conn


def _connect_or_start(path: Path) -> socket.socket:
    """A connection to the server at ``path``, starting one if there is none."""
    if len(os.fsencode(path)) > SOCKET_PATH_MAX:
        raise ServerUnavailable(f"its socket path {path} is longer than Linux allows "
                                f"({SOCKET_PATH_MAX} bytes); set XDG_RUNTIME_DIR to a shorter "
                                f"directory")
    deadline = time.monotonic() + START_TIMEOUT_S
    server = None
    log_path = path.with_suffix(".log")
    while time.monotonic() < deadline:
        if (conn := _connect(path)) is not None:
            return conn
        if server is not None and server.poll() not in (None, 0):
            raise ServerUnavailable(f"the server exited with status {server.returncode}; "
                                    f"see {log_path}")
        if server is None or server.poll() == 0:  # none yet, or it gave way to another
            with open(log_path, "ab") as log:
                server = subprocess.Popen(
                    [sys.executable, "-m", "gpcbench.fold_server", str(path)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                    start_new_session=True)
        time.sleep(0.05)
    raise ServerUnavailable(f"none answered at {path} within {START_TIMEOUT_S:.0f} s")


def run_in_server(argv: list[str]) -> int:
    """Run ``gpcbench *argv`` in a child of the fold server with this process's streams,
    directory and environment; its exit status. Raises ServerUnavailable when no server
    can take the job."""
    conn = _connect_or_start(socket_path())
    with conn:
        request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        socket.send_fds(conn, [len(request).to_bytes(HEADER_BYTES, "big")], [0, 1, 2])
        conn.sendall(request)
        status = _receive(conn, STATUS_BYTES)
    if status is None:
        print("gpcbench run-fold: error: the fold server died during the fold", file=sys.stderr)
        return 1
    return int.from_bytes(status, "big", signed=True)


def _receive(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


# -- the server's side --------------------------------------------------------------------

def _warm_imports() -> None:
    for name in WARM_PACKAGES:
        module = importlib.import_module(name)
        for info in pkgutil.iter_modules(getattr(module, "__path__", []), f"{name}."):
            try:
                importlib.import_module(info.name)
            except ImportError:  # an optional peer library: its fold jobs import it themselves
                pass


def _take_the_socket(path: Path):
    """The lock that makes this process the one server of ``path`` (held until it exits), or
    None when another server answers there."""
    lock = open(path.with_suffix(".lock"), "w")
    for _ in range(100):
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return lock
        except BlockingIOError:
            if (conn := _connect(path)) is not None:  # a live server: leave it the socket
                conn.close()
                lock.close()
                return None
            time.sleep(0.1)  # a server on its way out
    lock.close()
    return None


def _run_child(request: dict, fds: list[int]) -> int:
    """In the forked child: become the fold job (streams, directory, environment) and run
    ``python -m gpcbench *argv`` in it."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    sys.argv = [sys.argv[0], *request["argv"]]
    try:
        runpy.run_module("gpcbench", run_name="__main__", alter_sys=True)
        return 0
    except SystemExit as stop:
        return 0 if stop.code is None else stop.code if isinstance(stop.code, int) else 1
    except BaseException:  # noqa: BLE001 - reported on the job's stderr, as the job would
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def _start_fold(conn: socket.socket, others: list[socket.socket]) -> int | None:
    """Read one job's request from ``conn`` and fork its fold; the child's pid (None when the
    job hung up first)."""
    header, fds, _, _ = socket.recv_fds(conn, HEADER_BYTES, 3)
    body = _receive(conn, int.from_bytes(header, "big")) if len(header) == HEADER_BYTES else None
    if body is None or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    request = json.loads(body)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        for sock in others:
            sock.close()
        os._exit(_run_child(request, fds))
    for fd in fds:
        os.close(fd)
    return pid


def _reap(children: dict, selector: selectors.BaseSelector) -> None:
    """Send each finished fold's exit status to its job and close the connection."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid)
        try:
            conn.sendall(os.waitstatus_to_exitcode(status).to_bytes(STATUS_BYTES, "big",
                                                                    signed=True))
        except OSError:  # the job is gone
            pass
        selector.unregister(conn)
        conn.close()


def serve(path: Path, idle_s: float) -> None:
    """Serve fold jobs at ``path`` until ``idle_s`` seconds pass without one."""
    lock = _take_the_socket(path)
    if lock is None:
        return
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(64)  # jobs connect now and wait in the queue while the imports run
    _warm_imports()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}
    idle_since = time.monotonic()
    try:
        while children or time.monotonic() - idle_since < idle_s:
            for key, _ in selector.select(timeout=0.2):
                if key.fileobj is listener:
                    conn, _ = listener.accept()
                    pid = _start_fold(conn, [listener, *children.values(), conn])
                    if pid is None:
                        conn.close()
                        continue
                    children[pid] = conn
                    selector.register(conn, selectors.EVENT_READ, pid)
                elif not key.fileobj.recv(1):  # the job hung up (killed): so does its fold
                    try:
                        os.killpg(key.data, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            _reap(children, selector)
            if children:
                idle_since = time.monotonic()
    finally:
        path.unlink(missing_ok=True)  # before the lock goes: a new server may take over
        listener.close()
        lock.close()


if __name__ == "__main__":
    serve(Path(sys.argv[1]), float(os.environ.get(IDLE_VARIABLE, IDLE_S)))

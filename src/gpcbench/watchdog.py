"""The Snakemake process a fold job watches: it stops its fit when that process is gone.

Every Snakemake process that reads the Snakefile (the one a user starts, and on a cluster the
job step's on the compute node) names itself in ``GPCBENCH_SNAKEMAKE_PROCESS`` for the jobs it
starts, as ``host/pid-namespace/pid/start-time``. A fold watches that process only where it
can see it: on the same host, in the same pid namespace. The login node's value, carried to a
compute node by sbatch's environment, names a process the fold cannot see, so it is not
watched there (the job step's own Snakemake replaces it). The start time tells a reused pid
from the process it once named. Standard library only: the Snakefile imports this module.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass

VARIABLE = "GPCBENCH_SNAKEMAKE_PROCESS"


def _stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state first), None if there is none."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:  # no /proc: every process is taken to share one namespace
        return ""


@dataclass(frozen=True)
class ProcessId:
    """A process as another process on some host names it."""

    host: str
    pid_namespace: str
    pid: int
    start_time: str  # clock ticks after boot (/proc/<pid>/stat field 22); "" without /proc

    def __str__(self) -> str:
        return f"{self.host}/{self.pid_namespace}/{self.pid}/{self.start_time}"

    @classmethod
    def parse(cls, text: str) -> ProcessId:
        host, namespace, pid, start = text.split("/")  # no host name or namespace has a "/"
        return cls(host, namespace, int(pid), start)

    @classmethod
    def of(cls, pid: int | None = None) -> ProcessId:
        """The process ``pid`` of this host (default: this process)."""
        pid = os.getpid() if pid is None else pid
        fields = _stat_fields(pid)
        return cls(platform.node(), _pid_namespace(), pid, fields[19] if fields else "")

    def visible(self) -> bool:
        """Whether this process can see it: same host and same pid namespace."""
        return self.host == platform.node() and self.pid_namespace == _pid_namespace()

    def alive(self) -> bool:
        """It exists, is not a zombie (killed, not yet reaped) and is the same process."""
        fields = _stat_fields(self.pid)
        if fields is None:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                return True
            return not os.path.isdir("/proc")  # /proc without this pid: it is gone
        return fields[0] != "Z" and (not self.start_time or fields[19] == self.start_time)


def watched_process() -> ProcessId | None:
    """The Snakemake process named by ``GPCBENCH_SNAKEMAKE_PROCESS`` when this process can see
    it; None when the variable is unset or names a process on another host or pid namespace."""
    text = os.environ.get(VARIABLE)
    if not text:
        return None
    process = ProcessId.parse(text)
    return process if process.visible() else None

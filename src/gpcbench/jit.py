"""numba's ``njit``, with the on-disk cache kept per version of the package's compiled code.

numba keys a cached function by its own source file only: a cached function that calls a
compiled function of another module keeps running the old callee after that module changes,
silently, until its own file changes too. So the cache lives in a folder named by a hash of
every module that compiles with numba (:func:`compiled_code_hash`): an edit to any compiled
code starts a fresh cache, and two checkouts of different code never share one. The folder is
``<NUMBA_CACHE_DIR or the package's __pycache__>/numba-<hash>`` (``~/.cache/gpcbench`` when the
package folder is read-only).

Compiled modules import ``njit`` (and ``objmode``) from here, never from numba
(``tests/test_architecture.py`` checks it); this must happen before any of them is imported.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
from numba import njit, objmode

PACKAGE = Path(__file__).resolve().parent
MARKER = b"from gpcbench.jit import"

__all__ = ["njit", "objmode", "compiled_code_hash", "cache_dir"]


def compiled_code_hash(package: Path = PACKAGE) -> str:
    """SHA-256 (16 hex digits) over the modules of ``package`` that compile with numba (they
    import from this module) and this module itself."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        source = path.read_bytes()
        if MARKER in source or path.name == "jit.py":
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + source)
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """Where this version of the compiled code is cached (see the module docstring)."""
    root = os.environ.get("NUMBA_CACHE_DIR")
    if not root:
        writable = os.access(PACKAGE, os.W_OK)
        root = PACKAGE / "__pycache__" if writable else Path.home() / ".cache" / "gpcbench"
    return Path(root) / f"numba-{compiled_code_hash()}"


numba.config.CACHE_DIR = str(cache_dir())

"""What every result file records about where it came from: packages, commit, host, and the
source of the code that produced it."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import platform
import subprocess
from functools import cache, lru_cache
from importlib import metadata
from pathlib import Path

TRACKED_PACKAGES = (
    "gpcbench", "numpy", "scipy", "scikit-learn", "pandas", "joblib", "numba", "snakemake",
)


@lru_cache(maxsize=1)
def package_versions() -> dict[str, str]:
    """Installed versions of the packages results depend on, plus Python's."""
    versions = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


#: Set by the Snakefile to the commit its run started from, for every job it starts.
RUN_COMMIT_VARIABLE = "GPCBENCH_GIT_COMMIT"


def git_commit() -> str:
    """The commit results are attributed to: the one the pipeline run started from (so that
    report jobs writing into the work tree mid-run do not make later folds ``+dirty``), else
    the current state of the package's work tree."""
    return os.environ.get(RUN_COMMIT_VARIABLE) or working_tree_commit()


@lru_cache(maxsize=4)
def working_tree_commit(repo: Path | None = None) -> str:
    """The commit of the working tree, suffixed ``+dirty`` when tracked files differ from it."""
    cwd = repo or Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd, capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def host() -> str:
    return platform.node()


@cache
def module_source(module: str) -> bytes:
    """The source file of ``module``, read without importing it: code hashes are evaluated at
    every Snakemake start-up (one per cluster job step), which must not pay for importing
    scikit-learn or numba."""
    return Path(importlib.util.find_spec(module).origin).read_bytes()


def import_targets(node: ast.AST) -> set[str]:
    """The gpcbench modules one import statement loads (``from package import submodule``
    names the submodule); empty for any other node."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name.startswith("gpcbench.")}
    if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
            and node.module.split(".")[0] == "gpcbench"):
        return set()
    package = importlib.util.find_spec(node.module).submodule_search_locations
    found = set()
    for alias in node.names:
        name = f"{node.module}.{alias.name}"
        found.add(name if package and importlib.util.find_spec(name) else node.module)
    return found - {"gpcbench"}


@cache
def gpcbench_imports(module: str) -> frozenset[str]:
    """The gpcbench modules ``module``'s source imports anywhere (function-level imports
    included), read with ast."""
    tree = ast.parse(module_source(module))
    return frozenset(set().union(*(import_targets(node) for node in ast.walk(tree))))


def imported_modules(*roots: str) -> list[str]:
    """``roots`` and every gpcbench module they import, transitively, sorted: the code a
    result depends on, found from the import graph (nothing is imported)."""
    seen, todo = set(), list(roots)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(gpcbench_imports(module))
    return sorted(seen)


@cache
def third_party_imports(module: str) -> frozenset[str]:
    """The top-level names of the non-gpcbench packages ``module``'s source imports."""
    names = set()
    for node in ast.walk(ast.parse(module_source(module))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return frozenset(names - {"gpcbench"})


def source_digest(modules, *parts: str, packages=()) -> str:
    """The first 16 hex digits of the SHA-256 over the name and source of each of ``modules``,
    then ``parts`` (text that also decides the result, e.g. a registry entry), then
    ``name==version`` of each of ``packages``, sorted: the code hash a result records."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update(module.encode() + b"\0" + module_source(module))
    for part in parts:
        digest.update(part.encode())
    for package in sorted(packages):
        digest.update(f"{package}=={metadata.version(package)}".encode())
    return digest.hexdigest()[:16]


def imported_distributions(*modules: str) -> set[str]:
    """The installed distributions (PyPI names) that ``modules`` import directly; the standard
    library and uninstalled optional imports have none."""
    providers = metadata.packages_distributions()
    return {dist for module in modules for name in third_party_imports(module)
            for dist in providers.get(name, ())}

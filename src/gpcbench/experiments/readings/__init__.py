"""Readings: measurements the table notes quote (docs/tables), each a module of this package
with ``measure(root, seed) -> dict`` (nested values, read from the work tree ``root`` the
pipeline made) and ``INPUTS`` (the files it reads, relative to ``root``). The rule
``workflow/rules/readings.smk`` writes ``reports/readings/<name>.json``: the values and the
reading's provenance (its code hash, the commit, the seed from the config), so a note quoting it
is marked stale when the code changes (:mod:`gpcbench.experiments.report.notes`)."""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

from threadpoolctl import threadpool_limits

from gpcbench.provenance import (git_commit, imported_distributions, imported_modules,
                                 source_digest)

#: Every reading, by name (its module's).
READINGS = sorted(module.name for module in pkgutil.iter_modules(__path__))


def reading_module(name: str) -> str:
    """The module path of reading ``name``."""
    if name not in READINGS:
        raise ValueError(f"unknown reading '{name}' (known: {', '.join(READINGS)})")
    return f"{__name__}.{name}"


def reading_code_hash(name: str) -> str:
    """SHA-256 over the sources of the reading's module and the gpcbench modules it imports,
    transitively, and the versions of the distributions those import (as a method's code hash,
    :func:`gpcbench.experiments.registry.method_code_hash`)."""
    modules = imported_modules(reading_module(name))
    return source_digest(modules, packages=imported_distributions(*modules))


def reading_inputs(name: str) -> list[str]:
    """The files reading ``name`` reads, relative to the work tree."""
    return list(importlib.import_module(reading_module(name)).INPUTS)


def run_reading(name: str, out: Path, seed: int, root: Path = Path(".")) -> dict:
    """Measure reading ``name`` on the work tree ``root`` and write its output to ``out``."""
    module = importlib.import_module(reading_module(name))  # first: loads every BLAS it uses
    with threadpool_limits(1):  # one core, as a fold job's fit (and no oversubscription)
        values = module.measure(Path(root), seed)
    output = {"reading": name, "code_hash": reading_code_hash(name), "commit": git_commit(),
              "seed": seed, "values": values}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(output, indent=1) + "\n")
    return output

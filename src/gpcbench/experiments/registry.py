"""Method registry: name -> estimator factory, printed label and the code its results depend on.

Adding a method is one ``register(MethodSpec(...))`` call in a module of
``gpcbench.experiments.methods`` (every module there is imported, none is listed); the Snakemake
rules read the registry, so they never change, and neither does this module. Each fold job carries :func:`method_code_hash` in its
``params``: Snakemake reruns a job when its params change, so editing any module a method's
factory reaches reruns exactly that method's folds (and the reports),
while new file times (a fresh clone) rerun nothing.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
import textwrap
from dataclasses import dataclass, field
from typing import Callable

from gpcbench.provenance import (import_targets, imported_distributions, imported_modules,
                                 source_digest)

#: Third-party packages whose code runs in every fit: their versions enter every method's hash,
#: beside those of the distributions the method's own modules import (GPy for its rows, say).
FIT_PACKAGES = ("numpy", "scipy", "scikit-learn", "numba", "llvmlite")
# Modules every fold result depends on, whatever the method.
COMMON_MODULES = (
    "gpcbench.experiments.run_fold",
    "gpcbench.experiments.metrics",
    "gpcbench.data.dataset",
)


@dataclass(frozen=True)
class FitContext:
    """What a factory may use to build an estimator for one fold.

    ``upstream`` maps ``"<method>/fold<k>"`` to the result record of a job this one depends
    on (warm starts, kernels learned by another method), as declared by ``MethodSpec.upstream``.
    """

    options: dict
    seed: int
    n_jobs: int
    feature_types: tuple[str, ...]
    fold: int
    upstream: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MethodSpec:
    """One row of the papers' tables.

    Parameters
    ----------
    name : str
        Slug used in file paths and the config (``[a-z0-9_-]+``).
    label : str
        The method name exactly as printed in the papers' tables.
    factory : callable
        ``factory(ctx: FitContext) -> estimator`` with ``fit``/``predict``/``predict_proba``;
        it and every gpcbench module its module imports are hashed into the job's params.
    probabilistic : bool
        Whether ``predict_proba`` gives real probabilities (else no NLPD is reported).
    upstream : callable
        ``upstream(fold, options) -> list[(method, fold)]``: results this fold job needs
        first (``options`` = the method's options from the config).
    options : dict
        Option name -> JSON schema of the options the config may pass to the factory
        (``ctx.options``); any other key is a config error (see
        :mod:`gpcbench.experiments.options`).
    decision_regions : bool
        Whether a decision-regions figure can refit the method from its fold record (its
        ``hyperparameters`` are the per-class covariances of the softmax Laplace GP, see
        :func:`~gpcbench.estimators.laplace_softmax.softmax_laplace_predict`).
    """

    name: str
    label: str
    factory: Callable[[FitContext], object]
    probabilistic: bool = True
    upstream: Callable[[int, dict], list] = lambda fold, options: []
    options: dict = field(default_factory=dict)
    decision_regions: bool = False


METHODS: dict[str, MethodSpec] = {}


class UnknownMethodError(KeyError):
    def __str__(self):
        return self.args[0]


def register(spec: MethodSpec) -> MethodSpec:
    if spec.name in METHODS:
        raise ValueError(f"method '{spec.name}' is registered twice")
    METHODS[spec.name] = spec
    return spec


def method_spec(name: str) -> MethodSpec:
    try:
        return METHODS[name]
    except KeyError:
        raise UnknownMethodError(
            f"unknown method '{name}'; known: {', '.join(sorted(METHODS))}") from None


def decision_region_methods() -> list[str]:
    """The registered methods a decision-regions figure can show, sorted."""
    return sorted(name for name, spec in METHODS.items() if spec.decision_regions)


def factory_code(factory) -> tuple[list[str], set[str]]:
    """What a factory runs: the source of the factory and of every gpcbench function it calls
    (followed through their globals), the values of the constants they read, and the gpcbench
    modules they import (lazy imports included) or take names from."""
    code, modules, todo, seen = [], set(), [factory], set()
    while todo:
        function = todo.pop()
        if function in seen:
            continue
        seen.add(function)
        source = textwrap.dedent(inspect.getsource(function))
        code.append(source)
        for node in ast.walk(ast.parse(source)):
            modules |= import_targets(node)
            value = function.__globals__.get(node.id) if isinstance(node, ast.Name) else None
            origin = getattr(value, "__module__", None) or ""
            if inspect.isfunction(value) and origin.startswith("gpcbench.experiments.methods"):
                todo.append(value)
            elif origin.startswith("gpcbench."):
                modules.add(origin)
            elif isinstance(value, (dict, tuple, list, str, int, float)):
                code.append(f"{node.id} = {value!r}")
    return code, modules


def method_modules(name: str) -> list[str]:
    """The gpcbench modules a method's results depend on: the common modules and every module
    its factory reaches (:func:`factory_code`), transitively through their imports; a sibling
    method's estimator in the same family module is not among them."""
    _, modules = factory_code(method_spec(name).factory)
    return imported_modules(*COMMON_MODULES, *modules)


@functools.cache
def method_code_hash(name: str) -> str:
    """SHA-256 over the source of :func:`method_modules`, the factory's code
    (:func:`factory_code`) and the versions of :data:`FIT_PACKAGES` and of the distributions
    those modules import."""
    spec = method_spec(name)
    modules = method_modules(name)
    return source_digest(modules, *factory_code(spec.factory)[0],
                         packages=set(FIT_PACKAGES) | imported_distributions(*modules))


def _register_method_families() -> None:
    """Import every module of :mod:`gpcbench.experiments.methods`: each registers its family,
    so adding a family is adding a module (and no method's hash changes)."""
    package = importlib.import_module("gpcbench.experiments.methods")
    for family in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        importlib.import_module(family.name)


_register_method_families()

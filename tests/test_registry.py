"""Method registry: every module a method's numerics import is hashed into its fold jobs."""

import ast
import importlib.util

import pytest

from gpcbench.experiments import registry


def _gpcbench_imports(module: str) -> set[str]:
    """The gpcbench modules ``module`` imports anywhere in its source (functions included)."""
    tree = ast.parse(open(importlib.util.find_spec(module).origin).read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("gpcbench.")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (
                node.module == "gpcbench" or node.module.startswith("gpcbench.")):
            for alias in node.names:  # "from package import submodule" names the submodule
                name = f"{node.module}.{alias.name}"
                package = importlib.util.find_spec(node.module).submodule_search_locations
                found.add(name if package and importlib.util.find_spec(name) else node.module)
    return found - {"gpcbench"}


def _closure(modules) -> set[str]:
    seen, todo = set(), list(modules)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(_gpcbench_imports(module))
    return seen


@pytest.mark.parametrize("name", sorted(registry.METHODS))
def test_method_modules_cover_everything_they_import(name):
    spec = registry.METHODS[name]
    listed = set(spec.modules) | set(registry.COMMON_MODULES)
    assert _closure(spec.modules) <= listed, sorted(_closure(spec.modules) - listed)


#: Options a factory consumes itself instead of passing them to its estimator.
FACTORY_OPTIONS = {"warm_start"}
#: Hyperparameters an upstream job records: eq. 13's block (EP also records epsilon).
FITTED = {"theta0": 1.0, "theta1": 1e-4, "theta2": 1e-3, "inverse_lengthscale": 0.05}


def _fitted(method: str) -> dict:
    return {**FITTED, "epsilon": 0.0} if method.startswith("gpc-ep") else FITTED


@pytest.mark.parametrize("name", sorted(registry.METHODS))
def test_declared_options_reach_the_estimator(name):
    """The config schema of a method's options (its registry entry) names only parameters of
    the estimator its factory builds, each with a valid JSON schema."""
    import jsonschema

    from gpcbench.experiments.options import options_schema

    spec = registry.METHODS[name]
    jsonschema.Draft202012Validator.check_schema(options_schema(spec.options))
    upstream = {f"{method}/fold{fold}": {"status": "ok", "hyperparameters": _fitted(method)}
                for method, fold in spec.upstream(1, {})}
    ctx = registry.FitContext(options={}, seed=0, n_jobs=1, feature_types=("continuous",) * 3,
                              fold=1, upstream=upstream)
    params = set(spec.factory(ctx).get_params(deep=False))
    assert set(spec.options) - FACTORY_OPTIONS <= params

"""Method registry: every module a method's numerics import is hashed into its fold jobs."""

import pytest

from gpcbench import provenance
from gpcbench.experiments import registry

REAL_VERSION = provenance.metadata.version


def _hashes(monkeypatch, module="gpcbench.nothing", text=b"# edited\n",
            distribution="nothing", version="999"):
    """method_code_hash of every method after appending ``text`` to ``module``'s source and
    with ``distribution`` reported at ``version``."""
    real = provenance.module_source
    monkeypatch.setattr(provenance, "module_source",
                        lambda name: real(name) + (text if name == module else b""))
    monkeypatch.setattr(provenance.metadata, "version",
                        lambda name: version if name == distribution else REAL_VERSION(name))
    registry.method_code_hash.cache_clear()
    try:
        return {name: registry.method_code_hash(name) for name in registry.METHODS}
    finally:
        registry.method_code_hash.cache_clear()


def _rehash(monkeypatch, module, text=b"# edited\n"):
    return _hashes(monkeypatch, module=module, text=text)


def test_editing_a_module_reached_only_indirectly_reruns_the_method(monkeypatch):
    """gpcbench.learning.stopping is imported by learning.evidence_lbfgs, which estimators.ep
    imports; the EP methods' factories never name it. SVM-EP only reads the covariance its
    upstream GPC-EP job learned (its reruns follow that job's result file, not this hash)."""
    before = _rehash(monkeypatch, "gpcbench.nothing")
    after = _rehash(monkeypatch, "gpcbench.learning.stopping")
    changed = {name for name in before if before[name] != after[name]}
    assert {"gpc-ep-s-soft", "gpc-ep-m-soft", "gpc-ep-mc-m-soft"} <= changed
    assert not changed & {"lda", "knn", "fbgkm", "sgpc", "svm-cv-soft", "svm-ep-s-soft"}


def test_editing_a_module_no_method_imports_reruns_nothing(monkeypatch):
    assert _rehash(monkeypatch, "gpcbench.nothing") == _rehash(monkeypatch, "gpcbench.cli")


def test_every_sampler_module_is_in_the_gkm_hash():
    """The ZDJ sampler's modules, listed by hand here as an independent check of the graph."""
    listed = {f"gpcbench.mcmc.{name}" for name in (
        "active_set", "bgkm", "cholesky", "gkm", "gkm_multiclass", "gkm_predict",
        "holmes_held", "moves", "sweep_progress")} | {"gpcbench.kernels.rbf"}
    assert listed <= set(registry.method_modules("fbgkm"))
    assert "gpcbench.estimators.ep" not in registry.method_modules("fbgkm")


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


def test_a_sibling_in_the_same_family_module_reruns_nothing(monkeypatch):
    """lda, 1-NN and k-NN share experiments/methods/baselines.py; editing k-NN's estimator
    module leaves LDA's hash alone."""
    before = _rehash(monkeypatch, "gpcbench.nothing")
    after = _rehash(monkeypatch, "gpcbench.baselines.neighbors")
    assert before["lda"] == after["lda"]
    assert before["knn"] != after["knn"] and before["1nn"] != after["1nn"]


def _hashes_with_version(monkeypatch, distribution):
    return _hashes(monkeypatch, distribution=distribution)


def test_a_new_version_of_an_imported_distribution_reruns_its_importers(monkeypatch):
    """run_fold imports threadpoolctl, so every method depends on its version; no method's
    modules import pandas (only the reports do), so a new pandas reruns no fold."""
    before = _hashes_with_version(monkeypatch, "nothing")
    bumped = _hashes_with_version(monkeypatch, "threadpoolctl")
    assert all(before[name] != bumped[name] for name in before)
    assert _hashes_with_version(monkeypatch, "pandas") == before


def test_every_module_of_the_methods_package_registers_its_family():
    """Families are found, not listed: each module of gpcbench/experiments/methods registered
    at least one method, so adding one needs no edit of the registry (every hash's module)."""
    import pathlib

    from gpcbench.experiments import methods

    families = {path.stem for path in pathlib.Path(methods.__file__).parent.glob("*.py")}
    registering = {spec.factory.__module__.rsplit(".", 1)[1] for spec in registry.METHODS.values()}
    assert families - {"__init__"} == registering

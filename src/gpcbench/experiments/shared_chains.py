"""FBGKM and SGPC of a fold on one set of chains, through a cache the two fold jobs share.

ZDJ's SGPC is the FBGKM sampler with another predictor (ZDJ sec. 4.2), so the pair's chains
need sampling once a fold: the SGPC job declares the FBGKM job of its fold upstream and takes
its seed when their options agree (:mod:`gpcbench.experiments.methods.gkm`). The FBGKM job
stores its fitted estimator here, under a key of everything the chains depend on: the sampler's code (the source of :mod:`gpcbench.estimators.gkm` and of the
gpcbench modules it imports, the numerical packages' versions), the estimator's parameters
(the seed among them) and the training data. The SGPC job finds the entry, fits from it
(:meth:`~gpcbench.estimators.gkm.FBGKMClassifier.fit_from_chains`, exactly the fit it would
have sampled) and removes it; its ``diagnostics_["chains"]`` names the method that sampled the
chains, with that fit's wall and CPU seconds, which the reports add to its time (the method's
cost on its own), while the job's own CPU seconds are what the protocol spent.

The cache is ``results/chains`` under the job's working directory (Snakemake's), or
``$GPCBENCH_CHAIN_CACHE``. Entries are written atomically; an entry that is missing or
unreadable means sampling again, never another result. An entry no SGPC job takes (SGPC not in
the data set's methods, or with other options) stays; the directory may be removed at any
time.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import joblib
import numpy as np

from gpcbench.estimators.gkm import FBGKMClassifier, SGPCClassifier
from gpcbench.provenance import imported_modules, source_digest

CACHE_VARIABLE = "GPCBENCH_CHAIN_CACHE"
DEFAULT_CACHE = Path("results", "chains")
#: Packages whose code runs in the chains (as gpcbench.experiments.registry.FIT_PACKAGES).
SAMPLER_PACKAGES = ("numpy", "scipy", "scikit-learn", "numba", "llvmlite")


def cache_directory() -> Path:
    return Path(os.environ.get(CACHE_VARIABLE) or DEFAULT_CACHE)


def sampler_digest() -> str:
    """The code hash of the chains: :mod:`gpcbench.estimators.gkm`, what it imports, and the
    numerical packages' versions."""
    return source_digest(imported_modules("gpcbench.estimators.gkm"), packages=SAMPLER_PACKAGES)


def chain_key(estimator, X, y) -> str:
    """SHA-256 over the sampler's code, ``estimator``'s parameters and the training data."""
    digest = hashlib.sha256(sampler_digest().encode())
    digest.update(json.dumps(estimator.get_params(), sort_keys=True, default=repr).encode())
    for array in (np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y)):
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def load_entry(path: Path) -> dict | None:
    """The cache entry at ``path``, or None when there is none or it cannot be read."""
    try:
        return joblib.load(path)
    except (OSError, EOFError, ValueError, KeyError, AttributeError, ImportError):
        return None


def store_entry(path: Path, entry: dict) -> None:
    """Write ``entry`` to ``path`` atomically (a temporary file in its directory, renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(handle)
    try:
        joblib.dump(entry, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class SharedChains:
    """Mixin for the FBGKM and SGPC classifiers. A class that ``takes`` fits from the cache's
    entry for its parameters and data when there is one (and removes it); otherwise ``fit``
    samples, and a class that ``stores`` leaves the fit in the cache."""

    method = ""
    stores = takes = False

    def fit(self, X, y):
        path = cache_directory() / f"{chain_key(self, X, y)}.joblib"
        entry = load_entry(path) if self.takes else None
        if entry is None:
            wall, cpu = time.perf_counter(), time.process_time()
            super().fit(X, y)
            if self.stores:
                store_entry(path, {"estimator": self, "method": self.method,
                                   "fit_s": time.perf_counter() - wall,
                                   "cpu_s": time.process_time() - cpu})
            return self
        self.fit_from_chains(entry["estimator"])
        self.diagnostics_ = {**self.diagnostics_, "chains": {
            "sampled_by": entry["method"], "fit_s": entry["fit_s"], "cpu_s": entry["cpu_s"],
            "random_state": self.random_state}}
        path.unlink(missing_ok=True)
        return self


class SharedFBGKM(SharedChains, FBGKMClassifier):
    __doc__ = FBGKMClassifier.__doc__
    method = "fbgkm"
    stores = True


class SharedSGPC(SharedChains, SGPCClassifier):
    __doc__ = SGPCClassifier.__doc__
    method = "sgpc"
    takes = True


#: The method slug -> its classifier on shared chains.
CLASSES = {"fbgkm": SharedFBGKM, "sgpc": SharedSGPC}

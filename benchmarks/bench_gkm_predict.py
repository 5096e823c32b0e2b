"""FBGKM / SGPC prediction time (Zhang, Dai & Jordan 2011, sections 3.3 and 4.2) on one core.

Fits FBGKMClassifier and SGPCClassifier once on synthetic data (n = 400, p = 20,
k_max = 400; 2 chains of 2,000 sweeps, 1,000 burn-in, thin 1: 2,000 kept draws) and times
predict_proba on 7,000 test points against two references measured in the same run:

(i)  the per-draw implementation predict_proba used before the draws were batched (one
     Cholesky of P and one triangular solve on the test kernels per SGPC draw; a copy below,
     the ``old_*`` functions, kept only as this reference);
(ii) one GEMM of shape (n_test x 400) @ (400 x draws), as many flops as one product of the
     test kernels with every draw's coefficients.

Prints seconds, the ratios, the largest absolute probability difference from (i), and the same
for every 5th kept draw (the spacing of the paper's thin = 5: SGPC's windows of consecutive
draws share fewer active points).

    python benchmarks/bench_gkm_predict.py [--threads 1] [--n-test 7000]
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular
from scipy.special import ndtr
from threadpoolctl import threadpool_limits

from gpcbench.kernels.rbf import rbf
from gpcbench.mcmc.gkm_multiclass import add_class_probabilities
from gpcbench.mcmc.gkm_predict import QUADRATURE
from gpcbench.models import FBGKMClassifier, SGPCClassifier

N_TRAIN, P, K_MAX = 400, 20, 400
SETTINGS = {"n_sweeps": 2000, "burn_in": 1000, "thin": 1, "k_max": K_MAX, "n_chains": 2,
            "random_state": 0}


# --- reference (i): the per-draw prediction before batching, copied unchanged -----------------

def old_predict_proba(clf, X):
    """OLD reference: ``predict_proba`` as it was before batching (per-draw loop)."""
    p = np.clip(old_positive_probability(clf, X), 0.0, 1.0)
    if p.ndim == 2:
        return p / p.sum(axis=1, keepdims=True)
    return np.column_stack([1.0 - p, p])


def old_positive_probability(clf, X):
    """OLD reference: one draw at a time, K_test[:, cols] sliced per draw."""
    groups = np.unique(clf.theta_, axis=0, return_inverse=True)[1].ravel()
    total = np.zeros(X.shape[0]) if clf.coef_.ndim == 2 else np.zeros((X.shape[0],
                                                                        clf.coef_.shape[2]))
    for group in np.unique(groups):
        draws = np.flatnonzero(groups == group)
        theta = clf.theta_[draws[0]]
        union = np.unique(clf.active_[draws][clf.active_[draws] >= 0])
        K_test = rbf(X, clf.X_train_[union], theta)
        train = old_train_blocks(clf, union, theta) if clf._gp else None
        for t in draws:
            act = clf.active_[t][clf.active_[t] >= 0]
            cols = np.searchsorted(union, act)
            total += old_draw_probability(clf, t, cols, K_test[:, cols], train)
    return total / clf.active_.shape[0]


def old_train_blocks(clf, union, theta):
    """OLD reference: K(X_train, X_union) rows at the union, Gram matrix, column sums."""
    K = rbf(clf.X_train_, clf.X_train_[union], theta)
    return K[union], K.T @ K, K.sum(axis=0)


def old_sgpc_predictive(clf, t, cols, K_test, train):
    """OLD reference: section 4.2 with one Cholesky of P = g K_gg + K_g'K_g per draw."""
    K_union, gram, sums = train
    u = clf.coef_[t, 0]
    P = clf.hyper_[t, 0] * (K_union[np.ix_(cols, cols)] + clf.jitter * np.eye(cols.size))
    P += gram[np.ix_(cols, cols)]
    R = cholesky(P, lower=True)
    weights = cho_solve((R, True),
                        clf.aux_[t, 1:cols.size + 1] - np.multiply.outer(sums[cols], u))
    V = solve_triangular(R, K_test.T, lower=True)
    return u + K_test @ weights, np.sqrt(1.0 + np.einsum("ij,ij->j", V, V))


def old_draw_probability(clf, t, cols, K_test, train):
    """OLD reference: one draw's Phi(u + k*' beta) or SGPC's Phi(m / sqrt(v))."""
    if clf._gp:
        F, scale = old_sgpc_predictive(clf, t, cols, K_test, train)
    else:
        F, scale = clf.coef_[t, 0] + K_test @ clf.coef_[t, 1:cols.size + 1], 1.0
    if clf.coef_.ndim == 2:
        return ndtr(F / scale)
    out = np.zeros(F.shape)
    add_class_probabilities(np.ascontiguousarray(F), np.broadcast_to(scale, F.shape[:1]).copy(),
                            QUADRATURE, out)
    return out


# --- the benchmark ------------------------------------------------------------------------------

def synthetic(n_test, seed=0):
    """Inputs N(0, I_20); labels from x_1 + x_2^2 - 1 plus N(0, 0.25) noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_TRAIN + n_test, P))
    y = (X[:, 0] + X[:, 1] ** 2 - 1 + 0.5 * rng.normal(size=X.shape[0]) > 0).astype(int)
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:]


def every(clf, step):
    """The fitted estimator with every ``step``-th kept draw only."""
    thinned = copy.copy(clf)
    for name in ("active_", "coef_", "aux_", "theta_", "hyper_"):
        setattr(thinned, name, getattr(clf, name)[::step])
    return thinned


def seconds(f, repeat=1):
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = f()
        best = min(best, time.perf_counter() - start)
    return best, result


def gemm_seconds(n_test, n_draws):
    rng = np.random.default_rng(1)
    A, B = rng.random((n_test, K_MAX)), rng.random((K_MAX, n_draws))
    return seconds(lambda: A @ B, repeat=3)[0]


def compare(name, clf, X_test):
    draws = clf.active_.shape[0]
    sets = {tuple(np.sort(a[a >= 0])) for a in clf.active_}
    new, proba = seconds(lambda: clf.predict_proba(X_test), repeat=2)
    old, reference = seconds(lambda: old_predict_proba(clf, X_test))
    gemm = gemm_seconds(X_test.shape[0], draws)
    print(f"{name:>22s} {draws:6d} {len(sets):9d} {old:8.2f} {new:8.2f} {gemm:7.2f} "
          f"{old / new:8.1f} {new / gemm:9.2f} {np.abs(proba - reference).max():10.1e}",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n-test", type=int, default=7000)
    args = parser.parse_args()
    X, y, X_test = synthetic(args.n_test)
    with threadpool_limits(args.threads):
        fits = {}
        for cls in (FBGKMClassifier, SGPCClassifier):
            fit, clf = seconds(lambda cls=cls: cls(**SETTINGS).fit(X, y))
            sizes = [int((a >= 0).sum()) for a in clf.active_]
            rates = ", ".join(f"{k} {v:.2f}" for k, v in clf.acceptance_rates_.items()
                              if np.isfinite(v))
            print(f"{cls.__name__}: fit {fit:.1f} s; n_gamma {min(sizes)}-{max(sizes)}; "
                  f"acceptance {rates}")
            fits[cls.__name__] = clf
        print(f"\npredict_proba on {args.n_test} test points, {args.threads} thread(s); old = "
              f"(i) per-draw reference, gemm = (ii) ({args.n_test} x {K_MAX}) @ ({K_MAX} x draws)")
        print(f"{'':>22s} {'draws':>6s} {'distinct':>9s} {'old s':>8s} {'new s':>8s} "
              f"{'gemm s':>7s} {'old/new':>8s} {'new/gemm':>9s} {'max |dp|':>10s}")
        for name, clf in fits.items():
            compare(name, clf, X_test)
        for name, clf in fits.items():
            compare(f"{name} 1/5", every(clf, 5), X_test)


if __name__ == "__main__":
    main()

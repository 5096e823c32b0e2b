"""GP regression as the exact special case of EP (Rodrigues sec. 4, Rodrigues eqs. 29-39).

With a Gaussian likelihood h_i(f_i, y_i) = N(y_i | f_i, sigma^2) the "approximate" posterior
of step 2 of EP is exact (Rodrigues eqs. 29-33): the tilted distribution N(f_i | mu_-i, sigma_-i^2)
N(y_i | f_i, sigma^2) is already Gaussian, so moment matching returns the likelihood itself as
the site (tilde mu_i = y_i, tilde sigma_i^2 = sigma^2, whatever the cavity), every site is
exact after one sweep, and the EP evidence is the closed-form marginal likelihood
log N(y | 0, K + sigma^2 I) (Rodrigues eqs. 34-39).

This module checks that on real data: :func:`compare` fits
:class:`~gpcbench.estimators.ep.EPGaussianProcessRegressor` (EP machinery with Gaussian sites)
on each training fold and evaluates :func:`exact_gp_regression` (closed form, no EP) with the
same covariance matrix, then reports the differences of log Z and of the predictive means and
variances. :func:`write_exact_regression` is the ``gpcbench exact-regression`` command.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.linalg import cho_solve, cholesky, solve_triangular

#: Fixed hyperparameters of the check (no learning): K&G eq. 13 with one shared inverse lengthscale
#: of about 1/d for the 16 standardised Boston inputs (so that points are correlated), the
#: regressor's default jitter theta2 and sigma^2 = 0.1 for a unit-variance target.
DEFAULT_HYPERPARAMETERS = {
    "theta0": 1.0, "theta1": 0.1, "theta2": 1e-6, "inverse_lengthscale": 0.1,
    "noise_variance": 0.1,
}
#: Differences below this count as agreement in the verdict line (and in the tests).
TOLERANCE = 1e-8
#: The columns of EP's differences from the closed form.
DIFFERENCES = ("abs_log_z_diff", "rel_log_z_diff", "one_sweep_abs_log_z_diff",
               "max_abs_mean_diff", "max_rel_variance_diff")
#: Decimal places each float column is written to (CSV and markdown alike). The differences
#: are rounding error (1e-14 to 1e-10 on Boston), whose digits vary with the BLAS library, its
#: thread count and the CPU, as do log Z's last digits: at the tolerance's 8 decimals (and 6
#: for log Z and the RMSE) the table is the same bytes wherever it is made, but for a value
#: within rounding error of a half unit of its last decimal.
DECIMALS = {"ep_log_z": 6, "exact_log_z": 6, "test_rmse": 6, **dict.fromkeys(DIFFERENCES, 8)}

COLUMNS = {  # csv column -> markdown header
    "fold": "fold",
    "n_train": "n train",
    "n_test": "n test",
    "ep_sweeps": "EP sweeps",
    "ep_log_z": "EP log Z",
    "exact_log_z": "exact log Z",
    "abs_log_z_diff": "abs diff log Z",
    "rel_log_z_diff": "rel diff log Z",
    "one_sweep_abs_log_z_diff": "abs diff log Z, 1 sweep",
    "max_abs_mean_diff": "max abs diff mean",
    "max_rel_variance_diff": "max rel diff var",
    "test_rmse": "test RMSE",
}


@dataclass(frozen=True)
class ExactRegression:
    """Closed-form GP regression: latent predictive mean and variance at the test points and
    the log marginal likelihood log p(y | X)."""

    mean: np.ndarray
    variance: np.ndarray
    log_marginal_likelihood: float


def exact_gp_regression(K, K_star, k_star_diag, y, noise_variance) -> ExactRegression:
    """GP regression in closed form, GPML alg. 2.1 (Rasmussen & Williams 2006).

    Parameters
    ----------
    K : array of shape (n, n)
        Prior covariance of the training latents f (Rodrigues' K).
    K_star : array of shape (n, m)
        Covariances between training and test latents, K(X, X*) (GPML's k_*, one column per
        test point).
    k_star_diag : array of shape (m,)
        Prior variances k(x*, x*) of the test latents.
    y : array of shape (n,)
        Training targets.
    noise_variance : float
        sigma^2 of the likelihood N(y_i | f_i, sigma^2).

    Returns
    -------
    ExactRegression
        Predictive mean and variance of the latent f* (not of a noisy y*) and log Z.
    """
    K, K_star = np.asarray(K, dtype=float), np.asarray(K_star, dtype=float)
    y, k_star_diag = np.asarray(y, dtype=float), np.asarray(k_star_diag, dtype=float)
    n = y.size
    # GPML alg. 2.1 line 2: L = cholesky(K + sigma^2 I), the covariance of Rodrigues eq. 37's
    # N(y | 0, K + sigma^2 I)
    L = cholesky(K + noise_variance * np.eye(n), lower=True)
    # line 3: alpha = L^T \ (L \ y) = (K + sigma^2 I)^-1 y
    alpha = cho_solve((L, True), y)
    # line 4: predictive mean f*_bar = k_*^T alpha
    mean = K_star.T @ alpha
    # lines 5-6: v = L \ k_*, V[f*] = k(x*, x*) - v^T v
    v = solve_triangular(L, K_star, lower=True)
    variance = k_star_diag - np.sum(v**2, axis=0)
    # line 7: log p(y | X) = -1/2 y^T alpha - sum_i log L_ii - n/2 log 2 pi, which is
    # Rodrigues eq. 39 with log|K + sigma^2 I| = 2 sum_i log L_ii
    log_z = -0.5 * y @ alpha - np.sum(np.log(np.diag(L))) - 0.5 * n * np.log(2.0 * np.pi)
    return ExactRegression(mean, variance, float(log_z))


def compare(X, y, folds, hyperparameters=None, *, discrete_features=None) -> pd.DataFrame:
    """EP with Gaussian sites against closed-form GP regression, one row per fold.

    Each fold standardises inputs and target with its training rows' statistics, fits
    :class:`~gpcbench.estimators.ep.EPGaussianProcessRegressor` with fixed ``hyperparameters``
    (no learning) and evaluates :func:`exact_gp_regression` with the fitted estimator's
    ``covariance_``, so both sides share K, K* and k** but not the inference. EP is also run for
    exactly one sweep (Rodrigues sec. 4: the sites are exact after it).

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
    y : array of shape (n_samples,)
        Continuous target.
    folds : iterable of (train indices, test indices)
    hyperparameters : dict, optional
        theta0, theta1, theta2, inverse_lengthscale, noise_variance (defaults:
        :data:`DEFAULT_HYPERPARAMETERS`, missing keys filled from them).
    discrete_features : array-like of bool or int, optional
        Discrete inputs (1 - delta distance, K&G eq. 14).

    Returns
    -------
    pandas.DataFrame
        Columns as in :data:`COLUMNS`; differences are EP minus exact, the relative log Z
        difference is over |exact log Z|, the relative variance difference over the exact
        variance; means, RMSE and variances are in standardised target units.
    """
    from gpcbench.estimators.ep import EPGaussianProcessRegressor
    from gpcbench.inference.ep import expectation_propagation

    values = {**DEFAULT_HYPERPARAMETERS, **(hyperparameters or {})}
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    rows = []
    for fold, (train, test) in enumerate(folds):
        X_train, X_test = _standardize(X[train], X[test])
        y_mean, y_scale = y[train].mean(), _scale(y[train])
        y_train, y_test = (y[train] - y_mean) / y_scale, (y[test] - y_mean) / y_scale

        ep = EPGaussianProcessRegressor(
            **values, learn_hyperparameters=False, discrete_features=discrete_features
        ).fit(X_train, y_train)
        ep_mean, ep_std = ep.predict(X_test, return_std=True)

        covariance = ep.covariance_
        K = covariance(X_train)
        exact = exact_gp_regression(K, covariance(X_train, X_test), covariance.diag(X_test),
                                    y_train, values["noise_variance"])
        one_sweep = expectation_propagation(K, y_train, ep.likelihood_, max_sweeps=1)

        log_z_diff = abs(ep.log_evidence_ - exact.log_marginal_likelihood)
        rows.append({
            "fold": fold,
            "n_train": int(len(train)),
            "n_test": int(len(test)),
            "ep_sweeps": int(ep.ep_.n_sweeps),
            "ep_log_z": float(ep.log_evidence_),
            "exact_log_z": exact.log_marginal_likelihood,
            "abs_log_z_diff": log_z_diff,
            "rel_log_z_diff": log_z_diff / abs(exact.log_marginal_likelihood),
            "one_sweep_abs_log_z_diff": abs(one_sweep.log_evidence
                                            - exact.log_marginal_likelihood),
            "max_abs_mean_diff": float(np.max(np.abs(ep_mean - exact.mean), initial=0.0)),
            "max_rel_variance_diff": float(np.max(
                np.abs(ep_std**2 - exact.variance) / exact.variance, initial=0.0)),
            "test_rmse": float(np.sqrt(np.mean((exact.mean - y_test) ** 2))),
        })
    return pd.DataFrame(rows, columns=list(COLUMNS))


def kfold_splits(n_rows: int, n_folds: int, seed: int):
    """Shuffled k-fold splits (scikit-learn KFold) from a seed derived from ``seed``."""
    from sklearn.model_selection import KFold

    from gpcbench.seeds import derive_seed

    kfold = KFold(n_splits=n_folds, shuffle=True,
                  random_state=derive_seed(seed, "rodrigues2014_exact_regression", "split"))
    return list(kfold.split(np.zeros((n_rows, 1))))


def write_exact_regression(data: Path, target: str, seed: int, out_md: Path, out_csv: Path, *,
                           n_folds: int = 10, hyperparameters=None) -> pd.DataFrame:
    """The ``gpcbench exact-regression`` command: regress the continuous input column ``target``
    of a processed data set on its other inputs (the class label is not used), compare EP with
    the closed form over ``n_folds`` folds and write the table as markdown and CSV (atomically).
    """
    from gpcbench.data.dataset import load_dataset
    from gpcbench.io import atomic_write_text

    dataset = load_dataset(Path(data))
    if target not in dataset.feature_names:
        raise ValueError(f"no input column '{target}' in {data}; columns: "
                         f"{', '.join(dataset.feature_names)}")
    column = dataset.feature_names.index(target)
    if dataset.feature_types[column] != "continuous":
        raise ValueError(f"column '{target}' of {data} is {dataset.feature_types[column]}, "
                         "not continuous")
    keep = [m for m in range(dataset.X.shape[1]) if m != column]
    if not keep:
        raise ValueError(f"{data} has no input column besides '{target}'")
    if not 2 <= n_folds <= dataset.X.shape[0]:
        raise ValueError(f"cannot make {n_folds} folds of {dataset.X.shape[0]} rows")
    values = {**DEFAULT_HYPERPARAMETERS, **(hyperparameters or {})}
    table = compare(dataset.X[:, keep], dataset.X[:, column],
                    kfold_splits(dataset.X.shape[0], n_folds, seed), values,
                    discrete_features=dataset.discrete_mask[keep])
    inputs = [dataset.feature_names[m] for m in keep]
    setup = (f"Data: `{Path(data).name}` ({dataset.X.shape[0]} rows), target `{target}` regressed "
             f"on the other {len(inputs)} inputs ({', '.join(inputs)}); inputs and target "
             f"standardised per training fold; {n_folds}-fold CV (KFold, shuffled, seed "
             f"{seed}); fixed hyperparameters " + ", ".join(f"{k} = {v:g}" for k, v in values.items())
             + " (eq. 13 of Kim & Ghahramani 2006, one shared inverse lengthscale, discrete "
             "inputs by 1 - delta).")
    table = at_written_precision(table)
    atomic_write_text(Path(out_csv), formatted(table).to_csv(index=False))
    atomic_write_text(Path(out_md), render_markdown(table, setup))
    return table


def at_written_precision(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each float column rounded to its :data:`DECIMALS` (-0 as 0)."""
    return table.assign(**{name: table[name].round(places) + 0.0
                           for name, places in DECIMALS.items()})


def formatted(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each float column as text with its :data:`DECIMALS` places."""
    return table.assign(**{name: table[name].map(f"{{:.{places}f}}".format)
                           for name, places in DECIMALS.items()})


def render_markdown(table: pd.DataFrame, setup: str = "") -> str:
    """Title, what is checked, the set-up, the table (floats as :func:`formatted` writes them)
    and a one-line verdict."""
    shown = formatted(table).astype(str).rename(columns=COLUMNS)
    lines = [
        "# Rodrigues (2014): EP with Gaussian sites is exact GP regression",
        "",
        "Checked: Rodrigues (2014) sec. 4, eqs. 29-39 — with a Gaussian likelihood the tilted "
        "distributions of EP are Gaussian, so EP is exact for GP regression after one sweep: "
        "its log Z (eq. 23) is log N(y | 0, K + sigma^2 I) (eq. 39) and its predictive mean and "
        "variance are the closed-form ones (Rasmussen & Williams alg. 2.1, same K). EP runs "
        "until converged, which takes one sweep more than the one that makes it exact (that "
        "second sweep changes nothing); the `1 sweep` column stops EP after the first. "
        f"Differences are written to {DECIMALS['abs_log_z_diff']} decimal places, the "
        "tolerance's: rounding error, whose digits vary with the BLAS library, its thread count "
        "and the CPU, writes as 0.",
        "",
    ]
    if setup:
        lines += [setup, ""]
    header = "| " + " | ".join(shown.columns) + " |"
    rule = "|" + "|".join("---:" for _ in shown.columns) + "|"
    body = ["| " + " | ".join(row) + " |" for row in shown.itertuples(index=False)]
    lines += [header, rule, *body, "", verdict(table), ""]
    return "\n".join(lines)


def verdict(table: pd.DataFrame) -> str:
    """One line: the largest differences over the folds (at their :data:`DECIMALS`: one that
    rounds to 0 there reads as below half a unit of its last place) and whether all are below
    TOLERANCE."""
    worst = {name: float(table[name].max()) for name in
             ("abs_log_z_diff", "one_sweep_abs_log_z_diff", "max_abs_mean_diff",
              "max_rel_variance_diff")}
    agree = bool(len(table)) and all(np.isfinite(v) and v < TOLERANCE for v in worst.values())
    shown = {name: f"{value:.{DECIMALS[name]}f}" if round(value, DECIMALS[name])
             else f"< {0.5 * 10.0 ** -DECIMALS[name]:g}" for name, value in worst.items()}
    return (f"**Verdict: {'exact' if agree else 'NOT exact'}** (tolerance {TOLERANCE:g}) over "
            f"{len(table)} folds: max abs diff log Z {shown['abs_log_z_diff']} "
            f"({shown['one_sweep_abs_log_z_diff']} after one sweep), max abs diff of the "
            f"predictive mean {shown['max_abs_mean_diff']}, max relative diff of the "
            f"predictive variance {shown['max_rel_variance_diff']}.")


def _scale(values: np.ndarray) -> np.ndarray:
    """Standard deviation per column (1 for a constant one)."""
    scale = np.atleast_1d(np.std(values, axis=0)).astype(float)
    scale[scale == 0] = 1.0
    return scale if np.ndim(values) > 1 else scale[0]


def _standardize(X_train, X_test):
    """Zero mean, unit variance per column with the training rows' statistics (discrete columns
    too: their 1 - delta distance is invariant to affine recoding)."""
    mean, scale = X_train.mean(axis=0), _scale(X_train)
    return (X_train - mean) / scale, (X_test - mean) / scale

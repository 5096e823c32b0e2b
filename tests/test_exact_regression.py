"""Rodrigues (2014), section 4: EP with Gaussian sites is exact GP regression
(gpcbench.experiments.exact_regression and the ``gpcbench exact-regression`` command)."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal
from sklearn.model_selection import KFold

from gpcbench.cli import main
from gpcbench.data.dataset import Dataset, save_dataset
from gpcbench.experiments.exact_regression import COLUMNS, compare, exact_gp_regression
from gpcbench.kernels.covariance import Covariance


def test_exact_gp_regression_matches_brute_force_on_five_points():
    rng = np.random.default_rng(1)
    X, X_star = rng.normal(size=(5, 2)), rng.normal(size=(3, 2))
    covariance = Covariance(1.3, 0.2, 1e-6, [0.7, 0.4])
    K, K_star, k_star_diag = covariance(X), covariance(X, X_star), covariance.diag(X_star)
    y, noise = rng.normal(size=5), 0.3

    result = exact_gp_regression(K, K_star, k_star_diag, y, noise)

    Ky = K + noise * np.eye(5)
    mean = K_star.T @ np.linalg.solve(Ky, y)
    variance = k_star_diag - np.einsum("ij,ij->j", K_star, np.linalg.solve(Ky, K_star))
    sign, log_det = np.linalg.slogdet(Ky)
    log_z = -0.5 * (y @ np.linalg.solve(Ky, y) + log_det + 5 * np.log(2 * np.pi))
    assert sign > 0
    np.testing.assert_allclose(result.mean, mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(result.variance, variance, rtol=1e-12, atol=1e-12)
    assert result.log_marginal_likelihood == pytest.approx(log_z, abs=1e-12)
    assert result.log_marginal_likelihood == pytest.approx(
        multivariate_normal(np.zeros(5), Ky).logpdf(y), abs=1e-10)
    # the posterior is informative: variances shrink below the prior ones, but stay positive
    assert np.all((result.variance > 0) & (result.variance < k_star_diag))


def _synthetic(n=40, seed=0):
    """Two continuous inputs, one discrete input and a smooth noisy target."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=(n, 2)), rng.integers(0, 3, size=n)])
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.3 * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def test_compare_finds_ep_equal_to_the_closed_form():
    X, y = _synthetic()
    folds = list(KFold(4, shuffle=True, random_state=0).split(X))
    hyper = {"theta0": 1.0, "theta1": 0.1, "inverse_lengthscale": 0.5, "noise_variance": 0.05}
    table = compare(X, y, folds, hyper, discrete_features=[False, False, True])

    assert list(table.columns) == list(COLUMNS) and len(table) == 4
    assert table["fold"].tolist() == [0, 1, 2, 3]
    assert (table["n_train"] + table["n_test"] == 40).all() and table["n_test"].sum() == 40
    assert np.isfinite(table["exact_log_z"]).all()
    for name in ("abs_log_z_diff", "one_sweep_abs_log_z_diff", "max_abs_mean_diff",
                 "max_rel_variance_diff"):
        assert (table[name] < 1e-8).all(), (name, table[name].max())
    # one sweep makes the sites exact; the converged run needs one more to see nothing change
    assert (table["ep_sweeps"] == 2).all()
    # the model fits: test error well below the target's unit (standardised) variance
    assert (table["test_rmse"] < 0.7).all()

    # the tolerance discriminates: 1% more noise in the closed form is far outside it
    other = compare(X, y, folds[:1], {**hyper, "noise_variance": 0.0505},
                    discrete_features=[False, False, True])
    assert abs(other["exact_log_z"][0] - table["exact_log_z"][0]) > 1e-3


def test_cli_writes_one_row_per_fold(tmp_path):
    X, y = _synthetic(n=30, seed=2)
    data = tmp_path / "toy.npz"
    labels = (y > np.median(y)).astype(int)  # the class label is not used by the check
    save_dataset(Dataset(np.column_stack([X, y]), labels, ["a", "b", "c", "target"],
                         ["continuous", "continuous", "discrete", "continuous"], ["lo", "hi"]),
                 data, tmp_path / "toy.json")
    md, csv = tmp_path / "out" / "t.md", tmp_path / "out" / "t.csv"

    assert main(["exact-regression", str(data), "--target", "target", "--seed", "5",
                 "--out-md", str(md), "--out-csv", str(csv)]) == 0

    table = pd.read_csv(csv)
    assert table["fold"].tolist() == list(range(10))  # the default: 10 folds
    assert table["n_test"].sum() == 30 and (table["n_train"] == 27).all()
    assert (table["abs_log_z_diff"] < 1e-8).all()
    text = md.read_text()
    assert text.startswith("# Rodrigues (2014)") and "eqs. 29-39" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 10
    assert "**Verdict: exact**" in text and "target `target`" in text

    # the same seed gives the same folds; another seed other ones
    again = tmp_path / "again.csv"
    assert main(["exact-regression", str(data), "--target", "target", "--seed", "5",
                 "--out-md", str(tmp_path / "again.md"), "--out-csv", str(again)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(again)[["exact_log_z"]], table[["exact_log_z"]])
    assert main(["exact-regression", str(data), "--target", "target", "--seed", "6",
                 "--out-md", str(tmp_path / "b.md"), "--out-csv", str(again)]) == 0
    assert not np.allclose(pd.read_csv(again)["exact_log_z"], table["exact_log_z"])


@pytest.mark.parametrize("target, message", [("nope", "no input column 'nope'"),
                                             ("c", "is discrete, not continuous")])
def test_cli_rejects_a_bad_target_and_writes_nothing(tmp_path, capsys, target, message):
    X, y = _synthetic(n=12)
    data = tmp_path / "toy.npz"
    save_dataset(Dataset(X, (y > 0).astype(int), ["a", "b", "c"],
                         ["continuous", "continuous", "discrete"], ["lo", "hi"]),
                 data, tmp_path / "toy.json")
    md, csv = tmp_path / "t.md", tmp_path / "t.csv"
    assert main(["exact-regression", str(data), "--target", target, "--seed", "1",
                 "--out-md", str(md), "--out-csv", str(csv)]) == 1
    assert message in capsys.readouterr().err
    assert not md.exists() and not csv.exists()


def test_the_written_tables_are_the_same_bytes_at_one_and_two_blas_threads(tmp_path):
    """BLAS threads change the rounding of log Z and of the differences (here by about 1e-12):
    the tables are written at a precision those do not reach, so they are the same bytes."""
    from threadpoolctl import threadpool_limits

    from gpcbench.experiments.exact_regression import write_exact_regression

    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 8))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=200)
    data = tmp_path / "toy.npz"
    save_dataset(Dataset(np.column_stack([X, y]), (y > 0).astype(int),
                         [f"x{m}" for m in range(8)] + ["target"], ["continuous"] * 9,
                         ["lo", "hi"]), data, tmp_path / "toy.json")
    written = []
    for threads in (1, 2):
        md, csv = tmp_path / f"{threads}.md", tmp_path / f"{threads}.csv"
        with threadpool_limits(threads):
            table = write_exact_regression(data, "target", 1, md, csv, n_folds=3)
        written.append((md.read_bytes(), csv.read_bytes()))
    assert written[0] == written[1]
    assert (table["abs_log_z_diff"] == 0).all()  # rounding error writes as 0
    assert pd.read_csv(tmp_path / "1.csv")["exact_log_z"].tolist() == table["exact_log_z"].tolist()

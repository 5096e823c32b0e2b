"""Documented generators for the synthetic data sets.

Every generator draws only from ``numpy.random.default_rng(seed)``, so the same seed gives the
same data. Each returns a :class:`~gpcbench.data.dataset.Dataset` whose provenance records the
generator, its parameters and the seed.
"""

from __future__ import annotations

import numpy as np

from gpcbench.data.dataset import Dataset
from gpcbench.kernels.covariance import Covariance

PLUS_MINUS = ["-1", "+1"]

# Cho, Kim & Park (2015), CKP Table 1: mean vector and covariance matrix of each class. Class 4's
# covariance is printed identical to class 3's (off-diagonal -0.5); used as printed.
CHO_MEANS = np.array([[1.75, -1.0], [-1.75, 1.0], [2.0, 2.0], [-2.0, -2.0]])
CHO_COVARIANCES = np.array(
    [
        [[1.0, 0.0], [0.0, 1.0]],
        [[1.0, 0.5], [0.5, 1.0]],
        [[1.0, -0.5], [-0.5, 1.0]],
        [[1.0, -0.5], [-0.5, 1.0]],
    ]
)


def gaussian_mixture(rng: np.random.Generator, n: int, means: np.ndarray, covariances: np.ndarray):
    """Draw ``n`` points with equiprobable classes; class k ~ N(means[k], covariances[k])."""
    labels = rng.integers(len(means), size=n)
    factors = np.linalg.cholesky(covariances)
    noise = rng.standard_normal((n, means.shape[1]))
    X = means[labels] + np.einsum("nij,nj->ni", factors[labels], noise)
    return X, labels


def cho_mixture(seed: int, n_train: int = 160, n_test: int = 400) -> Dataset:
    """CKP sec. 5.1: four overlapping bivariate Gaussians, 160 train then 400 test."""
    rng = np.random.default_rng(seed)
    X, y = gaussian_mixture(rng, n_train + n_test, CHO_MEANS, CHO_COVARIANCES)
    provenance = {
        "generator": "cho_mixture",
        "parameters": {
            "means": CHO_MEANS.tolist(),
            "covariances": CHO_COVARIANCES.tolist(),
            "class_probabilities": [0.25] * 4,
        },
        "train_rows": n_train,
        "transformations": [
            f"drew {n_train} training then {n_test} test points; class of each point uniform on "
            "the 4 classes, x ~ N(mean, covariance) of Cho et al. Table 1 (class 4's covariance "
            "as printed, equal to class 3's)"
        ],
    }
    return Dataset(X, y, ["x1", "x2"], ["continuous"] * 2, ["1", "2", "3", "4"], provenance)


def kim_gp2d(
    seed: int,
    repetitions: int = 10,
    block_size: int = 200,
    inverse_lengthscales=(0.5, 2.0),
    theta0: float = 1.0,
    jitter: float = 1e-8,
) -> Dataset:
    """K&G sec. 3.5.1 (K&G Table 1): labels are the sign of a GP sample on 2-D inputs.

    For each repetition: 200 inputs uniform on (-10, 10)^2, a latent f ~ N(0, C) with C from
    K&G eq. 13 (theta0 = 1, theta1 = 0, inverse lengthscales 0.5 and 2.0, which multiply the
    squared distances; theta2 = 1e-8 theta0 only to keep the Cholesky factor stable),
    y = sign(f).
    Repetition k occupies rows ``block_size*k`` to ``block_size*(k+1) - 1``.
    """
    covariance = Covariance(
        theta0=theta0,
        theta1=0.0,
        theta2=jitter * theta0,
        inverse_lengthscale=np.asarray(inverse_lengthscales),
    )
    rng = np.random.default_rng(seed)
    blocks_X, blocks_y = [], []
    for _ in range(repetitions):
        X = rng.uniform(-10.0, 10.0, size=(block_size, 2))
        f = np.linalg.cholesky(covariance(X)) @ rng.standard_normal(block_size)
        blocks_X.append(X)
        blocks_y.append((f > 0).astype(np.int64))
    provenance = {
        "generator": "kim_gp2d",
        "parameters": {
            "inverse_lengthscales": list(inverse_lengthscales),
            "theta0": theta0,
            "theta1": 0.0,
            "theta2": jitter * theta0,
            "input_range": [-10.0, 10.0],
        },
        "repetitions": repetitions,
        "block_size": block_size,
        "transformations": [
            f"{repetitions} repetitions of {block_size} points: x ~ U(-10, 10)^2, f ~ GP(0, C) with "
            f"C_ij = {theta0:g} exp(-1/2 sum_m l_m (x_i^m - x_j^m)^2), "
            f"l = {tuple(inverse_lengthscales)}, theta2 = {jitter * theta0:g} on the diagonal "
            "(Cholesky stability); label +1 if f > 0 else -1"
        ],
    }
    return Dataset(
        np.vstack(blocks_X),
        np.concatenate(blocks_y),
        ["x1", "x2"],
        ["continuous"] * 2,
        PLUS_MINUS,
        provenance,
    )


def kim_relevance(seed: int, n_train: int = 300, n_test: int = 10000) -> Dataset:
    """K&G sec. 3.5.1 (K&G Table 2): x1..x3 ~ N(y, 1) relevant, x4..x6 ~ N(0, 1) noise."""
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    sign = rng.choice([-1.0, 1.0], size=n)
    X = rng.standard_normal((n, 6))
    X[:, :3] += sign[:, None]
    provenance = {
        "generator": "kim_relevance",
        "train_rows": n_train,
        "transformations": [
            f"drew {n_train} training then {n_test} test points: y = +-1 with probability 1/2, "
            "x1..x3 ~ N(y, 1), x4..x6 ~ N(0, 1)"
        ],
    }
    y = (sign > 0).astype(np.int64)
    return Dataset(X, y, [f"x{i}" for i in range(1, 7)], ["continuous"] * 6, PLUS_MINUS, provenance)


def waveform_base(dims: int = 21) -> np.ndarray:
    """Breiman's three base waves h1, h2, h3 on i = 1..21 (peaks at 11, 15 and 7)."""
    i = np.arange(1, dims + 1)
    h1 = np.maximum(6 - np.abs(i - 11), 0)
    return np.stack([h1, np.maximum(6 - np.abs(i - 15), 0), np.maximum(6 - np.abs(i - 7), 0)]).astype(
        float
    )


WAVEFORM_PAIRS = ((0, 1), (0, 2), (1, 2))  # class 1: h1/h2, class 2: h1/h3, class 3: h2/h3


def waveform_draw(rng: np.random.Generator, n: int):
    """Breiman's waveform (CART pp. 49-55; catalog note N3): returns X (n x 21), classes 0..2."""
    base = waveform_base()
    classes = rng.integers(3, size=n)
    u = rng.uniform(size=n)
    noise = rng.standard_normal((n, base.shape[1]))
    first, second = (np.array(p) for p in zip(*WAVEFORM_PAIRS))
    X = u[:, None] * base[first[classes]] + (1 - u[:, None]) * base[second[classes]] + noise
    return X, classes


def waveform(seed: int, n: int = 5000) -> Dataset:
    """Raetsch's binary waveform: Breiman class 1 is +1, classes 2 and 3 are -1."""
    rng = np.random.default_rng(seed)
    X, classes = waveform_draw(rng, n)
    provenance = {
        "generator": "waveform",
        "breiman_class_counts": {
            str(k + 1): int(c) for k, c in enumerate(np.bincount(classes, minlength=3))
        },
        "transformations": [
            f"drew {n} points of Breiman's 21-dim waveform (class uniform on 1..3, u ~ U(0, 1), "
            "unit Gaussian noise)",
            "label +1 = Breiman class 1, -1 = classes 2 and 3",
        ],
    }
    y = (classes == 0).astype(np.int64)
    return Dataset(X, y, [f"x{i}" for i in range(1, 22)], ["continuous"] * 21, PLUS_MINUS, provenance)


def twonorm_draw(rng: np.random.Generator, n: int, dims: int = 20):
    """Breiman's twonorm: class 0 ~ N(a 1, I), class 1 ~ N(-a 1, I), a = 2 / sqrt(dims)."""
    a = 2.0 / np.sqrt(dims)
    labels = rng.integers(2, size=n)
    centre = np.where(labels == 0, a, -a)
    return centre[:, None] + rng.standard_normal((n, dims)), labels


def ringnorm_draw(rng: np.random.Generator, n: int, dims: int = 20, a: float | None = None):
    """Breiman's ringnorm: class 0 ~ N(0, 4 I), class 1 ~ N(a 1, I); a = 2 / sqrt(dims) as in Delve."""
    a = 2.0 / np.sqrt(dims) if a is None else a
    labels = rng.integers(2, size=n)
    scale = np.where(labels == 0, 2.0, 1.0)
    shift = np.where(labels == 0, 0.0, a)
    return shift[:, None] + scale[:, None] * rng.standard_normal((n, dims)), labels


def ringnorm_breiman(seed: int, n: int = 7400) -> Dataset:
    """Breiman's ringnorm (catalog note N3) in Raetsch's pool size, 400 + 7000: class 1 ~ N(0, 4I)
    is +1, class 2 ~ N(a 1, I) with a = 2 / sqrt(20) is -1, equal priors."""
    rng = np.random.default_rng(seed)
    X, labels = ringnorm_draw(rng, n)
    provenance = {
        "generator": "ringnorm_breiman",
        "parameters": {"dims": 20, "a": 2.0 / np.sqrt(20.0), "wide_variance": 4.0},
        "transformations": [
            f"drew {n} points of Breiman's 20-dim ringnorm (class uniform on 1..2; class 1 ~ "
            "N(0, 4 I), class 2 ~ N(a 1, I), a = 2 / sqrt(20))",
            "label +1 = Breiman class 1 (the wide one), -1 = class 2",
        ],
    }
    y = (labels == 0).astype(np.int64)
    return Dataset(X, y, [f"x{i}" for i in range(1, 21)], ["continuous"] * 20, PLUS_MINUS,
                   provenance)


GENERATORS = {
    "cho_mixture": cho_mixture,
    "kim_gp2d": kim_gp2d,
    "kim_relevance": kim_relevance,
    "ringnorm_breiman": ringnorm_breiman,
    "waveform": waveform,
}

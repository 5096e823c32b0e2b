"""FBGKM, BGKM and SGPC (Zhang, Dai & Jordan 2011) as scikit-learn classifiers. Import them
from :mod:`gpcbench.models`.

The sampler is :func:`gpcbench.mcmc.gkm.run_chain` (section 3.2, appendix A; binary BGKM at a
fixed kernel width runs its O(n^2)-per-sweep equivalent :func:`gpcbench.mcmc.bgkm.run_bgkm`,
one eigendecomposition of K_gammagamma per chain); this module sets
the paper's defaults (section 5.1: a_eta = 1, b_eta = 0.1, a_g = 4, b_g = 0.1, a_alpha =
b_alpha = 1, 10,000 sweeps, 5,000 burn-in, every 5th sweep kept; theta = the mean Euclidean
distance between training points), runs independent chains and averages the predictions over
the kept sweeps (Bayesian model averaging, section 3.3):

* FBGKM / BGKM: p(y* = 1) ~ 1/T sum_t Phi(u_t + k_gamma(x*)' beta_gamma,t);
* SGPC (section 4.2): s* ~ N(m_t, v_t) given (s, gamma, u) with
  m_t = u + k*' P^-1 K_gamma'(s - u 1), v_t = 1 + k*' P^-1 k*, P = g K_gammagamma + K_gamma'K_gamma
  (the paper's expressions after Woodbury); p(y* = 1) averages P(s* > 0) = Phi(m_t / sqrt(v_t)),
  the probability of the paper's draw of s* being positive (its Rao-Blackwellised value).

More than two classes run the section 6.2 sampler (:func:`gpcbench.mcmc.gkm.run_chain_multi`):
centred class scores f = B~H' k~(x*) per kept draw, and p(y* = j) averages the probit argmax
probability P(f_j + e_j > f_l + e_l, l != j) = E_z[prod_{l != j} Phi(z + f_j - f_l)], computed
by 48-node Gauss-Hermite quadrature (:func:`gpcbench.mcmc.gkm.argmax_probability`); SGPC uses
its predictive N(m_t, v_t H) of the centred s*, f = m_t / sqrt(v_t) class by class.

Prediction batches the draws of each kernel width: FBGKM / BGKM scatter the draws' beta_gamma
into one dense (union of their active points, draws) matrix, one product with the test
kernels per chunk of draws. SGPC splits the draws, in chain order, into windows whose active
sets lie in a common base (their union): one generalized eigendecomposition of the base's
(K'K, K_gammagamma) gives P^-1 for every g, and a correction of rank the number of base
points a draw lacks gives its own active set (``_window_sum``), so the n_test n_gamma^2 cost
of a triangular solve per draw is paid once per window. Same probabilities as one Cholesky of
P per draw, up to rounding.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.linalg import cholesky, eigh, solve_triangular
from scipy.special import ndtr
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.mcmc.bgkm import run_bgkm
from gpcbench.mcmc.cusum import brooks_burn_in
from gpcbench.mcmc.diagnostics import effective_sample_size, split_rhat
from gpcbench.mcmc.gkm import (MOVES, add_class_probabilities, gauss_hermite, run_chain,
                                run_chain_multi)

TRACE_EVERY = 20  # sweeps between the recorded n_gamma values of convergence_trace_
TRACED = ("u", "g", "eta", "n_gamma")
_QUADRATURE = gauss_hermite(48)  # nodes, weights of the multiclass argmax probability
_BLOCK_BYTES = 100e6  # bound on the (n_test, draws) score blocks held at once in prediction


def mean_distance(X, chunk: int = 512) -> float:
    """Mean Euclidean distance over the pairs of rows of X (section 5.1's kernel width)."""
    n = X.shape[0]
    if n < 2:
        return 1.0
    sq = np.einsum("ij,ij->i", X, X)
    total = 0.0
    for start in range(0, n, chunk):
        block = sq[start:start + chunk, None] + sq[None, :] - 2 * X[start:start + chunk] @ X.T
        total += np.sqrt(np.maximum(block, 0.0)).sum()
    return float(total / (n * (n - 1))) or 1.0


def _window_cost(n_test, n_scores, base, n_draws, n_active):
    """Estimated flops per draw and bytes of an SGPC prediction window of ``n_draws`` draws
    with ``n_active`` active points in all, on a base of ``base`` points: the base's
    eigendecomposition (~20 base^3) and whitened test kernels (2 n_test base^2) are shared,
    each draw adds 2 n_test base columns for its dropped points, scores and variance; the
    (n_test, columns) blocks take 8 n_test columns bytes."""
    columns = n_draws * base - n_active + n_draws * (n_scores + 1)
    flops = base**2 * (2 * n_test + 20 * base) + 2 * n_test * base * columns
    return flops / n_draws, 8 * n_test * columns


def rbf(A, B, theta) -> np.ndarray:
    """K(a, b) = exp(-sum_l (a_l - b_l)^2 / theta_l^2) (sections 3.1, 5.3)."""
    A, B = A / theta, B / theta
    sq = (np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :]
          - 2 * A @ B.T)
    return np.exp(-np.maximum(sq, 0.0))


class _GKMClassifier(ClassifierMixin, BaseEstimator):
    """Shared sampler driver; subclasses set ``_sparse`` (step (c)) and ``_gp`` (SGPC)."""

    _sparse = True
    _gp = False

    def __init__(self, n_sweeps=10000, burn_in=5000, thin=5, k_max=200,
                 kernel_width="mean_distance", ard=False, n_chains=2, random_state=None, *,
                 a_eta=1.0, b_eta=0.1, a_g=4.0, b_g=0.1, a_alpha=1.0, b_alpha=1.0,
                 theta_step=0.2, theta_bounds=(0.01, 10.0), jitter=1e-6, n_probe=20):
        self.n_sweeps = n_sweeps
        self.burn_in = burn_in
        self.thin = thin
        self.k_max = k_max
        self.kernel_width = kernel_width
        self.ard = ard
        self.n_chains = n_chains
        self.random_state = random_state
        self.a_eta = a_eta
        self.b_eta = b_eta
        self.a_g = a_g
        self.b_g = b_g
        self.a_alpha = a_alpha
        self.b_alpha = b_alpha
        self.theta_step = theta_step
        self.theta_bounds = theta_bounds
        self.jitter = jitter
        self.n_probe = n_probe

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags

    def _validate(self):
        if not (self.thin >= 1 and 0 <= self.burn_in <= self.n_sweeps - self.thin
                and self.n_chains >= 1 and self.k_max >= 1):
            raise ValueError("need thin >= 1, 0 <= burn_in <= n_sweeps - thin, n_chains >= 1 "
                             "and k_max >= 1")
        width = self.kernel_width
        if not (width in ("mean_distance", "learn") or (isinstance(width, Real) and width > 0)):
            raise ValueError("kernel_width must be 'mean_distance', 'learn' or a positive number")

    def fit(self, X, y):
        """Run ``n_chains`` chains of the section 3.2 sampler on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), at least two classes (more than two: the
            section 6.2 multiclass sampler)

        Returns
        -------
        self
        """
        self._validate()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y01 = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"Need at least two classes; got {self.classes_.size} class(es)")
        self.X_train_ = X
        n, p = X.shape
        width = mean_distance(X) if isinstance(self.kernel_width, str) else float(self.kernel_width)
        self.kernel_width_ = width
        k_max = min(self.k_max, n) if self._sparse else n
        random_state = check_random_state(self.random_state)
        seeds = random_state.randint(2**31 - 1, size=self.n_chains)
        probe = np.sort(random_state.permutation(n)[: self.n_probe]).astype(np.int64)
        chain = self._chain if self.classes_.size == 2 else self._chain_multi
        runs = [chain(X, y01.astype(np.int64), width, k_max, probe, int(seed)) for seed in seeds]
        self._collect(runs, k_max)
        return self

    def _start(self, X, width, k_max, seed):
        """Initial theta, its bounds, active set and the sampler's settings for one chain."""
        n, p = X.shape
        rng = np.random.default_rng(seed)
        theta = np.full(p if self.ard else 1, width)
        bounds = np.outer(self.theta_bounds, theta)
        k = k_max // 2 if self._sparse else n
        act = np.zeros(k_max, dtype=np.int64)
        act[:k] = rng.choice(n, k, replace=False) if self._sparse else np.arange(n)
        params = np.array([1.0, 1.0, self.a_eta, self.b_eta, self.a_g, self.b_g, self.a_alpha,
                           self.b_alpha, self.jitter, self.theta_step])
        flags = np.array([1, 1, int(self._sparse), int(self.kernel_width == "learn")],
                         dtype=np.int64)
        schedule = np.array([self.n_sweeps, self.burn_in, self.thin], dtype=np.int64)
        return rng, theta, bounds, k, act, params, flags, schedule

    def _chain(self, X, y, width, k_max, probe, seed):
        n = X.shape[0]
        rng, theta, bounds, k, act, params, flags, schedule = self._start(X, width, k_max, seed)
        s = np.where(y > 0, 1.0, -1.0) * np.abs(rng.standard_normal(n))
        n_kept = (self.n_sweeps - self.burn_in) // self.thin
        out = (np.zeros((self.n_sweeps, 4)), np.zeros((n_kept, k_max), dtype=np.int64),
               np.zeros((n_kept, k_max + 1)), np.zeros((n_kept, k_max + 1)),
               np.zeros((n_kept, theta.size)), np.zeros((n_kept, 2)),
               np.zeros((n_kept, probe.size)))
        counts = np.zeros((4, 2), dtype=np.int64)
        seed = int(rng.integers(2**31 - 1))
        if flags[2] or flags[3]:
            run_chain(X, y, s, act, k, theta, bounds, params, k_max, flags, schedule, probe,
                      seed, out, counts)
        else:  # BGKM at a fixed width: the same chain in O(n^2) per sweep
            run_bgkm(X, y, s, theta, params, schedule, probe, seed, out)
        return out, counts

    def _chain_multi(self, X, y, width, k_max, probe, seed):
        """One chain of the section 6.2 sampler; coefficients returned as (kept, k_max+1, J)."""
        n, J = X.shape[0], self.classes_.size
        rng, theta, bounds, k, act, params, flags, schedule = self._start(X, width, k_max, seed)
        x = np.zeros((J, n))  # S' = H x: each point's class column largest, rows centred
        x[y, np.arange(n)] = np.abs(rng.standard_normal(n))
        S = x - x.mean(axis=0)
        n_kept = (self.n_sweeps - self.burn_in) // self.thin
        out = (np.zeros((self.n_sweeps, J + 3)), np.zeros((n_kept, k_max), dtype=np.int64),
               np.zeros((n_kept, J, k_max + 1)), np.zeros((n_kept, J, k_max + 1)),
               np.zeros((n_kept, theta.size)), np.zeros((n_kept, 2)),
               np.zeros((n_kept, probe.size)))
        counts = np.zeros((4, 2), dtype=np.int64)
        run_chain_multi(X, y, S, act, k, theta, bounds, params, k_max, flags, schedule, probe,
                        _QUADRATURE, int(rng.integers(2**31 - 1)), out, counts)
        out = out[:2] + (out[2].transpose(0, 2, 1), out[3].transpose(0, 2, 1)) + out[4:]
        return out, counts

    def _collect(self, runs, k_max):
        traces = np.stack([out[0] for out, _ in runs])  # (chains, sweeps, 4 or J + 3)
        kept = [np.concatenate([out[i] for out, _ in runs]) for i in range(1, 7)]
        self.active_, self.coef_, self.aux_, self.theta_, self.hyper_, probe = kept
        self.n_active_trace_ = traces[:, :, -1].astype(int)
        self.convergence_trace_ = [{"sweep": t + 1, "n_gamma": int(self.n_active_trace_[0, t])}
                                   for t in range(TRACE_EVERY - 1, self.n_sweeps, TRACE_EVERY)]
        rows = np.arange(self.burn_in + self.thin - 1, self.n_sweeps, self.thin)
        n_u = traces.shape[2] - 3  # u: one intercept (binary) or one per class
        columns = {"u": 0 if n_u == 1 else slice(0, n_u), "g": n_u, "eta": n_u + 1,
                   "n_gamma": n_u + 2}
        traced = {name: traces[:, :, columns[name]] for name in TRACED}
        self.samples_ = {name: trace[:, rows] for name, trace in traced.items()}
        counts = sum(c for _, c in runs)
        self.acceptance_rates_ = {move: float(counts[i, 1] / counts[i, 0]) if counts[i, 0]
                                  else float("nan") for i, move in enumerate(MOVES)}
        probe = probe.reshape(len(runs), rows.size, -1)
        self.diagnostics_ = self._diagnostics(traced, probe)
        rhats = [self.diagnostics_[name]["rhat"] for name in TRACED]
        rhats.append(self.diagnostics_["probe_probability"]["max_rhat"])
        burn = self.diagnostics_["brooks_burn_in"]
        self.converged_ = bool(np.nanmax(rhats + [1.0]) < 1.1 and burn <= self.burn_in)
        self.n_iter_ = self.n_sweeps

    def _diagnostics(self, traced, probe):
        """Per traced scalar as in ``diagnostics_``; a per-class u (multiclass) reports the
        largest R-hat and Brooks burn-in and the smallest ESS over its classes."""
        enough = probe.shape[1] >= 4
        result = {}
        for name in TRACED:
            trace = traced[name]
            parts = [trace] if trace.ndim == 2 else [trace[:, :, j] for j in range(trace.shape[2])]
            scores = [self._trace_diagnostics(part, enough) for part in parts]
            worst = {"rhat": np.max, "ess": np.min, "brooks_burn_in": np.max, "brooks_thin": np.max}
            result[name] = scores[0] if len(scores) == 1 else {
                key: float(pick([s[key] for s in scores])) for key, pick in worst.items()}
        columns = range(probe.shape[2]) if enough else []
        rhat = [split_rhat(probe[:, :, q]) for q in columns]
        ess = [effective_sample_size(probe[:, :, q]) for q in columns]
        result["probe_probability"] = {
            "max_rhat": float(np.nanmax(rhat)) if np.isfinite(rhat).any() else float("nan"),
            "min_ess": float(np.min(ess)) if ess else float("nan"),
        }
        # NaN (a quantity the criterion cannot settle) propagates: the run has no burn-in
        result["brooks_burn_in"] = float(np.max([result[name]["brooks_burn_in"]
                                                 for name in TRACED]))
        result["n_active"] = self._active_set_distribution(traced["n_gamma"][0, self.burn_in:])
        return result

    @staticmethod
    def _active_set_distribution(n_gamma):
        """Table 7's summary of chain 1's active-set sizes after the burn-in: largest,
        smallest, most frequent size and its count of sweeps."""
        if n_gamma.size == 0:
            return {"max": None, "min": None, "most": None, "most_frequency": None}
        sizes, counts = np.unique(n_gamma.astype(int), return_counts=True)
        return {"max": int(sizes[-1]), "min": int(sizes[0]), "most": int(sizes[np.argmax(counts)]),
                "most_frequency": int(counts.max())}

    def _trace_diagnostics(self, trace, enough):
        """R-hat, ESS and Brooks burn-in of one scalar traced over (chains, sweeps)."""
        rows = np.arange(self.burn_in + self.thin - 1, self.n_sweeps, self.thin)
        kept = trace[:, rows]
        ess = effective_sample_size(kept) if enough else float("nan")
        # Brooks asks for ~independent draws: thin by the autocorrelation time in sweeps
        step = max(1, round(self.thin * kept.size / ess)) if ess > 0 else self.thin
        brooks = [brooks_burn_in(chain, thin=step) for chain in trace]
        return {"rhat": split_rhat(kept) if enough else float("nan"), "ess": ess,
                "brooks_burn_in": float(np.max(brooks)), "brooks_thin": step}

    def _positive_probability(self, X):
        """Binary: p(y* = classes_[1]); multiclass: (n, J) class probabilities, averaged over
        the kept draws (section 3.3), one kernel width (the draws sharing theta) at a time."""
        groups = np.unique(self.theta_, axis=0, return_inverse=True)[1].ravel()
        total = np.zeros(X.shape[:1] + self.coef_.shape[2:])
        for group in np.unique(groups):
            draws = np.flatnonzero(groups == group)
            theta = self.theta_[draws[0]]
            union = np.unique(self.active_[draws][self.active_[draws] >= 0])
            K_test = rbf(self.X_train_[union], X, theta).T  # Fortran order: columns contiguous
            total += (self._sgpc_sum(draws, union, K_test, theta) if self._gp
                      else self._gkm_sum(draws, union, K_test))
        return total / self.active_.shape[0]

    def _gkm_sum(self, draws, union, K_test):
        """FBGKM / BGKM: the sum over the draws of Phi(u + k*' beta) (multiclass: the argmax
        probabilities of f = u + B' k*). Each chunk of draws is one product K_test @ B, B the
        draws' coefficients scattered into the kernel width's union of active points."""
        n_chunks = int(np.ceil(draws.size * K_test.shape[0] * self._n_scores() * 8 / _BLOCK_BYTES))
        total = 0.0
        for chunk in np.array_split(draws, n_chunks):
            F = np.tensordot(K_test, self._scatter(chunk, union), axes=1)
            total = total + self._probability_sum(F + self.coef_[chunk, 0], 1.0)
        return total

    def _n_scores(self):
        """Scores per draw and test point: 1 (binary) or J."""
        return self.coef_.shape[2] if self.coef_.ndim == 3 else 1

    def _scatter(self, chunk, union):
        """(union, draws) (multiclass: (union, draws, J)) coefficients beta_gamma of the
        chunk's draws, zero where a draw's point is inactive."""
        act = self.active_[chunk]
        draw, slot = np.nonzero(act >= 0)
        B = np.zeros((union.size, chunk.size) + self.coef_.shape[2:])
        B[np.searchsorted(union, act[draw, slot]), draw] = self.coef_[chunk[draw], slot + 1]
        return B

    def _probability_sum(self, F, scale):
        """Sum over draws of the probit probabilities of scores F (n, draws) (multiclass:
        (n, draws, J), section 6.2's argmax probabilities) with noise scale (n, draws) or 1."""
        if F.ndim == 2:
            return ndtr(F / scale).sum(axis=1)
        out = np.zeros((F.shape[0], F.shape[2]))
        scale = np.broadcast_to(scale, F.shape[:2])
        for i in range(F.shape[1]):
            add_class_probabilities(np.ascontiguousarray(F[:, i]),
                                    np.ascontiguousarray(scale[:, i]), _QUADRATURE, out)
        return out

    def _train_blocks(self, union, theta):
        """SGPC: K(X_train, X_union)'s rows at the union, its Gram matrix and column sums,
        shared by the draws of one kernel width."""
        K = rbf(self.X_train_, self.X_train_[union], theta)
        return K[union], K.T @ K, K.sum(axis=0)

    def _sgpc_sum(self, draws, union, K_test, theta):
        """SGPC (section 4.2): the sum over the draws of Phi(m / sqrt(v)) (multiclass: the
        argmax probabilities of m_j / sqrt(v)), window by window (:meth:`_windows`)."""
        train = self._train_blocks(union, theta)
        columns = [np.searchsorted(union, act[act >= 0]) for act in self.active_[draws]]
        total = 0.0
        for window, base in self._windows(columns, union.size, K_test.shape[0]):
            total = total + self._window_sum(draws[window], columns[window], base, K_test,
                                             train)
        return total

    def _windows(self, columns, size, n_test):
        """Split the draws (chain order; ``columns``: their active points in the union) into
        windows of consecutive draws, each with a base: the union of their active sets. A
        window grows while :func:`_window_cost`'s flops per draw do not rise and its blocks
        stay within _BLOCK_BYTES. Returns (slice of draws, base) pairs."""
        windows, start, n_scores = [], 0, self._n_scores()
        while start < len(columns):
            inside = np.zeros(size, dtype=bool)
            inside[columns[start]] = True
            end, n_active = start + 1, columns[start].size
            cost = _window_cost(n_test, n_scores, inside.sum(), 1, n_active)[0]
            while end < len(columns):
                new = columns[end][~inside[columns[end]]]
                grown, nbytes = _window_cost(n_test, n_scores, inside.sum() + new.size,
                                             end + 1 - start, n_active + columns[end].size)
                if grown > cost or nbytes > _BLOCK_BYTES:
                    break
                inside[new] = True
                end, n_active, cost = end + 1, n_active + columns[end].size, grown
            windows.append((slice(start, end), np.flatnonzero(inside)))
            start = end
        return windows

    def _window_sum(self, draws, columns, base, K_test, train):
        """Section 4.2's predictive summed over one window's draws.

        The base's generalized eigendecomposition Phi' K_bb Phi = I, Phi' G_bb Phi = diag(lam)
        (K_bb: K_gammagamma of the base points, jittered; G = K'K; scipy's eigh reduces it by
        the Cholesky K_bb = R R' to eigh(R^-1 G_bb R^-T) with triangular solves) gives
        g K_bb + G_bb = Phi^-T (g I + diag(lam)) Phi^-1 for every g, and each draw's P^-1 =
        Phi (diag(delta) - F F') Phi' (:meth:`_draw_operator`). With the test kernels in these
        coordinates, w* = Phi' k*_base (the rows of W): m = u + w*' a and
        v = 1 + sum_j delta_j w*_j^2 - |F' w*|^2, three products of W by the window's a, delta
        and F.
        """
        K_union, gram, sums = train
        block = np.ix_(base, base)
        lam, Phi = eigh(gram[block], K_union[block] + self.jitter * np.eye(base.size))
        W = K_test[:, base] @ Phi
        delta, weights, F = zip(*[self._draw_operator(t, cols, base, lam, Phi, sums)
                                  for t, cols in zip(draws, columns)])
        M = np.tensordot(W, np.stack(weights, axis=1), axes=1)
        Z = W @ np.hstack(F)
        owner = np.eye(draws.size)[np.repeat(np.arange(draws.size), [f.shape[1] for f in F])]
        V = 1.0 + (W * W) @ np.column_stack(delta) - (Z * Z) @ owner
        return self._probability_sum(M + self.coef_[draws, 0], np.sqrt(V))

    def _draw_operator(self, t, cols, base, lam, Phi, sums):
        """Draw t's P^-1 (section 4.2) in the base coordinates of :meth:`_window_sum`.

        P is the block of P_b = g K_bb + G_bb at the draw's active points, and P_b^-1 = Phi
        diag(delta) Phi' with delta = 1 / (g + lam). The inverse of a block from the inverse of
        the whole, with C = Phi's rows at the base points the draw drops: P^-1 (zero-padded) =
        Phi (diag(delta) - F F') Phi', F = diag(delta) C' L^-T, L L' = C diag(delta) C'.

        Returns
        -------
        delta : ndarray of shape (base,)
        weights : ndarray of shape (base,) or (base, J)
            a = (diag(delta) - F F') Phi' h, h = K_gamma'(s - u 1) at the active points.
        F : ndarray of shape (base, dropped)
        """
        pos = np.searchsorted(base, cols)
        dropped = np.ones(base.size, dtype=bool)
        dropped[pos] = False
        delta = 1.0 / (self.hyper_[t, 0] + lam)
        E = delta[:, None] * Phi[dropped].T
        L = cholesky(Phi[dropped] @ E, lower=True)
        F = solve_triangular(L, E.T, lower=True).T
        u = self.coef_[t, 0]
        h = np.zeros(base.shape + np.shape(u))
        h[pos] = self.aux_[t, 1:cols.size + 1] - np.multiply.outer(sums[cols], u)
        proj = Phi.T @ h
        return delta, (proj.T * delta).T - F @ (F.T @ proj), F

    def predict_proba(self, X):
        """Model-averaged class probabilities over the kept sweeps of all chains.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        p = np.clip(self._positive_probability(X), 0.0, 1.0)
        if p.ndim == 2:  # multiclass: quadrature error aside, the rows already sum to one
            return p / p.sum(axis=1, keepdims=True)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """Class with the larger model-averaged probability.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        if proba.shape[1] > 2:
            return self.classes_[np.argmax(proba, axis=1)]
        positive = proba[:, 1] > 0.5
        return self.classes_[positive.astype(int)]


_PARAMETERS = """
    Parameters
    ----------
    n_sweeps : int, default=10000
        MCMC sweeps per chain (section 5.1).
    burn_in : int, default=5000
        Sweeps discarded before the kept ones.
    thin : int, default=5
        Keep every ``thin``-th sweep after the burn-in (the paper's M = 5: T = 1,000 draws).
    k_max : int, default=200
        Largest number of active vectors (Table 1); capped at n.{k_max_note}
    kernel_width : 'mean_distance', 'learn' or float, default='mean_distance'
        theta of K(x, x') = exp(-|x - x'|^2 / theta^2): the mean Euclidean distance between
        training points (section 5.1), a fixed number, or learned by random-walk
        Metropolis-Hastings from the mean distance (section 3.2, the '+KL' rows of 5.3).
    ard : bool, default=False
        One width per feature (section 5.3) instead of one shared width.
    n_chains : int, default=2
        Independent chains; their kept draws are pooled.
    random_state : int, RandomState instance or None, default=None
    a_eta, b_eta, a_g, b_g : float, default=1, 0.1, 4, 0.1
        eta ~ Ga(a_eta/2, b_eta/2), g ~ Ga(a_g/2, b_g/2) (shape, rate; section 5.1's values).
    a_alpha, b_alpha : float, default=1, 1
        Beta prior on the inclusion probability (eq. 10).
    theta_step : float, default=0.2
        Variance of the Gaussian random-walk proposal for theta.
    theta_bounds : (float, float), default=(0.01, 10)
        Uniform prior on each theta_l, as multiples of the mean distance.
    jitter : float, default=1e-6
        Added to the diagonal of K_gammagamma (its Moore-Penrose case of section 2.2).
    n_probe : int, default=20
        Training points whose Phi(u + k' beta) per kept sweep (multiclass: the probability of
        the point's own class) enters ``diagnostics_``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Two classes: the section 3 model; more: the section 6.2 multiclass model (J centred
        auxiliary columns, one active set gamma shared by the classes).
    kernel_width_ : float
        The width theta starts from (the fixed width unless ``kernel_width='learn'``).
    n_active_trace_ : ndarray of shape (n_chains, n_sweeps)
        n_gamma after each sweep's step (a) (Figure 2).
    samples_ : dict of ndarray of shape (n_chains, n_kept)
        u, g, eta and n_gamma at the kept sweeps (multiclass: u of shape
        (n_chains, n_kept, n_classes), the centred class intercepts).
    acceptance_rates_ : dict
        Accepted / proposed birth, death, swap and theta moves (NaN if none proposed).
    diagnostics_ : dict
        Per traced quantity: split R-hat and ESS over the chains' kept draws and the Brooks
        (1998) CUSUM burn-in (max over chains, in sweeps; multiclass u: the worst class);
        ``probe_probability``: the largest
        R-hat and smallest ESS of Phi(u + k_i' beta) over the probe points;
        ``brooks_burn_in``: the largest burn-in estimate, NaN if any quantity's is (its
        thinned chain never settles, or is under 10 draws long); ``n_active``: chain 1's largest,
        smallest and most frequent active-set size after the burn-in and that size's count of
        sweeps (Table 7).
    convergence_trace_ : list of dict
        Chain 1's active-set size every 20th sweep (``sweep``, ``n_gamma``; Figure 2).
    converged_ : bool
        Every finite R-hat < 1.1 and the Brooks burn-in is within ``burn_in``.
    n_iter_ : int
        Sweeps per chain.
    active_, coef_, aux_, theta_, hyper_ : ndarray
        Per kept draw (chains pooled): active indices (-1 padded), (u, beta_gamma), K~'s,
        kernel widths and (g, eta), the states the predictions average over. Multiclass:
        ``coef_`` and ``aux_`` of shape (n_kept, k_max + 1, n_classes), the centred class
        coefficients B~H and K~'S.
"""


class FBGKMClassifier(_GKMClassifier):
    __doc__ = ("Fully Bayesian generalized kernel model (Zhang, Dai & Jordan 2011, section 3): "
               "probit GKM with a Silverman g-prior on a reversible-jump active set.\n"
               + _PARAMETERS.format(k_max_note=""))


class BGKMClassifier(_GKMClassifier):
    __doc__ = ("BGKM (Zhang, Dai & Jordan 2011, section 5): the FBGKM sampler without step (c), "
               "every training point active (n_gamma = n).\n"
               + _PARAMETERS.format(k_max_note=" Ignored: BGKM keeps all n points active."))
    _sparse = False


class SGPCClassifier(_GKMClassifier):
    __doc__ = ("Sparse GP classifier (Zhang, Dai & Jordan 2011, section 4): the FBGKM chain, "
               "predicting by the subset-of-regressors GP predictive of s*.\n"
               + _PARAMETERS.format(k_max_note=""))
    _gp = True

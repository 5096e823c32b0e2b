"""FBGKM, BGKM and SGPC (ZDJ: Zhang, Dai & Jordan 2011) as scikit-learn classifiers. Import them
from :mod:`gpcbench.models`.

The sampler is :func:`gpcbench.mcmc.gkm.run_chain` (ZDJ sec. 3.2, ZDJ Appendix A; binary BGKM at a
fixed kernel width runs its O(n^2)-per-sweep equivalent :func:`gpcbench.mcmc.bgkm.run_bgkm`,
one eigendecomposition of K_gammagamma per chain; more than two classes run the ZDJ sec. 6.2
sampler :func:`gpcbench.mcmc.gkm_multiclass.run_chain_multi`); this module sets ZDJ's
defaults (ZDJ sec. 5.1: a_eta = 1, b_eta = 0.1, a_g = 4, b_g = 0.1, a_alpha = b_alpha = 1 for
ZDJ eq. 10 when ``gamma_prior="beta_binomial"``, the flat p(gamma) by default,
10,000 sweeps, 5,000 burn-in, every 5th sweep kept; theta = the mean Euclidean distance between
training points), runs independent chains, records their convergence diagnostics and averages
the predictions over the kept sweeps (Bayesian model averaging, ZDJ sec. 3.3; FBGKM / BGKM by
Phi(u + k*' beta), SGPC by its sparse GP predictive of s*, ZDJ sec. 4.2:
:mod:`gpcbench.mcmc.gkm_predict`).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.kernels.rbf import mean_distance
from gpcbench.mcmc.active_set import chain_state
from gpcbench.mcmc.bgkm import run_bgkm
from gpcbench.mcmc.diagnostics import (chains_converged, kept_sweeps, sweep_diagnostics,
                                        worst_diagnostics)
from gpcbench.mcmc.gkm import new_record, run_chain
from gpcbench.mcmc.gkm_multiclass import new_multiclass_record, run_chain_multi
from gpcbench.mcmc.gkm_predict import KeptDraws, model_average
from gpcbench.mcmc.moves import MOVES, sampler_settings

TRACE_EVERY = 20  # sweeps between the recorded n_gamma values of convergence_trace_
TRACED = ("u", "g", "eta", "n_gamma")
GAMMA_PRIORS = ("flat", "beta_binomial")
PRECISION_PRIORS = ("shape_rate", "shape_scale")


class _GKMClassifier(ClassifierMixin, BaseEstimator):
    """Shared sampler driver; subclasses set ``_sparse`` (step (c)) and ``_gp`` (SGPC)."""

    _sparse = True
    _gp = False

    def __init__(self, n_sweeps=10000, burn_in=5000, thin=5, k_max=200,
                 kernel_width="mean_distance", ard=False, n_chains=2, random_state=None, *,
                 a_eta=1.0, b_eta=0.1, a_g=4.0, b_g=0.1, a_alpha=1.0, b_alpha=1.0,
                 theta_step=0.2, theta_bounds=(0.01, 10.0), jitter=1e-6, n_probe=20,
                 gamma_prior="flat", precision_prior="shape_rate"):
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
        self.gamma_prior = gamma_prior
        self.precision_prior = precision_prior

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
        if self.gamma_prior not in GAMMA_PRIORS or self.precision_prior not in PRECISION_PRIORS:
            raise ValueError(f"gamma_prior must be one of {GAMMA_PRIORS} and precision_prior "
                             f"one of {PRECISION_PRIORS}")

    def _sampler_settings(self, theta):
        """The chains' :class:`~gpcbench.mcmc.moves.Settings`: the Gamma priors as shape and
        rate halves (a, b) of Ga(a/2, b/2), the Beta prior of ZDJ eq. 10 (inf, inf: the flat
        prior on gamma), jitter, theta's proposal variance and its bounds about ``theta``, the
        steps (s, eta and g always; gamma when sparse; theta when learned) and the schedule."""
        b_eta, b_g = self.b_eta, self.b_g
        if self.precision_prior == "shape_scale":  # Ga(a/2, scale b/2) = Ga(a/2, rate (4/b)/2)
            b_eta, b_g = 4.0 / b_eta, 4.0 / b_g
        a_alpha, b_alpha = ((np.inf, np.inf) if self.gamma_prior == "flat"
                            else (self.a_alpha, self.b_alpha))
        return sampler_settings(
            a_eta=self.a_eta, b_eta=b_eta, a_g=self.a_g, b_g=b_g, a_alpha=a_alpha,
            b_alpha=b_alpha, jitter=self.jitter, theta_step=self.theta_step,
            theta_bounds=np.outer(self.theta_bounds, theta),
            steps=(True, True, self._sparse, self.kernel_width == "learn"),
            schedule=(self.n_sweeps, self.burn_in, self.thin))

    def fit(self, X, y):
        """Run ``n_chains`` chains of the ZDJ sec. 3.2 sampler on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), at least two classes (more than two: the
            ZDJ sec. 6.2 multiclass sampler)

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
        self._collect(runs)
        return self

    def fit_from_chains(self, fitted):
        """Take the chains another sparse estimator of this family ran as this one's fit.

        FBGKM and SGPC run one sampler and differ in their predictions only (ZDJ sec. 4.2:
        SGPC predicts by the sparse GP predictive of s* on the same active sets), so with equal
        parameters (``random_state`` included) an SGPC fitted this way predicts exactly as one
        that ran its own chains, and the other way round.

        Parameters
        ----------
        fitted : fitted FBGKMClassifier or SGPCClassifier

        Returns
        -------
        self
        """
        check_is_fitted(fitted)
        if not (self._sparse and fitted._sparse):
            raise ValueError("only FBGKM and SGPC share chains (BGKM keeps every point active)")
        mine, theirs = self.get_params(), fitted.get_params()
        if mine != theirs:
            differ = sorted(key for key in mine if mine[key] != theirs[key])
            raise ValueError(f"chains of other parameters: {', '.join(differ)} differ")
        self.__dict__.update({key: value for key, value in vars(fitted).items()
                              if key.endswith("_") and not key.startswith("_")})
        return self

    def _start(self, X, width, k_max, seed):
        """The random stream, initial state (eta = g = 1) and settings of one chain."""
        n, p = X.shape
        rng = np.random.default_rng(seed)
        theta = np.full(p if self.ard else 1, width)
        k = k_max // 2 if self._sparse else n
        act = np.zeros(k_max, dtype=np.int64)
        act[:k] = rng.choice(n, k, replace=False) if self._sparse else np.arange(n)
        return rng, chain_state(act, k, theta), self._sampler_settings(theta)

    def _chain(self, X, y, width, k_max, probe, seed):
        n = X.shape[0]
        rng, chain, settings = self._start(X, width, k_max, seed)
        s = np.where(y > 0, 1.0, -1.0) * np.abs(rng.standard_normal(n))
        n_kept = (self.n_sweeps - self.burn_in) // self.thin
        record = new_record(self.n_sweeps, n_kept, k_max, chain.theta.size, probe)
        seed = int(rng.integers(2**31 - 1))
        if settings.steps.update_gamma or settings.steps.update_theta:
            run_chain(X, y, s, chain, settings, seed, record)
        else:  # BGKM at a fixed width: the same chain in O(n^2) per sweep
            run_bgkm(X, y, s, chain, settings, seed, record)
        return record

    def _chain_multi(self, X, y, width, k_max, probe, seed):
        """One chain of the ZDJ sec. 6.2 sampler; coefficients returned as (kept, k_max+1, J)."""
        n, J = X.shape[0], self.classes_.size
        rng, chain, settings = self._start(X, width, k_max, seed)
        x = np.zeros((J, n))  # S' = H x: each point's class column largest, rows centred
        x[y, np.arange(n)] = np.abs(rng.standard_normal(n))
        S = x - x.mean(axis=0)
        n_kept = (self.n_sweeps - self.burn_in) // self.thin
        record = new_multiclass_record(self.n_sweeps, n_kept, k_max, chain.theta.size, probe, J)
        run_chain_multi(X, y, S, chain, settings, int(rng.integers(2**31 - 1)), record)
        return record._replace(coefficients=record.coefficients.transpose(0, 2, 1),
                               projections=record.projections.transpose(0, 2, 1))

    def _collect(self, runs):
        traces = np.stack([run.trace for run in runs])  # (chains, sweeps, 4 or J + 3)
        kept = [np.concatenate([getattr(run, field) for run in runs])
                for field in ("active", "coefficients", "projections", "theta", "precisions",
                              "probe_probabilities")]
        self.active_, self.coef_, self.aux_, self.theta_, self.hyper_, probe = kept
        self.n_active_trace_ = traces[:, :, -1].astype(int)
        self.convergence_trace_ = [{"sweep": t + 1, "n_gamma": int(self.n_active_trace_[0, t])}
                                   for t in range(TRACE_EVERY - 1, self.n_sweeps, TRACE_EVERY)]
        rows = kept_sweeps(self.n_sweeps, self.burn_in, self.thin)
        n_u = traces.shape[2] - 3  # u: one intercept (binary) or one per class
        columns = {"u": 0 if n_u == 1 else slice(0, n_u), "g": n_u, "eta": n_u + 1,
                   "n_gamma": n_u + 2}
        traced = {name: traces[:, :, columns[name]] for name in TRACED}
        self.samples_ = {name: trace[:, rows] for name, trace in traced.items()}
        counts = sum(run.move_counts for run in runs)
        self.acceptance_rates_ = {move: float(counts[i, 1] / counts[i, 0]) if counts[i, 0]
                                  else float("nan") for i, move in enumerate(MOVES)}
        probe = probe.reshape(len(runs), rows.size, -1)
        self.diagnostics_ = self._diagnostics(traced, probe)
        rhats = [self.diagnostics_[name]["rhat"] for name in TRACED]
        rhats.append(self.diagnostics_["probe_probability"]["max_rhat"])
        self.converged_ = chains_converged(rhats, self.diagnostics_["brooks_burn_in"],
                                           self.burn_in)
        self.n_iter_ = self.n_sweeps

    def _diagnostics(self, traced, probe):
        """Per traced scalar as in ``diagnostics_``; a per-class u (multiclass) reports the
        largest R-hat and Brooks burn-in and the smallest ESS over its classes."""
        result = {}
        for name in TRACED:
            trace = traced[name]
            parts = [trace] if trace.ndim == 2 else [trace[:, :, j] for j in range(trace.shape[2])]
            scores = [self._trace_diagnostics(part) for part in parts]
            worst = {"rhat": np.max, "ess_bulk": np.min, "ess_tail": np.min,
                     "brooks_burn_in": np.max, "brooks_thin": np.max}
            result[name] = scores[0] if len(scores) == 1 else {
                key: float(pick([s[key] for s in scores])) for key, pick in worst.items()}
        result["probe_probability"] = worst_diagnostics(probe)
        # NaN (a quantity the criterion cannot settle) propagates: the run has no burn-in
        result["brooks_burn_in"] = float(np.max([result[name]["brooks_burn_in"]
                                                 for name in TRACED]))
        result["n_active"] = self._active_set_distribution(traced["n_gamma"][0, self.burn_in:])
        return result

    @staticmethod
    def _active_set_distribution(n_gamma):
        """ZDJ Table 7's summary of chain 1's active-set sizes after the burn-in: largest,
        smallest, most frequent size and its count of sweeps."""
        if n_gamma.size == 0:
            return {"max": None, "min": None, "most": None, "most_frequency": None}
        sizes, counts = np.unique(n_gamma.astype(int), return_counts=True)
        return {"max": int(sizes[-1]), "min": int(sizes[0]), "most": int(sizes[np.argmax(counts)]),
                "most_frequency": int(counts.max())}

    def _trace_diagnostics(self, trace):
        """Split R-hat, bulk and tail ESS (of the kept draws) and Brooks burn-in of one scalar
        traced over (chains, sweeps) (:func:`~gpcbench.mcmc.diagnostics.sweep_diagnostics`)."""
        rows = kept_sweeps(self.n_sweeps, self.burn_in, self.thin)
        return sweep_diagnostics(trace, rows, self.thin)

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
        kept = KeptDraws(self.X_train_, self.active_, self.coef_, self.aux_, self.theta_,
                         self.hyper_, self.jitter)
        p = np.clip(model_average(X, kept, self._gp), 0.0, 1.0)
        if p.ndim == 2:  # multiclass: quadrature error aside, the rows already sum to one
            return p / p.sum(axis=1, keepdims=True)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """Class with the larger model-averaged probability (X as in :meth:`predict_proba`)."""
        proba = self.predict_proba(X)
        if proba.shape[1] > 2:
            return self.classes_[np.argmax(proba, axis=1)]
        positive = proba[:, 1] > 0.5
        return self.classes_[positive.astype(int)]


_PARAMETERS = """
    Parameters
    ----------
    n_sweeps : int, default=10000
        MCMC sweeps per chain (ZDJ sec. 5.1).
    burn_in : int, default=5000
        Sweeps discarded before the kept ones.
    thin : int, default=5
        Keep every ``thin``-th sweep after the burn-in (ZDJ sec. 3.3's M = 5: T = 1,000 draws).
    k_max : int, default=200
        Largest number of active vectors (ZDJ Table 1); capped at n.{k_max_note}
    kernel_width : 'mean_distance', 'learn' or float, default='mean_distance'
        theta of K(x, x') = exp(-|x - x'|^2 / theta^2): the mean Euclidean distance between
        training points (ZDJ sec. 5.1), a fixed number, or learned by random-walk
        Metropolis-Hastings from the mean distance (ZDJ sec. 3.2, the '+KL' rows of ZDJ sec. 5.3).
    ard : bool, default=False
        One width per feature (ZDJ sec. 5.3) instead of one shared width.
    n_chains : int, default=2
        Independent chains; their kept draws are pooled.
    random_state : int, RandomState instance or None, default=None
    a_eta, b_eta, a_g, b_g : float, default=1, 0.1, 4, 0.1
        eta ~ Ga(a_eta/2, b_eta/2), g ~ Ga(a_g/2, b_g/2) (shape, rate; ZDJ sec. 5.1's values).
    a_alpha, b_alpha : float, default=1, 1
        Beta prior on the inclusion probability (ZDJ eq. 10); used by
        ``gamma_prior='beta_binomial'`` only.
    gamma_prior : {{'flat', 'beta_binomial'}}, default='flat'
        Prior on the active set gamma. 'beta_binomial': ZDJ eq. 10 as printed, with a_alpha,
        b_alpha (at 1, 1 every n_gamma is a priori equally likely). 'flat': p(gamma) = 2^-n
        (alpha = 1/2, the limit of eq. 10 as a_alpha = b_alpha grow), i.e. the acceptance
        ratios of ZDJ sec. 3.2 without the prior ratio, n_gamma ~ Bin(n, 1/2) a priori. The
        default 'flat' is the reading that reproduces ZDJ Table 7 (chains at or just below
        k_max when k_max < n/2, near n/2 otherwise); docs/zhang2011_sampler.md has the
        measurements.
    precision_prior : {{'shape_rate', 'shape_scale'}}, default='shape_rate'
        How Ga(a/2, b/2) of eta and g is read: shape and rate (prior mean of g a_g/b_g = 40)
        or shape and scale (prior mean a_g b_g/4 = 0.1; the conditionals of ZDJ sec. 3.2 then
        have rate 2/b + quad/2).
    theta_step : float, default=0.2
        Variance of the Gaussian random-walk proposal for theta.
    theta_bounds : (float, float), default=(0.01, 10)
        Uniform prior on each theta_l, as multiples of the mean distance.
    jitter : float, default=1e-6
        Added to the diagonal of K_gammagamma (its Moore-Penrose case of ZDJ sec. 2.2).
    n_probe : int, default=20
        Training points whose Phi(u + k' beta) per kept sweep (multiclass: the probability of
        the point's own class) enters ``diagnostics_``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Two classes: the ZDJ sec. 3 model; more: the ZDJ sec. 6.2 multiclass model (J centred
        auxiliary columns, one active set gamma shared by the classes).
    kernel_width_ : float
        The width theta starts from (the fixed width unless ``kernel_width='learn'``).
    n_active_trace_ : ndarray of shape (n_chains, n_sweeps)
        n_gamma after each sweep's step (a) (ZDJ Fig. 2).
    samples_ : dict of ndarray of shape (n_chains, n_kept)
        u, g, eta and n_gamma at the kept sweeps (multiclass: u of shape
        (n_chains, n_kept, n_classes), the centred class intercepts).
    acceptance_rates_ : dict
        Accepted / proposed birth, death, swap and theta moves (NaN if none proposed).
    diagnostics_ : dict
        Per traced quantity (u, g, eta, n_gamma): ``rhat``, ``ess_bulk`` and ``ess_tail``
        over the chains' kept draws (:mod:`gpcbench.mcmc.diagnostics`: rank-normalised split
        R-hat, bulk and tail ESS of Vehtari et al. 2021) and the Brooks (1998) CUSUM burn-in
        (max over chains, in sweeps, of the chains thinned by the kept draws' autocorrelation
        time, ``brooks_thin``; multiclass u: the worst class); ``probe_probability``:
        ``max_rhat``, ``min_ess_bulk`` and ``min_ess_tail`` of Phi(u + k_i' beta) over the
        probe points;
        ``brooks_burn_in``: the largest burn-in estimate, NaN if any quantity's is (its
        thinned chain never settles, or is under 10 draws long); ``n_active``: chain 1's largest,
        smallest and most frequent active-set size after the burn-in and that size's count of
        sweeps (ZDJ Table 7).
    convergence_trace_ : list of dict
        Chain 1's active-set size every 20th sweep (``sweep``, ``n_gamma``; ZDJ Fig. 2).
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
    __doc__ = ("Fully Bayesian generalized kernel model (Zhang, Dai & Jordan 2011, ZDJ sec. 3): "
               "probit GKM with a Silverman g-prior on a reversible-jump active set.\n"
               + _PARAMETERS.format(k_max_note=""))


class BGKMClassifier(_GKMClassifier):
    __doc__ = ("BGKM (Zhang, Dai & Jordan 2011, ZDJ sec. 5): the FBGKM sampler without step (c), "
               "every training point active (n_gamma = n).\n"
               + _PARAMETERS.format(k_max_note=" Ignored: BGKM keeps all n points active."))
    _sparse = False


class SGPCClassifier(_GKMClassifier):
    __doc__ = ("Sparse GP classifier (Zhang, Dai & Jordan 2011, ZDJ sec. 4): the FBGKM chain, "
               "predicting by the subset-of-regressors GP predictive of s*.\n"
               + _PARAMETERS.format(k_max_note=""))
    _gp = True

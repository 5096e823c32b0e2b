"""Convergence diagnostics for MCMC draws: bulk and tail effective sample size, split R-hat.

The definitions are those of Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021),
"Rank-normalization, folding, and localization: an improved R-hat for assessing convergence of
MCMC", Bayesian Analysis 16(2), 667-718 ("VGSCB" below), as Stan, R's posterior and ArviZ
compute them; tests/test_diagnostics.py checks them against ArviZ (arviz-stats), a test-only
dependency. The pieces, each implemented once:

* :func:`split_chains` -- each chain cut into its first and last halves (VGSCB sec. 3.1), so
  that a trend within a chain shows as disagreeing chains; one chain suffices.
* :func:`rank_normalise` -- normal scores of the pooled ranks (VGSCB sec. 4.1, after Blom 1958).
* :func:`fold` -- distances from the pooled median (VGSCB sec. 4.2, folded split-R-hat).
* :func:`autocovariance` and ``_geyer_ess`` -- the multi-chain ESS of VGSCB sec. 3.2 with
  Geyer's (1992) initial monotone sequence, the one ESS core behind the bulk and tail ESS and
  the autocorrelation time (:func:`autocorrelation_time`) the Brooks burn-in thins by.
* ``_potential_scale_reduction`` -- R-hat of given chains (VGSCB sec. 3.1).

and the diagnostics built from them:

* :func:`ess_bulk` -- ESS of the rank-normalised split chains (VGSCB sec. 4.1);
* :func:`ess_tail` -- the smaller ESS of the 5 % and 95 % quantile indicators, split chains
  (VGSCB sec. 4.3);
* :func:`split_rhat` -- the larger of the rank-normalised and the folded rank-normalised
  split R-hat (VGSCB sec. 4.1-4.2);
* :func:`sweep_diagnostics` -- these of a sampler's kept sweeps and the Brooks (1998) CUSUM
  burn-in (:func:`gpcbench.mcmc.cusum.brooks_burn_in`) of all its sweeps, as the MCMC
  estimators record them.

Draws are arrays of shape (m, n) (m chains of n draws) or (n,) for one chain.
"""

from __future__ import annotations

import numpy as np
from scipy.fft import irfft, next_fast_len, rfft
from scipy.special import ndtri
from scipy.stats import rankdata

from gpcbench.mcmc.cusum import brooks_burn_in

#: Quantiles whose indicator chains give the tail ESS (VGSCB sec. 4.3: the 5 % and 95 % ones).
TAIL_PROBABILITIES = (0.05, 0.95)


def _as_chains(draws) -> np.ndarray:
    draws = np.asarray(draws, dtype=float)
    chains = np.atleast_2d(draws)
    if chains.ndim != 2 or chains.shape[1] < 4:
        raise ValueError(f"expected draws of shape (n,) or (m, n) with n >= 4, got {draws.shape}")
    return chains


def split_chains(draws) -> np.ndarray:
    """Each chain's first and last halves as separate chains (VGSCB sec. 3.1).

    Parameters
    ----------
    draws : array-like of shape (n,) or (m, n)
        One chain of n draws or m chains of n draws each, n >= 4.

    Returns
    -------
    ndarray of shape (2m, n // 2)
        The m first halves, then the m last halves; with n odd the middle draw is left out.
    """
    chains = _as_chains(draws)
    half = chains.shape[1] // 2
    return np.vstack([chains[:, :half], chains[:, chains.shape[1] - half:]])


def rank_normalise(chains) -> np.ndarray:
    """Normal scores of the pooled ranks (VGSCB sec. 4.1).

    z = Phi^-1((r - 3/8) / (S + 1/4)), r the rank of a draw among all S draws of all chains
    (ties get their average rank), the offsets being Blom's (1958).

    Parameters
    ----------
    chains : array-like of shape (m, n)

    Returns
    -------
    ndarray of shape (m, n)
        The normal score z of every draw.
    """
    chains = np.asarray(chains, dtype=float)
    ranks = rankdata(chains, method="average", axis=None).reshape(chains.shape)
    return ndtri((ranks - 0.375) / (chains.size + 0.25))


def fold(chains) -> np.ndarray:
    """Distances of the draws from the median of all draws (VGSCB sec. 4.2).

    Rank-normalised, they show chains that differ in scale or tails though not in location.

    Parameters
    ----------
    chains : array-like of shape (m, n)

    Returns
    -------
    ndarray of shape (m, n)
        |x - median| of every draw x.
    """
    chains = np.asarray(chains, dtype=float)
    return np.abs(chains - np.median(chains))


def autocovariance(chains) -> np.ndarray:
    """Biased autocovariances gamma_t = 1/n sum_i (x_i - x)(x_i+t - x), t = 0..n-1, by FFT.

    Parameters
    ----------
    chains : array-like of shape (n,) or (m, n)
        Along the last axis: one chain's draws.

    Returns
    -------
    ndarray of the shape of ``chains``
    """
    x = np.asarray(chains, dtype=float)
    x = x - x.mean(axis=-1, keepdims=True)
    n = x.shape[-1]
    size = next_fast_len(2 * n, real=True)  # zero padding to >= 2n - 1: no wrap-around
    spectrum = rfft(x, size, axis=-1)
    return irfft(spectrum * np.conj(spectrum), size, axis=-1)[..., :n] / n


def _geyer_ess(chains) -> float:
    """ESS of m chains of n draws as given (not split, not transformed): VGSCB sec. 3.2.

    The chains' autocorrelations are combined through the variance estimate
    var+ = (n - 1)/n W + B/n (W the mean within-chain variance, B/n the variance of the chain
    means) as rho_t = 1 - (W - mean_j gamma_jt) / var+, with the biased autocovariances
    gamma_jt of :func:`autocovariance`, as Stan computes them. Geyer's (1992) initial positive
    sequence keeps the paired sums P_k = rho_2k + rho_2k+1 before the first that is not
    positive (all but the last pair read, lags up to n - 2, where every one is); the initial
    monotone sequence makes them non-increasing. tau = -1 + 2 sum_k P_k, plus the even rho of
    the first pair left out where it is positive (Stan's improved estimate, which lowers the
    variance for antithetic chains), at least 1 / log10(mn) (Stan's bound,
    ESS <= mn log10(mn)); ESS = mn / tau.
    """
    m, n = chains.shape
    if np.isnan(chains).any():
        return float("nan")
    if np.ptp(chains) <= np.finfo(float).resolution:
        return float(chains.size)  # a constant quantity: every draw tells as much as any
    gammas = autocovariance(chains)
    within = np.mean(gammas[:, 0]) * n / (n - 1)
    var_plus = within * (n - 1) / n + (np.var(chains.mean(axis=1), ddof=1) if m > 1 else 0.0)
    rho = 1.0 - (within - gammas.mean(axis=0)) / var_plus
    rho[0] = 1.0
    n_pairs = (n - 1) // 2  # the last pair (rho_2k, rho_2k+1) read is k = (n - 3) // 2
    pairs = rho[: 2 * n_pairs].reshape(n_pairs, 2).sum(axis=1)
    ended = np.flatnonzero(pairs <= 0)
    stop = int(ended[0]) if ended.size else n_pairs - 1  # pairs 0..stop-1 are kept
    kept = np.minimum.accumulate(pairs[:stop])  # initial monotone sequence
    tau = -1.0 + 2.0 * kept.sum() + max(rho[2 * stop], 0.0)
    tau = max(tau, 1.0 / np.log10(m * n))
    return float(m * n / tau)


def autocorrelation_time(draws) -> float:
    """Integrated autocorrelation time of draws as given (not split, not rank-normalised).

    tau = mn / ESS with the ESS core of :func:`ess_bulk` (VGSCB sec. 3.2, Geyer's initial
    monotone sequence) applied to the raw chains: the number of draws that tell about as much
    as one independent draw. Thinning by it leaves nearly independent draws, as Brooks'
    burn-in criterion (:func:`gpcbench.mcmc.cusum.brooks_burn_in`) wants.

    Parameters
    ----------
    draws : array-like of shape (n,) or (m, n)
        One chain or m chains of n >= 4 draws of one scalar.

    Returns
    -------
    float
        NaN if any draw is NaN; 1 if all draws are equal.
    """
    chains = _as_chains(draws)
    return float(chains.size / _geyer_ess(chains))


def _potential_scale_reduction(chains) -> float:
    """R-hat of m chains of n draws as given: sqrt(var+ / W) (VGSCB sec. 3.1).

    NaN when every chain is constant at one value, inf when they are constant at several.
    """
    n = chains.shape[1]
    within = np.mean(np.var(chains, axis=1, ddof=1))
    between = n * np.var(chains.mean(axis=1), ddof=1)
    if not within > 0:
        return float("nan") if not between > 0 else float("inf")
    return float(np.sqrt(((n - 1) / n * within + between / n) / within))


def ess_bulk(draws) -> float:
    """Bulk effective sample size (VGSCB sec. 4.1).

    The ESS of the rank-normalised split chains: the efficiency of estimates of the bulk of the
    distribution (mean, median), defined also where the draws have no finite mean or variance.

    Parameters
    ----------
    draws : array-like of shape (n,) or (m, n)
        One chain or m chains of n >= 4 draws of one scalar.

    Returns
    -------
    float
        NaN if any draw is NaN; the number of (split) draws if all draws are equal.
    """
    return _geyer_ess(rank_normalise(split_chains(draws)))


def ess_tail(draws, probabilities=TAIL_PROBABILITIES) -> float:
    """Tail effective sample size (VGSCB sec. 4.3).

    The smaller ESS of the split chains of the indicators I(x <= q_a), q_a the quantile of
    all draws at each probability a (by default the 5 % and 95 % quantiles): the efficiency
    of estimates of the tails (tail quantiles, intervals).

    Parameters
    ----------
    draws : array-like of shape (n,) or (m, n)
        One chain or m chains of n >= 4 draws of one scalar.
    probabilities : sequence of float, default (0.05, 0.95)

    Returns
    -------
    float
        NaN if any draw is NaN.
    """
    chains = _as_chains(draws)
    if np.isnan(chains).any():
        return float("nan")
    return float(min(_geyer_ess(split_chains(chains <= np.quantile(chains, a)))
                     for a in probabilities))


def split_rhat(draws) -> float:
    """Rank-normalised split R-hat (VGSCB sec. 4.1-4.2).

    The larger of the R-hat of the rank-normalised split chains (bulk) and that of the
    rank-normalised folded split chains (tails and scale). Values above 1.01 (VGSCB's
    threshold; 1.1 in older practice) flag chains that have not mixed.

    Parameters
    ----------
    draws : array-like of shape (n,) or (m, n)
        One chain or m chains of n >= 4 draws of one scalar; one chain is compared between its
        halves (ArviZ asks for two chains or more).

    Returns
    -------
    float
        NaN if any draw is NaN or all draws are equal.
    """
    chains = split_chains(draws)
    if np.isnan(chains).any():
        return float("nan")
    bulk = _potential_scale_reduction(rank_normalise(chains))
    tail = _potential_scale_reduction(rank_normalise(fold(chains)))
    return float(np.fmax(bulk, tail))


def scalar_diagnostics(draws) -> dict:
    """Split R-hat, bulk ESS and tail ESS of one scalar's draws.

    Parameters
    ----------
    draws : array-like of shape (n,) or (m, n)

    Returns
    -------
    dict
        ``rhat``, ``ess_bulk``, ``ess_tail`` (floats); all NaN with fewer than 4 draws a chain.
    """
    if np.shape(np.atleast_2d(draws))[-1] < 4:
        return {"rhat": float("nan"), "ess_bulk": float("nan"), "ess_tail": float("nan")}
    return {"rhat": split_rhat(draws), "ess_bulk": ess_bulk(draws), "ess_tail": ess_tail(draws)}


def kept_sweeps(n_sweeps, burn_in, thin) -> np.ndarray:
    """0-based indices of the kept sweeps: after the first ``burn_in``, every ``thin``-th."""
    return np.arange(burn_in + thin - 1, n_sweeps, thin)


def chains_converged(rhats, brooks_burn_in, burn_in) -> bool:
    """The samplers' convergence rule: every R-hat that is defined below 1.1 and Brooks'
    burn-in (NaN where the criterion cannot settle it) within the ``burn_in`` sweeps run."""
    return bool(np.nanmax(list(rhats) + [1.0]) < 1.1 and brooks_burn_in <= burn_in)


def sweep_diagnostics(trace, kept, thin) -> dict:
    """Split R-hat, bulk and tail ESS of the kept sweeps and Brooks burn-in of one scalar.

    Brooks' criterion asks for nearly independent draws, so every chain's sweeps are thinned
    for it by the autocorrelation time of the kept draws, in sweeps.

    Parameters
    ----------
    trace : ndarray of shape (m, n_sweeps)
        The scalar at every sweep of m chains.
    kept : int ndarray
        Indices of the kept sweeps (after the burn-in, every ``thin``-th).
    thin : int

    Returns
    -------
    dict
        ``rhat``, ``ess_bulk``, ``ess_tail`` of the kept draws (:func:`scalar_diagnostics`),
        ``brooks_burn_in`` (in sweeps, the largest over the chains) and ``brooks_thin`` (the
        sweeps between the draws it read).
    """
    draws = trace[:, kept]
    tau = autocorrelation_time(draws) if kept.size >= 4 else float("nan")
    step = max(1, round(thin * tau)) if np.isfinite(tau) else thin
    brooks = [brooks_burn_in(chain, thin=step) for chain in trace]
    return {**scalar_diagnostics(draws), "brooks_burn_in": float(np.max(brooks)),
            "brooks_thin": step}


def worst_diagnostics(draws) -> dict:
    """The largest split R-hat and smallest bulk and tail ESS over several scalars.

    Parameters
    ----------
    draws : array-like of shape (m, n, q)
        m chains of n draws of q scalars (e.g. predictive probabilities at q points).

    Returns
    -------
    dict
        ``max_rhat``, ``min_ess_bulk``, ``min_ess_tail``; each over the scalars
        whose value is not NaN, NaN where none has one (q = 0, fewer than 4 draws a chain).
    """
    draws = np.asarray(draws, dtype=float)
    each = [scalar_diagnostics(draws[:, :, q]) for q in range(draws.shape[2])]

    def pick(key, reduce):
        values = np.array([d[key] for d in each])
        values = values[~np.isnan(values)]
        return float(reduce(values)) if values.size else float("nan")

    return {"max_rhat": pick("rhat", np.max), "min_ess_bulk": pick("ess_bulk", np.min),
            "min_ess_tail": pick("ess_tail", np.min)}


def summarize(samples, names) -> dict:
    """Per-parameter mean, sd, split R-hat, bulk and tail ESS of MCMC samples.

    Parameters
    ----------
    samples : array-like of shape (n, p) or (m, n, p)
        One chain, or m chains, of n draws of p parameters.
    names : sequence of str
        The p parameters' names.

    Returns
    -------
    dict
        name -> {``mean``, ``sd``, ``rhat``, ``ess_bulk``, ``ess_tail``}, over all chains.
    """
    samples = np.asarray(samples, dtype=float)
    chains = samples[None] if samples.ndim == 2 else samples
    return {
        name: {"mean": float(np.mean(chains[:, :, j])),
               "sd": float(np.std(chains[:, :, j], ddof=1)),
               **scalar_diagnostics(chains[:, :, j])}
        for j, name in enumerate(names)
    }

"""Convergence diagnostics for MCMC draws: effective sample size and split R-hat.

Standard formulas, implemented here (no ArviZ dependency):

* ESS (Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021, eqs. 10-11 / Stan reference manual):
  the autocorrelations of m chains are combined as
  rho_t = 1 - (W - mean_j gamma_jt) / var+,  with W the mean within-chain variance,
  var+ = (n - 1)/n W + B/n; the sum is truncated by Geyer's (1992) initial monotone sequence
  estimator on the paired sums P_k = rho_2k + rho_2k+1 (positive, then made non-increasing), and
  ESS = m n / tau,  tau = -1 + 2 sum_k P_k.
* R-hat (Vehtari et al. 2021, section 4.2): rank-normalised split R-hat, the larger of the bulk
  (rank-normalised draws) and tail (rank-normalised |draw - median|) values; each chain is split
  in two halves, so one chain suffices.

Chains are arrays of shape (m, n) (m chains of n draws) or (n,) for one chain.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata


def _as_chains(draws) -> np.ndarray:
    draws = np.asarray(draws, dtype=float)
    chains = np.atleast_2d(draws)
    if chains.ndim != 2 or chains.shape[1] < 4:
        raise ValueError(f"expected draws of shape (n,) or (m, n) with n >= 4, got {draws.shape}")
    return chains


def autocovariance(chain) -> np.ndarray:
    """Biased autocovariance gamma_t = 1/n sum_i (x_i - x)(x_i+t - x), t = 0..n-1, by FFT."""
    x = np.asarray(chain, dtype=float) - np.mean(chain)
    n = x.size
    size = 2 ** int(np.ceil(np.log2(2 * n)))
    spectrum = np.fft.rfft(x, size)
    return np.fft.irfft(spectrum * np.conj(spectrum), size)[:n] / n


def effective_sample_size(draws) -> float:
    """ESS of one scalar quantity (Vehtari et al. 2021; Geyer initial monotone sequence)."""
    chains = _as_chains(draws)
    m, n = chains.shape
    gammas = np.array([autocovariance(c) for c in chains])
    within = np.mean(gammas[:, 0] * n / (n - 1))
    between = n * np.var(chains.mean(axis=1), ddof=1) if m > 1 else 0.0
    var_plus = (n - 1) / n * within + between / n
    if not var_plus > 0:
        return float(m * n)  # a constant quantity: every draw is "independent"
    rho = 1.0 - (within - gammas.mean(axis=0)) / var_plus
    rho[0] = 1.0
    pairs = rho[: 2 * (n // 2)].reshape(-1, 2).sum(axis=1)  # P_k = rho_2k + rho_2k+1
    positive = np.flatnonzero(pairs <= 0)
    pairs = pairs[: positive[0]] if positive.size else pairs  # initial positive sequence
    pairs = np.minimum.accumulate(pairs)  # initial monotone sequence
    tau = -1.0 + 2.0 * pairs.sum()
    return float(m * n / max(tau, 1.0 / np.log10(m * n)))  # Stan's cap on antithetic chains


def _split(chains) -> np.ndarray:
    half = chains.shape[1] // 2
    return np.vstack([chains[:, :half], chains[:, -half:]])


def _rhat(chains) -> float:
    n = chains.shape[1]
    within = np.mean(np.var(chains, axis=1, ddof=1))
    between = n * np.var(chains.mean(axis=1), ddof=1)
    if not within > 0:
        return float("nan")
    return float(np.sqrt(((n - 1) / n * within + between / n) / within))


def _rank_normalise(chains) -> np.ndarray:
    """z-scores of the pooled ranks, Phi^-1((r - 3/8) / (S + 1/4)) (Vehtari et al. eq. 14)."""
    ranks = rankdata(chains, method="average").reshape(chains.shape)
    return ndtri((ranks - 0.375) / (chains.size + 0.25))


def split_rhat(draws) -> float:
    """Rank-normalised split R-hat: max of the bulk and folded (tail) values."""
    chains = _split(_as_chains(draws))
    bulk = _rhat(_rank_normalise(chains))
    folded = _rhat(_rank_normalise(np.abs(chains - np.median(chains))))
    return float(max(bulk, folded))


def summarize(samples, names) -> dict:
    """Per-parameter mean, sd, ESS and split R-hat of one chain of samples of shape (n, p)."""
    samples = np.asarray(samples, dtype=float)
    return {
        name: {
            "mean": float(np.mean(column)),
            "sd": float(np.std(column, ddof=1)),
            "ess": effective_sample_size(column),
            "rhat": split_rhat(column),
        }
        for name, column in zip(names, samples.T)
    }

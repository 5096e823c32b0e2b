"""MCMC diagnostics (gpcbench.mcmc.diagnostics): bulk and tail ESS and split R-hat against
ArviZ (arviz-stats, the test extra) on AR(1) chains that mix well and badly, heavy-tailed,
discrete and stuck chains; against the AR(1) closed forms on long chains; and their edge cases."""

import numpy as np
import pytest
from scipy import stats

from gpcbench.mcmc.diagnostics import (
    autocorrelation_time,
    autocovariance,
    chains_converged,
    ess_bulk,
    ess_tail,
    fold,
    kept_sweeps,
    rank_normalise,
    scalar_diagnostics,
    split_chains,
    split_rhat,
    summarize,
    worst_diagnostics,
)

azs = pytest.importorskip("arviz_stats.base").array_stats

N_DRAWS = 2000


def ar1(phi, n_chains, n_draws=N_DRAWS, seed=0, innovations="normal"):
    """Stationary AR(1) chains x_i = phi x_i-1 + e_i of shape (n_chains, n_draws); the
    innovations standard normal, Student-t with 3 degrees of freedom or Cauchy."""
    rng = np.random.default_rng(seed)
    draw = {"normal": rng.standard_normal,
            "student_t3": lambda size: rng.standard_t(3, size),
            "cauchy": rng.standard_cauchy}[innovations]
    noise = draw((n_chains, n_draws))
    x = np.empty((n_chains, n_draws))
    x[:, 0] = noise[:, 0] / np.sqrt(1 - phi**2)
    for i in range(1, n_draws):
        x[:, i] = phi * x[:, i - 1] + noise[:, i]
    return x


def shifted(seed):
    """Four chains of independent N(0, 1) draws, one moved by 3 s.d. (the issue's third row)."""
    x = np.random.default_rng(seed).standard_normal((4, N_DRAWS))
    x[0] += 3.0
    return x


def stuck_in_a_mode(seed):
    """Four chains on the mixture 1/2 N(-3, 1) + 1/2 N(3, 1): three switch modes with
    probability 0.05 a draw, the fourth never leaves +3."""
    rng = np.random.default_rng(seed)
    switches = rng.random((4, N_DRAWS)) < 0.05
    switches[3] = False
    modes = np.where(np.cumsum(switches, axis=1) % 2 == 0, 1.0, -1.0)
    modes[:3] *= np.where(rng.random((3, 1)) < 0.5, 1.0, -1.0)
    return 3.0 * modes + ar1(0.5, 4, seed=seed + 1) * np.sqrt(1 - 0.25)


def counts(seed):
    """Integer draws with many ties (as n_gamma's): a rounded AR(1) on 0..20 in four chains."""
    return np.clip(np.round(10 + 3 * ar1(0.9, 4, seed=seed) * np.sqrt(1 - 0.81)), 0, 20)


#: name -> chains (m, n); one chain or four, phi from 0 to 0.995.
CASES = {
    **{f"normal phi={phi} m={m}": (lambda phi=phi, m=m, s=s: ar1(phi, m, seed=s))
       for s, (phi, m) in enumerate((phi, m) for phi in (0.0, 0.3, 0.6, 0.9, 0.95, 0.99, 0.995,
                                                          -0.5)
                                    for m in (1, 4))},
    **{f"{law} phi={phi} m={m}": (lambda phi=phi, m=m, law=law, s=s: ar1(phi, m, seed=100 + s,
                                                                         innovations=law))
       for s, (law, phi, m) in enumerate((law, phi, m) for law in ("student_t3", "cauchy")
                                         for phi in (0.5, 0.95) for m in (1, 4))},
    "four chains, one shifted by 3 s.d.": lambda: shifted(200),
    "four chains, one stuck in a mode": lambda: stuck_in_a_mode(201),
    "integer draws with ties": lambda: counts(202),
}


def arviz(chains):
    """ArviZ's bulk ESS, tail ESS (5 % and 95 % quantiles) and rank-normalised split R-hat."""
    return {"ess_bulk": float(azs.ess(chains, method="bulk")),
            "ess_tail": float(azs.ess(chains, method="tail", prob=(0.05, 0.95))),
            "rhat": float(azs.rhat(chains, method="rank"))}


@pytest.mark.parametrize("name", ["normal phi=0.9 m=4", "normal phi=-0.5 m=1",
                                  "cauchy phi=0.95 m=4", "four chains, one shifted by 3 s.d."])
def test_autocorrelation_time_is_the_draws_over_arviz_ess_of_the_raw_chains(name):
    chains = CASES[name]()
    raw = float(azs.ess(chains, method="identity"))  # neither split nor rank-normalised
    assert autocorrelation_time(chains) == pytest.approx(chains.size / raw, rel=0.05)


@pytest.mark.parametrize("name", CASES)
def test_bulk_and_tail_ess_and_split_rhat_agree_with_arviz(name):
    chains = CASES[name]()
    ours, theirs = scalar_diagnostics(chains), arviz(chains)
    assert ours["ess_bulk"] == pytest.approx(theirs["ess_bulk"], rel=0.05)
    assert ours["ess_tail"] == pytest.approx(theirs["ess_tail"], rel=0.05)
    if chains.shape[0] > 1:  # ArviZ's R-hat asks for two chains; ours splits one
        assert ours["rhat"] == pytest.approx(theirs["rhat"], rel=0.005)
    else:
        assert np.isnan(theirs["rhat"]) and np.isfinite(ours["rhat"])


def test_the_issue_rows_slow_chains_have_the_small_ess_arviz_gives():
    """Issue 41: AR(1) phi = 0.99 (one and four chains) and a shifted chain, where the ESS of
    the raw unsplit chains was 2-3 times ArviZ's bulk ESS, or under half of it."""
    for chains in (ar1(0.99, 1, seed=10), ar1(0.99, 4, seed=11), shifted(200)):
        assert ess_bulk(chains) == pytest.approx(arviz(chains)["ess_bulk"], rel=1e-6)
    assert ess_bulk(ar1(0.99, 1, seed=10)) < 10  # the chain wanders over ~ 1.5 levels


def test_a_chain_stuck_in_one_mode_is_flagged():
    chains = stuck_in_a_mode(201)
    assert split_rhat(chains[:3]) < 1.01 < 1.05 < split_rhat(chains)
    assert ess_bulk(chains) < ess_bulk(chains[:3]) / 5


def _ar1_indicator_tau(phi, probability):
    """The integrated autocorrelation time of I(x <= q) for a stationary Gaussian AR(1),
    q its quantile at ``probability``: lag-t correlation (Phi2(q, q; phi^t) - p^2) / (p (1-p))
    with the bivariate normal CDF Phi2."""
    q, p = stats.norm.ppf(probability), probability
    lags = np.arange(1, int(np.ceil(np.log(1e-6) / np.log(abs(phi)))) + 1)
    rho = [(stats.multivariate_normal([0, 0], [[1, phi**t], [phi**t, 1]]).cdf([q, q]) - p * p)
           / (p * (1 - p)) for t in lags]
    return 1.0 + 2.0 * np.sum(rho)


@pytest.mark.parametrize("phi", [0.5, 0.9, -0.3])
def test_ess_of_a_long_ar1_chain_matches_the_closed_forms(phi):
    """Bulk ESS: n (1 - phi) / (1 + phi), the normal scores of a Gaussian chain being the
    chain itself; tail ESS: n / tau of the 5 % quantile's indicator (equal for the 95 % one)."""
    n = 100_000
    chain = ar1(phi, 1, n, seed=4)[0]
    assert ess_bulk(chain) == pytest.approx(n * (1 - phi) / (1 + phi), rel=0.1)
    assert autocorrelation_time(chain) == pytest.approx((1 + phi) / (1 - phi), rel=0.1)
    assert ess_tail(chain) == pytest.approx(n / _ar1_indicator_tau(phi, 0.05), rel=0.15)


def test_split_rhat_flags_chains_that_disagree():
    rng = np.random.default_rng(5)
    mixed = rng.standard_normal((4, 1000))
    assert split_rhat(mixed) < 1.01
    assert split_rhat(mixed + np.arange(4)[:, None]) > 1.5
    assert split_rhat(mixed * np.array([1, 1, 1, 4])[:, None]) > 1.1  # scale: the folded R-hat
    trend = np.linspace(0, 3, 1000) + rng.standard_normal(1000)
    assert split_rhat(trend) > 1.1  # one chain: the split halves disagree


def test_pieces_split_rank_normalise_fold_and_autocovariance():
    x = np.arange(9.0).reshape(1, 9)
    assert split_chains(x).tolist() == [[0, 1, 2, 3], [5, 6, 7, 8]]  # odd n: the middle out
    z = rank_normalise([[3.0, 1.0], [2.0, 2.0]])
    assert z[0, 1] < z[1, 0] == z[1, 1] < z[0, 0] and z[1, 0] == pytest.approx(0.0)
    assert fold([[1.0, 5.0], [3.0, 4.0]]).tolist() == [[2.5, 1.5], [0.5, 0.5]]
    chain = np.random.default_rng(0).standard_normal(50)
    centred = chain - chain.mean()
    direct = [centred[: 50 - t] @ centred[t:] / 50 for t in range(50)]
    assert autocovariance(chain) == pytest.approx(direct, abs=1e-12)


def test_constant_missing_and_short_draws():
    constant = np.full((2, 10), 3.0)
    assert ess_bulk(constant) == ess_tail(constant) == 20.0  # every draw as good as any
    assert np.isnan(split_rhat(constant)) and autocorrelation_time(constant) == 1.0
    assert split_rhat(np.repeat([[1.0], [2.0]], 10, axis=1)) == np.inf  # stuck apart
    with_nan = np.random.default_rng(1).standard_normal((2, 10))
    with_nan[1, 3] = np.nan
    assert all(np.isnan(v) for v in scalar_diagnostics(with_nan).values())
    assert all(np.isnan(v) for v in scalar_diagnostics(np.ones((2, 3))).values())
    with pytest.raises(ValueError, match="n >= 4"):
        ess_bulk(np.ones(3))


def test_worst_diagnostics_and_summarize_cover_every_scalar_and_chain():
    good, slow = ar1(0.2, 2, 400, seed=6), ar1(0.97, 2, 400, seed=7)
    draws = np.stack([good, slow], axis=2)  # (chains, draws, scalars)
    worst = worst_diagnostics(draws)
    assert worst == {"max_rhat": split_rhat(slow), "min_ess_bulk": ess_bulk(slow),
                     "min_ess_tail": min(ess_tail(good), ess_tail(slow))}
    assert all(np.isnan(v) for v in worst_diagnostics(np.ones((2, 10, 0))).values())
    summary = summarize(draws, ["good", "slow"])
    assert summary["slow"] == {"mean": pytest.approx(slow.mean()),
                               "sd": pytest.approx(slow.std(ddof=1)), **scalar_diagnostics(slow)}
    one_chain = summarize(good[0][:, None], ["good"])["good"]  # (n, p): one chain
    assert one_chain["ess_bulk"] == ess_bulk(good[0])


def test_kept_sweeps_are_the_last_of_every_thin_block_after_the_burn_in():
    # ZDJ sec. 5.1's schedule: 10,000 sweeps, 5,000 burned, every 5th kept -> T = 1,000
    kept = kept_sweeps(10000, 5000, 5)
    assert kept.size == 1000 and kept[0] == 5004 and kept[-1] == 9999
    assert set(np.diff(kept)) == {5}
    assert kept_sweeps(7, 0, 1).tolist() == list(range(7))


def test_the_convergence_rule_ignores_undefined_rhat_but_not_an_unsettled_burn_in():
    assert chains_converged([1.05, float("nan")], 400.0, 5000)
    assert chains_converged([], 400.0, 5000)  # one chain: no R-hat counts
    assert not chains_converged([1.05, 1.2], 400.0, 5000)
    assert not chains_converged([1.0], 5200.0, 5000)
    assert not chains_converged([1.0], float("nan"), 5000)  # Brooks cannot settle it

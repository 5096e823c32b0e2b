"""Issue 18: EM-EP and direct L-BFGS-B maximisation of log Z_EP reach the same converged
maximum; the stopping rule, bound handling and the ConvergenceWarning at the cap."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from gpcbench.kernels.covariance import Covariance
from gpcbench.learning.em_ep import em_ep
from gpcbench.learning.evidence_lbfgs import em_then_lbfgs, maximize_evidence
from gpcbench.learning.squarem import squarem_point
from gpcbench.learning.stopping import (
    BOUND_SLACK,
    LOG_BOUNDS,
    StoppingRule,
    projected_gradient,
    stalled,
)
from gpcbench.likelihoods import NoisyThresholdLikelihood
from gpcbench.models import EPGaussianProcessClassifier, MulticlassEPGaussianProcessClassifier

GTOL = 1e-3  # tight: the flat-ish theta0 / theta2 direction needs it for 1e-2 agreement


def _data(n=60, d=2, seed=0, flip=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.5 * np.sin(2 * X[:, 1]) > 0, 1.0, -1.0)
    y[rng.choice(n, flip, replace=False)] *= -1
    return X, y


@pytest.mark.parametrize("ard", [False, True])
@pytest.mark.parametrize("quasi_newton", [maximize_evidence, em_then_lbfgs])
def test_em_and_lbfgs_reach_the_same_converged_maximum(ard, quasi_newton):
    X, y = _data(seed=1)
    start = Covariance(1.0, 1e-4, 1e-3, np.full(2 if ard else 1, 0.05))
    em = em_ep(X, y, start, NoisyThresholdLikelihood(), gtol=GTOL, max_iter=500)
    lbfgs = quasi_newton(X, y, start, NoisyThresholdLikelihood(),
                         learn=("theta0", "theta1", "theta2", "inverse_lengthscale"), gtol=GTOL)
    assert em.converged and lbfgs.converged
    for result in (em, lbfgs):  # the converged gradient is below the tolerance
        assert result.trace[-1]["gradient_norm"] <= GTOL
        gradient = result.ep.log_evidence_gradient(result.covariance, X)
        projected, _ = projected_gradient(result.covariance.log_params, gradient)
        assert np.max(np.abs(projected)) <= 2 * GTOL  # recomputed at a fresh EP fixed point
    np.testing.assert_allclose(em.log_evidence, lbfgs.log_evidence, rtol=1e-3)
    # where the evidence is not flat: with epsilon = 0 the threshold H(y f) ignores the scale
    # of f, so only theta0 / theta2 (and the inverse lengthscales) are identified; the bias
    # theta1 barely matters here
    em_log, lbfgs_log = em.covariance.log_params, lbfgs.covariance.log_params
    np.testing.assert_allclose(em_log[0] - em_log[2], lbfgs_log[0] - lbfgs_log[2], atol=1e-2)
    np.testing.assert_allclose(em_log[3:], lbfgs_log[3:], atol=1e-2)


def test_estimator_optimizers_share_attributes_and_trace_layout():
    X, y = _data(seed=2)
    fits = {opt: EPGaussianProcessClassifier(optimizer=opt).fit(X, y) for opt in ("em", "lbfgs")}
    keys = [set(fit.trace_[-1]) - {"extrapolated"} for fit in fits.values()]
    assert keys[0] == keys[1] >= {"gradient_norm", "at_bound", "stop_reason", "log_evidence"}
    assert all(fit.converged_ and fit.n_iter_ == len(fit.trace_) for fit in fits.values())
    np.testing.assert_allclose(fits["em"].log_evidence_, fits["lbfgs"].log_evidence_, rtol=1e-3)
    with pytest.raises(ValueError, match="optimizer"):
        EPGaussianProcessClassifier(optimizer="newton").fit(X, y)


def test_multiclass_optimizers_agree():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((45, 2))
    y = np.digitize(X[:, 0] + 0.3 * rng.standard_normal(45), [-0.5, 0.5])
    fits = [MulticlassEPGaussianProcessClassifier(optimizer=opt).fit(X, y)
            for opt in ("em", "lbfgs")]
    assert all(fit.converged_ for fit in fits)
    np.testing.assert_allclose(fits[0].log_evidence_, fits[1].log_evidence_, rtol=1e-3)


def test_irrelevant_input_at_its_bound_does_not_stall_convergence():
    """An inverse lengthscale started at its lower bound, pushing outwards, is held there,
    named in the trace, and not counted by the gradient test."""
    X, y = _data(d=3, seed=4)
    X[:, 2] = np.random.default_rng(5).standard_normal(X.shape[0])  # irrelevant input
    start = Covariance(1.0, 1e-4, 1e-3, [0.05, 0.05, np.exp(LOG_BOUNDS[0])])
    result = maximize_evidence(X, y, start, NoisyThresholdLikelihood(),
                               learn=("theta0", "theta2", "inverse_lengthscale"), gtol=GTOL)
    assert result.converged
    assert result.trace[0]["at_bound"] == ["inverse_lengthscale[2]"]
    held = result.covariance.log_params[5] <= LOG_BOUNDS[0] + BOUND_SLACK
    assert held == ("inverse_lengthscale[2]" in result.trace[-1]["at_bound"])


def test_stopping_rule_gradient_change_and_bounds():
    rule = StoppingRule(["a", "b"], gtol=1e-2, ftol=1e-6, xtol=1e-4)
    entry = rule.update(-10.0, [0.0, LOG_BOUNDS[0]], [0.5, -3.0])
    assert not rule.converged and entry["at_bound"] == ["b"] and entry["gradient_norm"] == 0.5
    entry = rule.update(-9.0, [0.1, LOG_BOUNDS[0]], [5e-3, -3.0])
    assert rule.converged and entry["stop_reason"] == "gradient"
    rule = StoppingRule(["a"], gtol=0.0, ftol=1e-6, xtol=1e-4)
    rule.update(-10.0, [1.0])
    assert not rule.converged
    rule.update(-10.0 - 1e-8, [1.0 + 1e-5])
    assert rule.converged and rule.reason == "change"


def test_stalled_compares_the_best_of_the_last_steps_with_the_best_before():
    assert not stalled([-10.0, -9.0, -8.0, -7.0], rtol=1e-3)  # still climbing
    assert stalled([-10.0, -7.0, -7.0001, -7.00005, -7.0002], rtol=1e-4)  # gained 5e-5 < 7e-4
    assert not stalled([-10.0, -7.0, -12.0, -11.0, -6.0], rtol=1e-4)  # a jump in the window
    assert not stalled([-10.0, -10.0, -10.0, -10.0, -10.0], rtol=0.0)  # rtol 0: never


def test_em_lbfgs_hands_a_stalled_em_over_to_lbfgs():
    """On a flat ridge of the GPC-EP(s,hard) evidence (theta0 traded against the fixed
    latent noise theta2) EM-EP stalls; L-BFGS-B from its last E-step converges, and the trace
    numbers both phases on from one another."""
    X, y = _data(n=120, d=4, seed=0, flip=12)
    start = Covariance(1.0, 1e-4, 1e-6, np.array([0.05]))
    learn = ("theta0", "theta1", "inverse_lengthscale")
    result = em_then_lbfgs(X, y, start, NoisyThresholdLikelihood(), learn=learn, gtol=GTOL)
    phases = [entry["phase"] for entry in result.trace]
    assert result.converged and phases[0] == "em" and phases[-1] == "lbfgs"
    assert [entry["iteration"] for entry in result.trace] == list(range(len(result.trace)))
    handover = phases.index("lbfgs") - 1
    assert result.trace[handover]["stop_reason"] == "stalled"
    assert result.log_evidence >= result.trace[handover]["log_evidence"]


@pytest.mark.parametrize("optimizer", ["em", "lbfgs", "em-lbfgs"])
def test_a_fit_stopped_at_its_cap_warns(optimizer):
    X, y = _data(seed=6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = EPGaussianProcessClassifier(ard=True, optimizer=optimizer, max_iter=1).fit(X, y)
    assert not fit.converged_
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught)


@pytest.mark.parametrize("optimizer", ["em", "lbfgs", "em-lbfgs"])
def test_every_scheme_logs_its_iterations_and_its_end(optimizer, caplog):
    """Progress lines (gpcbench.progress, what a fold job's log shows while it runs): the first
    iteration with its log Z and gradient, and a final line with the outcome."""
    X, y = _data()
    with caplog.at_level("INFO", logger="gpcbench.progress"):
        clf = EPGaussianProcessClassifier(optimizer=optimizer).fit(X, y)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith(f"EPGaussianProcessClassifier ({optimizer}): iteration 0 log Z ")
    assert "|grad|" in lines[0]
    assert lines[-1].startswith(f"EPGaussianProcessClassifier ({optimizer}): stopped after ")
    assert lines[-1].endswith(f"converged {clf.converged_}")


def test_lbfgs_trust_box_keeps_off_the_independent_latent_plateau():
    """Pima-like data (n = 180, 7 inputs, noisy labels), GPC-EP(s,hard) from K&G footnote 11:
    unconfined, L-BFGS-B's second step (curvature ~0 over the first) goes to the inverse
    lengthscale's upper bound, where every latent is independent and log Z_EP is flat; the
    trust box reaches the interior maximum, 9 nats higher, with a finite lengthscale."""
    from gpcbench.estimators.ep import gpc_ep_variant
    from gpcbench.estimators.ep_variants import initial_hyperparameters

    rng = np.random.default_rng(5)
    X = rng.standard_normal((180, 7))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.standard_normal(180) > 0.6, 1.0, -1.0)
    variant = "GPC-EP(s,hard)"
    covariance = gpc_ep_variant(variant, init=initial_hyperparameters(variant))._covariance(7)
    fit = {radius: maximize_evidence(X, y, covariance, NoisyThresholdLikelihood(0.0),
                                     learn=("theta0", "theta1", "inverse_lengthscale"),
                                     trust_radius=radius, gtol=GTOL)
           for radius in (np.inf, 2.0)}
    plateau, interior = fit[np.inf].trace[-1], fit[2.0].trace[-1]
    assert plateau["hyperparameters"]["inverse_lengthscale"] > 1e5  # the bound is 1e6
    assert fit[2.0].converged and interior["at_bound"] == []
    assert 0.1 < interior["hyperparameters"]["inverse_lengthscale"] < 10
    assert interior["gradient_norm"] <= GTOL
    assert fit[2.0].ep.log_evidence > fit[np.inf].ep.log_evidence + 5


def test_squarem_point_solves_a_linear_fixed_point_map_in_one_jump():
    """For M(theta) = theta* + rho (theta - theta*) (EM's linear phase, one rate) SqS3's
    point theta0 - 2 a r + a^2 v with a = -|r|/|v| = -1/(1 - rho) is theta* exactly."""
    rng = np.random.default_rng(0)
    fixed, rho = rng.normal(size=4), 0.93
    theta0 = fixed + rng.normal(size=4)
    theta1 = fixed + rho * (theta0 - fixed)
    theta2 = fixed + rho * (theta1 - fixed)
    np.testing.assert_allclose(squarem_point(theta0, theta1, theta2), fixed, atol=1e-12)
    assert squarem_point(theta0, theta0, theta0) is None  # at a fixed point: nothing to do

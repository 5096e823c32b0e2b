"""K&G's GPC-EP variants (K&G Tables 4-5) and their initialisation protocol (K&G footnotes 11-12).

A variant is a model structure (one inverse lengthscale or one per input), the set of learned
hyperparameters and where a fold's search starts; :func:`~gpcbench.estimators.ep.gpc_ep_variant`
configures an :class:`~gpcbench.estimators.ep.EPGaussianProcessClassifier` as one, with the
starting values of :func:`initial_hyperparameters`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpcbench.kernels.covariance import COVARIANCE_NAMES

#: K&G footnote 11: initial values for GPC-EP(s,soft) on the first fold; K&G footnote 12:
#: epsilon = 0. EPGaussianProcessClassifier's defaults are these values.
PAPER_INITIAL_VALUES = {
    "theta0": 1.0,
    "theta1": 1e-4,
    "theta2": 1e-3,
    "inverse_lengthscale": 0.05,
    "epsilon": 0.0,
}
#: "theta2 was fixed to zero or a very small number" for GPC-EP(s,hard) (K&G sec. 3.5.2).
HARD_THETA2 = 1e-6


@dataclass(frozen=True)
class Variant:
    """One GPC-EP row of K&G Tables 4-5: model structure, learned set and initialisation rule.

    ``init_from`` is ``"previous_fold"`` (K&G footnote 11: first fold from
    :data:`PAPER_INITIAL_VALUES`, later folds from the previous fold's result) or the name of
    another variant fitted on the same fold (GPC-EP(m,soft) starts from GPC-EP(s,soft)).
    """

    name: str
    ard: bool
    learn: tuple[str, ...]
    fixed: dict = field(default_factory=dict)
    init_from: str = "previous_fold"


VARIANTS = {
    v.name: v
    for v in (
        Variant(
            "GPC-EP(s,hard)",
            ard=False,
            learn=("theta0", "theta1", "inverse_lengthscale"),
            fixed={"theta2": HARD_THETA2},
        ),
        Variant("GPC-EP(s,soft)", ard=False, learn=COVARIANCE_NAMES),
        Variant("GPC-EP(m,soft)", ard=True, learn=COVARIANCE_NAMES, init_from="GPC-EP(s,soft)"),
    )
}


def initial_hyperparameters(variant: Variant | str, previous_fold=None, same_fold=None) -> dict:
    """Starting hyperparameters for one fold under K&G's protocol (K&G footnote 11).

    Parameters
    ----------
    variant : Variant or its name in :data:`VARIANTS`
    previous_fold : dict, optional
        ``hyperparameters_`` fitted by the same variant on the previous fold.
    same_fold : dict, optional
        ``hyperparameters_`` fitted on this fold by the variant named in ``variant.init_from``.

    Returns
    -------
    dict with keys theta0, theta1, theta2, inverse_lengthscale, epsilon; the variant's fixed
    values override the starting ones.
    """
    variant = VARIANTS[variant] if isinstance(variant, str) else variant
    if variant.init_from == "previous_fold":
        start = previous_fold if previous_fold is not None else PAPER_INITIAL_VALUES
    else:
        if same_fold is None:
            raise ValueError(f"{variant.name} starts from {variant.init_from} on the same fold")
        start = same_fold
    values = {key: start[key] for key in PAPER_INITIAL_VALUES}
    values.update(variant.fixed)
    return values

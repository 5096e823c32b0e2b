"""Projection pursuit regression on the class indicators (the "PP regression" rows of W&B
Tables 1-3, from Ripley 1994, 1996), by the ``projection-pursuit`` package.

Its :class:`skpp.ProjectionPursuitClassifier` regresses the one-hot class indicators on r
ridge functions f_j(a_j^T x) shared by all classes (Friedman's SMART, as S's ``ppr`` that Ripley
used), alternating over a_j, f_j and the per-class output weights, with backfitting, and labels
a point by its largest fitted indicator. Its ridge functions are cubic polynomials
(``fit_type="polyfit"``), not S's supersmoother; it gives no probabilities.
"""

from skpp import ProjectionPursuitClassifier


def make_projection_pursuit(r: int = 4, random_state=None,
                            **options) -> ProjectionPursuitClassifier:
    """The package's classifier with ``r`` ridge functions; ``options`` go to it unchanged."""
    return ProjectionPursuitClassifier(r=r, random_state=random_state, **options)

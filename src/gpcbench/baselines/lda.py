"""Linear discriminant analysis (the LDA rows of K&G Tables 4, 5 and 7).

K&G sec. 4.3: for J classes, LDA uses J - 1 discriminant features; scikit-learn's
``LinearDiscriminantAnalysis`` classifies with the shared-covariance Gaussian model, whose
decision rule is the same as nearest class mean in that (J - 1)-dimensional space.
"""

from sklearn.discriminant_analysis import LinearDiscriminantAnalysis


def make_lda() -> LinearDiscriminantAnalysis:
    """LDA with the SVD solver (no covariance inverse, stable with collinear features)."""
    return LinearDiscriminantAnalysis(solver="svd")

"""K&G's relevance data (K&G sec. 3.5.1, Table 2) over several draws of its generator: the
table's cells come from one seeded draw, and their binomial s.e. covers the 10,000 test rows
but not which 300 training rows were drawn. Here the pipeline's two EM-EP rows (single and
multiple lengthscales, with the config's options) and LDA are fitted on :data:`DRAWS` further
draws of :func:`gpcbench.data.generators.kim_relevance` (seeds spawned from the reading's), and
Bayes's rule (the sign of x1 + x2 + x3; error Phi(-sqrt 3) = 0.042 in theory) is scored on each
draw's test rows."""

from __future__ import annotations

import json

import numpy as np

from gpcbench.data.generators import kim_relevance
from gpcbench.experiments.registry import FitContext, method_spec
from gpcbench.io import json_safe

DRAWS = 20
#: method -> the options config/config.yaml gives it (tests check they agree)
METHODS = {"gpc-ep-s-soft": {"optimizer": "em-lbfgs"}, "gpc-ep-m-soft": {"optimizer": "em-lbfgs"},
           "lda": {}}
INPUTS: list[str] = []  # the reading draws its own data


def draw_errors(seed: int, draw_seed: int) -> dict:
    """Test error of every method of :data:`METHODS` and of Bayes's rule on one draw."""
    data = kim_relevance(draw_seed)
    n_train = data.provenance["train_rows"]
    X_train, y_train, X_test, y_test = (data.X[:n_train], data.y[:n_train], data.X[n_train:],
                                        data.y[n_train:])
    errors = {"bayes": float(np.mean((X_test[:, :3].sum(axis=1) > 0) != y_test))}
    upstream = {}  # GPC-EP(m,soft) starts from GPC-EP(s,soft) on the same draw (K&G fn. 11)
    for method, options in METHODS.items():
        context = FitContext(options=options, seed=seed, n_jobs=1,
                             feature_types=tuple(data.feature_types), fold=0, upstream=upstream)
        estimator = method_spec(method).factory(context).fit(X_train, y_train)
        errors[method] = float(np.mean(estimator.predict(X_test) != y_test))
        upstream[f"{method}/fold0"] = {"status": "ok", "hyperparameters": json.loads(
            json.dumps(json_safe(getattr(estimator, "hyperparameters_", {}))))}
    return errors


def measure(root, seed: int) -> dict:
    """method (and 'bayes') -> mean, s.d. (ddof 1), min and max of the test error over the
    draws, and every draw's error."""
    draw_seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(DRAWS)]
    per_draw = [draw_errors(seed, draw_seed) for draw_seed in draw_seeds]
    values = {}
    for name in per_draw[0]:
        errors = np.array([draw[name] for draw in per_draw])
        values[name] = {"mean": float(errors.mean()), "sd": float(errors.std(ddof=1)),
                        "min": float(errors.min()), "max": float(errors.max()),
                        "errors": errors.tolist()}
    return values

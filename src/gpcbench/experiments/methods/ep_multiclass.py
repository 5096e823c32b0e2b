"""GPC-EP rows of Kim & Ghahramani (2006), K&G Table 7: multiclass EM-EP (K&G sec. 4.3).

The protocol is the binary one (K&G sec. 3.5.2, K&G footnote 11) on the class differences:
GPC-EP(s,soft) on fold k starts from its own fold k-1 result (fold 0 from K&G's values),
GPC-EP(m,soft) from GPC-EP(s,soft) on the same fold; labels by K&G eq. 54, the rule of K&G's
K&G Table 7. The ``-eq53`` and ``-probability`` rows show the other label rules on the same fold:
one EP run at the hyperparameters the K&G eq. 54 row learned (an upstream dependency, as for
SVM-EP), labelled by K&G eqs. 52-53 or by the largest class probability of K&G eq. 50.
"""

from gpcbench.experiments.methods.ep import (
    discrete_mask,
    fitted,
    previous_fold,
    warm_started,
)
from gpcbench.experiments.options import EP_MULTICLASS
from gpcbench.experiments.registry import MethodSpec, register

MULTICLASS_VARIANTS = {"gpc-ep-mc-s-soft": "GPC-EP(s,soft)", "gpc-ep-mc-m-soft": "GPC-EP(m,soft)"}
#: Label rules besides K&G eq. 54, and how their rows are printed.
OTHER_RULES = {"eq53": "eq. 53 labels", "probability": "eq. 50 probabilities"}


def gpc_ep_multiclass(method):
    def factory(ctx):
        from gpcbench.estimators.ep_multiclass import MulticlassEPGaussianProcessClassifier

        return warm_started(ctx, method, MULTICLASS_VARIANTS[method], "gpc-ep-mc-s-soft",
                            {"prediction_rule": "eq54"},
                            classifier=MulticlassEPGaussianProcessClassifier,
                            random_state=ctx.seed)

    return factory


def same_fold(method):
    def upstream(fold, options):
        return [(method, fold)]

    return upstream


def refit_with_rule(method, rule):
    """One EP run at the hyperparameters ``method`` learned on this fold, labels by ``rule``."""
    def factory(ctx):
        from gpcbench.estimators.ep_multiclass import MulticlassEPGaussianProcessClassifier

        learned = fitted(ctx, method, ctx.fold)
        if learned is None:
            raise RuntimeError(f"{method} has no fitted hyperparameters on this fold")
        return MulticlassEPGaussianProcessClassifier(
            **learned, ard=isinstance(learned["inverse_lengthscale"], list),
            learn_hyperparameters=False, discrete_features=discrete_mask(ctx),
            prediction_rule=rule, random_state=ctx.seed)

    return factory


for _method, _label in MULTICLASS_VARIANTS.items():
    register(MethodSpec(
        name=_method, label=_label, factory=gpc_ep_multiclass(_method),
        upstream=(same_fold("gpc-ep-mc-s-soft") if "-m-" in _method else previous_fold(_method)),
        options=EP_MULTICLASS,
    ))
    for _rule, _printed in OTHER_RULES.items():
        register(MethodSpec(
            name=f"{_method}-{_rule}", label=f"{_label}, {_printed}",
            factory=refit_with_rule(_method, _rule),
            upstream=same_fold(_method),
        ))

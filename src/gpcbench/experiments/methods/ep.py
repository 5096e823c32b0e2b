"""GPC-EP rows of Kim & Ghahramani (2006), K&G Tables 1, 2, 4 and 5, and SVM-EP(s,soft).

Warm starts follow K&G footnote 11 as pipeline dependencies (``upstream``), not recomputation:
GPC-EP(s,*) on fold k starts from its own fold k-1 result (fold 0 from K&G's values);
GPC-EP(m,soft) starts from GPC-EP(s,soft) on the same fold; SVM-EP(s,soft) uses the covariance
GPC-EP(s,soft) learned on the same fold, without theta2. ``warm_start: false`` in the method's
options starts every fold from K&G's values instead.
"""

from gpcbench.experiments.options import EP, SVM
from gpcbench.experiments.registry import MethodSpec, register

VARIANT_NAMES = {"gpc-ep-s-hard": "GPC-EP(s,hard)", "gpc-ep-s-soft": "GPC-EP(s,soft)",
                 "gpc-ep-m-soft": "GPC-EP(m,soft)"}


def fitted(ctx, method, fold):
    """Hyperparameters an upstream job fitted, or None if it did not run or failed."""
    record = ctx.upstream.get(f"{method}/fold{fold}")
    if not record or record.get("status") != "ok":
        return None
    return record.get("hyperparameters") or None


def discrete_mask(ctx):
    """The inputs that take K&G eq. 14's 1 - delta distance: the data set's ``discrete`` columns,
    or the indices the method's option ``discrete_features`` lists where the config gives one
    (``[]``: every input a number, the squared distance of a Gaussian ARD kernel such as GPML's
    covSEard, which ZDJ sec. 5.3's FGP+KL used on Splice's letter codes)."""
    if "discrete_features" in ctx.options:
        return list(ctx.options["discrete_features"])
    return [kind == "discrete" for kind in ctx.feature_types]


def warm_started(ctx, method, name, s_soft, defaults=(), **fixed):
    """The GPC-EP variant ``name`` started by K&G footnote 11 from ``method``'s previous fold or
    the (s,soft) method ``s_soft`` on this fold; ``defaults`` are estimator options the
    method's options override, ``fixed`` ones they cannot."""
    from gpcbench.estimators.ep import gpc_ep_variant
    from gpcbench.estimators.ep_variants import initial_hyperparameters

    init = initial_hyperparameters(
        name, previous_fold=fitted(ctx, method, ctx.fold - 1),
        same_fold=fitted(ctx, s_soft, ctx.fold))
    options = {**dict(defaults), **ctx.options}
    options.pop("warm_start", None)
    model = gpc_ep_variant(name, init=init, **options, **fixed)
    return model.set_params(discrete_features=discrete_mask(ctx))


def gpc_ep(method):
    def factory(ctx):
        return warm_started(ctx, method, VARIANT_NAMES[method], "gpc-ep-s-soft")

    return factory


def previous_fold(method):
    def upstream(fold, options):
        if not options.get("warm_start", True) or fold == 0:
            return []
        return [(method, fold - 1)]

    return upstream


def same_fold_s_soft(fold, options):
    return [("gpc-ep-s-soft", fold)]


def svm_ep(ctx):
    from gpcbench.baselines.svm import KernelSVM
    from gpcbench.kernels.covariance import Covariance

    learned = fitted(ctx, "gpc-ep-s-soft", ctx.fold)
    if learned is None:
        raise RuntimeError("GPC-EP(s,soft) has no fitted hyperparameters on this fold")
    kernel = Covariance(learned["theta0"], learned["theta1"], 0.0,
                        learned["inverse_lengthscale"], discrete_mask(ctx))
    return KernelSVM(kernel=kernel, cv_folds=ctx.options.get("cv_folds", 5),
                     random_state=ctx.seed, n_jobs=ctx.n_jobs)


for _method, _label in VARIANT_NAMES.items():
    register(MethodSpec(
        name=_method, label=_label, factory=gpc_ep(_method),
        upstream=(same_fold_s_soft if _method == "gpc-ep-m-soft" else previous_fold(_method)),
        options=EP,
    ))
register(MethodSpec(name="svm-ep-s-soft", label="SVM-EP(s,soft)", factory=svm_ep,
                    probabilistic=False,
                    upstream=same_fold_s_soft, options=SVM))

"""Issue 22 follow-up: where FBGKM's n_gamma sits on Digit1 / g241d / COIL2 under candidate readings
of ZDJ. One chain per (set, partition, reading) on the pipeline's data and partitions."""
import json, sys, time
import numpy as np
from gpcbench.estimators.gkm import FBGKMClassifier
from gpcbench.experiments.run_fold import standardize

def load(ds, fold):
    z = np.load(f"data/processed/{ds}.npz")
    sp = json.load(open(f"data/splits/zhang2011/{ds}.json"))["folds"][fold]
    tr, te = np.asarray(sp["train"]), np.asarray(sp["test"])
    return z["X"][tr], z["y"][tr], z["X"][te], z["y"][te]

def run(ds, fold, reading, opts, prep="std", sweeps=4000, burn=2000, seed=0, width_factor=None, k_max=200):
    Xtr, ytr, Xte, yte = load(ds, fold)
    if prep == "std":
        Xtr, Xte = standardize(Xtr, Xte)
    if width_factor is not None:
        from gpcbench.kernels.rbf import mean_distance
        opts = dict(opts, kernel_width=width_factor * mean_distance(np.asarray(Xtr, float)))
    est = FBGKMClassifier(n_sweeps=sweeps, burn_in=burn, thin=5, k_max=k_max, n_chains=1,
                          random_state=seed, **opts)
    t = time.process_time()
    est.fit(Xtr, ytr)
    err = 100 * np.mean(est.predict(Xte) != yte)
    na = est.diagnostics_["n_active"]
    acc = est.acceptance_rates_
    row = dict(ds=ds, fold=fold, reading=reading, prep=prep, wf=width_factor, max=na["max"], min=na["min"],
               most=na["most"], freq=na["most_frequency"], ess=est.diagnostics_["n_gamma"]["ess_bulk"],
               acc=[round(acc[m], 2) for m in ("birth", "death", "swap")], err=round(err, 2),
               g=float(np.median(est.samples_["g"])), eta=float(np.median(est.samples_["eta"])),
               width=est.kernel_width_, k_max=k_max,
               hist={int(k): int(c) for k, c in zip(*np.unique(est.n_active_trace_[0, burn:],
                                                              return_counts=True))}, cpu=round(time.process_time() - t, 1))
    print(json.dumps(row), flush=True)
    return row

if __name__ == "__main__":
    spec = json.loads(sys.argv[1])
    for s in spec:
        run(**s)

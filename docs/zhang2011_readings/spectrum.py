"""Numerical rank of the training kernel matrix at ZDJ sec. 5.1's width (mean distance)."""
import json, sys
import numpy as np
from scipy.spatial.distance import pdist, squareform
from gpcbench.experiments.run_fold import standardize
sys.path.insert(0, "docs/zhang2011_readings")
from measure import load

for ds in ["digit1", "g241d", "coil2"]:
    for fold in (0, 1, 2):
        for prep in ("std", "raw"):
            Xtr, ytr, Xte, yte = load(ds, fold)
            if prep == "std":
                Xtr, _ = standardize(Xtr, Xte)
            d = pdist(Xtr)
            theta = d.mean()
            K = np.exp(-squareform(d) ** 2 / theta ** 2)
            ev = np.sort(np.linalg.eigvalsh(K))[::-1]
            counts = {t: int((ev > 10.0 ** -t * ev[0]).sum()) for t in (4, 6, 8, 10, 12, 14)}
            dmin = np.sort(d)[:3] / theta
            print(ds, fold, prep, f"theta {theta:.3g}", "rank>1e-t:", counts,
                  "min d/theta", np.round(dmin, 4), "n_dupl", int((d == 0).sum()))

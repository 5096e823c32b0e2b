"""Summarise table4_cells.sh: each reading's 10-fold error against the pipeline's default run
of the same folds (the fold ledger), as a paired difference +- its s.e., beside the published
value (mean +- s.e.).

    python docs/kim2006_readings/table4_cells.py OUT_DIR reports/results/kim2006_binary.csv.gz
"""
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
published = pd.concat([pd.read_csv(ROOT / "config" / "published" / f"kim2006_table{k}.csv")
                       for k in (4, 5)])
PRINTED = {"heart": "Heart disease", "thyroid": "Thyroid", "ionosphere": "Ionosphere",
           "crabs": "Crabs", "pima_tr": "Pima", "boston": "Boston Housing"}
LABELS = {"gpc-l-m-soft": "GPC-L(m,soft)", "gpc-vl-m-soft": "GPC-VL(m,soft)",
          "gpc-vu-m-soft": "GPC-VU(m,soft)"}
out, ledger = Path(sys.argv[1]), pd.read_csv(sys.argv[2])
for method, label in LABELS.items():
    for dataset, printed in PRINTED.items():
        readings = sorted({p.stem.split("_")[-2] for p in out.glob(f"{dataset}_{method}_*.json")})
        if not readings:
            continue
        pub = published[(published.dataset == printed) & (published.method == label)].iloc[0]
        rows = ledger[(ledger.dataset == dataset) & (ledger.method == method)].set_index("fold")
        default = np.array([rows.loc[fold, "error"] for fold in range(10)])
        print(f"{dataset} {label}: published {pub.error_mean:.4f} +- {pub.error_se:.4f}, "
              f"default {default.mean():.4f} +- {default.std(ddof=1) / np.sqrt(10):.4f}")
        for reading in readings:
            errors = np.array([json.loads((out / f"{dataset}_{method}_{reading}_{fold}.json")
                                          .read_text())["metrics"]["error"] for fold in range(10)])
            diff = errors - default
            print(f"  {reading}: {errors.mean():.4f} +- {errors.std(ddof=1) / np.sqrt(10):.4f}, "
                  f"paired difference {diff.mean():+.4f} +- {diff.std(ddof=1) / np.sqrt(10):.4f}")

"""Summarise table2_cells.sh: each reading's error on partitions 0-4 against the pipeline's
default run of the same partitions (the fold ledger), as a paired difference +- its s.e.

    python docs/zhang2011_readings/table2_cells.py OUT_DIR reports/results/zhang2011.csv.gz
"""
import json
import sys

import numpy as np
import pandas as pd

out, ledger = sys.argv[1], pd.read_csv(sys.argv[2])
for dataset, method in [("coil2", "fbgkm"), ("letters_ab", "fbgkm"), ("digit1", "sgpc")]:
    rows = ledger[(ledger.dataset == dataset) & (ledger.method == method)].set_index("fold")
    default = np.array([100 * rows.loc[fold, "error"] for fold in range(5)])
    print(f"{dataset} {method}: default {default.mean():.2f} (partitions 0-4), "
          f"{100 * rows.error.mean():.2f} (all {len(rows)})")
    for reading in ("beta", "raw"):
        errors = np.array([100 * json.load(open(f"{out}/{dataset}_{method}_{reading}_{fold}.json"))
                           ["metrics"]["error"] for fold in range(5)])
        diff = errors - default
        print(f"  {reading}: {errors.mean():.2f}, paired difference {diff.mean():+.2f} "
              f"+- {diff.std(ddof=1) / np.sqrt(5):.2f}")

"""Summarise table10_inputs.sh: each cell's error on unstandardised inputs against the
pipeline's standardised run of the same partition (fold result files), partition by partition.

    python docs/zhang2011_readings/table10_inputs.py OUT_DIR RESULTS_DIR   # e.g. results/zhang2011
"""
import json
import sys
from pathlib import Path

out, results = Path(sys.argv[1]), Path(sys.argv[2])
for raw in sorted(out.glob("*_fold*.json")):
    entry, rest = raw.stem.split("_", 1)
    method, fold = rest.rsplit("_fold", 1)
    standardised = results / entry / method / f"fold{fold}.json"
    if not standardised.is_file():
        continue
    a, b = json.loads(raw.read_text()), json.loads(standardised.read_text())
    print(f"{entry:14s} {method:13s} partition {fold}: raw {100 * a['metrics']['error']:.2f} %, "
          f"standardised {100 * b['metrics']['error']:.2f} % "
          f"(CPU {a['timings']['cpu_s']:.0f} s / {b['timings']['cpu_s']:.0f} s)")

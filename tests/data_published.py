"""The published data set facts the data tests compare against (``config/published``)."""

import csv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: K&G Table 3 (binary) and Table 6 (multi-class) data set names -> this package's data sets
KIM_TABLES = {
    "kim2006_table3_datasets.csv": {
        "Thyroid": "thyroid",
        "Heart disease": "heart",
        "Ionosphere": "ionosphere",
        "Crabs": "crabs",
        "Pima": "pima_tr",
        "Boston Housing": "boston",
    },
    "kim2006_table6_datasets.csv": {
        "New Thyroid": "thyroid3",
        "Auto-Mpg": "autompg",
        "Boston Housing": "boston3",
    },
}


def published(name: str) -> list[dict]:
    """The rows of ``config/published/<name>``."""
    with open(REPO / "config" / "published" / name, newline="") as handle:
        return list(csv.DictReader(handle))

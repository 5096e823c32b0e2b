"""``data/checksums.tsv``: the SHA-256 of every pinned archive and the content SHA-256 of
every processed data set.

Regenerate it (fetching every raw set from its archive, offline) with::

    python -m gpcbench.data.checksums --write-checksums data/checksums.tsv
"""

from __future__ import annotations

from pathlib import Path

from gpcbench.data.dataset import content_sha256
from gpcbench.data.preprocess import build_dataset
from gpcbench.data.registry import DATASETS, RAW_SETS, pinned_archives
from gpcbench.data.sources import fetch_raw_set
from gpcbench.io import atomic_write_text

DEFAULT_SEED = 20061201  # config/config.yaml's seed: the one checksums.tsv records for generated sets
CHECKSUM_COLUMNS = ("kind", "name", "seed", "sha256", "detail")
CHECKSUMS_HEADER = (
    "# SHA-256 manifest of gpcbench's data. 'archive' rows: the pinned offline files (file SHA-256).\n"
    "# 'processed' rows: content_sha256 of each processed data set (arrays and names, not the .npz\n"
    "# bytes), built with the given seed ('-' where no seed is used).\n"
    "# Regenerate: python -m gpcbench.data.checksums --write-checksums data/checksums.tsv\n"
)


def read_checksums(path: Path) -> dict[tuple[str, str], dict]:
    """Parse ``checksums.tsv`` into ``{(kind, name): {"seed": ..., "sha256": ..., "detail": ...}}``."""
    rows = {}
    for line in Path(path).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if fields[0] == "kind":
            continue
        record = dict(zip(CHECKSUM_COLUMNS, fields))
        rows[(record["kind"], record["name"])] = record
    return rows


def checksum_lines(raw_dir: Path, *, seed: int) -> list[str]:
    """The rows of ``checksums.tsv``: every pinned archive, then every processed data set."""
    lines = ["\t".join(CHECKSUM_COLUMNS)]
    for filename, (digest, detail) in pinned_archives().items():
        lines.append("\t".join(("archive", filename, "-", digest, detail)))
    for name, spec in DATASETS.items():
        dataset = build_dataset(name, raw_dir, seed=seed)
        seed_text = str(seed) if spec.kind == "generator" else "-"
        shape = f"{dataset.X.shape[0]}x{dataset.X.shape[1]}"
        lines.append("\t".join(("processed", name, seed_text, content_sha256(dataset), shape)))
    return lines


def write_checksums(path: Path, raw_dir: Path, cache_dir: Path, *, seed: int) -> None:
    """Fetch every raw set from its archive (offline) and write ``checksums.tsv`` atomically."""
    for raw in RAW_SETS:
        fetch_raw_set(raw, raw_dir, cache_dir, offline=True)
    atomic_write_text(path, CHECKSUMS_HEADER + "\n".join(checksum_lines(raw_dir, seed=seed)) + "\n")


def main(argv: list[str] | None = None) -> int:
    """``python -m gpcbench.data.checksums --write-checksums data/checksums.tsv``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m gpcbench.data.checksums", description=main.__doc__)
    parser.add_argument("--write-checksums", type=Path, required=True, metavar="TSV")
    parser.add_argument("--raw-dir", type=Path, default=Path("data/raw"))
    parser.add_argument("--cache-dir", type=Path, default=Path("data/archives"))
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    write_checksums(args.write_checksums, args.raw_dir, args.cache_dir, seed=args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

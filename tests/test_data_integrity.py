"""What a processed data set depends on, and what happens when its file is damaged.

The data code hash comes from the import graph of the preprocessing code: editing any module a
reader, builder or generator uses (e.g. the covariance functions ``kim_gp2d`` is sampled from)
changes it, editing a module none of them uses does not. A processed ``.npz`` that is cut
short or altered is an error naming the file, never data; the pipeline rebuilds it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpcbench.cli import main
from gpcbench.data.dataset import Dataset, DamagedDataError, load_dataset, save_dataset
from gpcbench.workflow import remove_damaged_datasets

SRC = Path(__file__).resolve().parents[1] / "src"
HASH = "from gpcbench.workflow import data_code_hash; print(data_code_hash('{}'))"


def _data_hash(src: Path, dataset: str) -> str:
    """``data_code_hash(dataset)`` as a fresh process importing the sources under ``src``."""
    return subprocess.run([sys.executable, "-c", HASH.format(dataset)], env={"PYTHONPATH": src},
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def src_copy(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("src") / "src"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return copy


@pytest.mark.parametrize("module, changes", [
    ("kernels/covariance.py", True),  # generators.py samples kim_gp2d from a GP with these covariances
    ("mcmc/moves.py", False),  # a sampler: no data set depends on it
])
def test_editing_a_module_changes_the_hash_of_the_data_sets_that_use_it(src_copy, module,
                                                                         changes):
    path = src_copy / "gpcbench" / module
    original = path.read_text()
    before = _data_hash(src_copy, "kim_gp2d")
    path.write_text(original + "\n# edited\n")
    try:
        after = _data_hash(src_copy, "kim_gp2d")
    finally:
        path.write_text(original)
    assert (after != before) == changes


@pytest.fixture
def processed(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    dataset = Dataset(X=rng.normal(size=(40, 3)), y=np.arange(40) % 2,
                      feature_names=["a", "b", "c"], feature_types=["continuous"] * 3,
                      class_names=["no", "yes"])
    save_dataset(dataset, tmp_path / "toy.npz", tmp_path / "toy.json")
    return tmp_path / "toy.npz"


def test_a_cut_file_is_an_error_naming_it(processed):
    processed.write_bytes(processed.read_bytes()[:300])
    with pytest.raises(DamagedDataError, match=f"^{processed} is damaged .*rebuild it$"):
        load_dataset(processed)


def test_altered_content_is_an_error_naming_the_file_and_its_record(processed):
    """A readable file whose data differ from the SHA-256 the provenance records."""
    dataset = load_dataset(processed)
    dataset.X[0, 0] += 1.0
    meta = json.loads(processed.with_suffix(".json").read_text())
    save_dataset(dataset, processed, processed.with_suffix(".other.json"))
    processed.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(DamagedDataError, match="does not match the SHA-256 recorded in .*toy.json"):
        load_dataset(processed)


def test_a_job_reading_a_damaged_file_exits_with_one_line(processed, tmp_path, capsys):
    processed.write_bytes(processed.read_bytes()[:300])
    code = main(["split", str(processed), str(tmp_path / "split.json"),
                 "--protocol", '{"type": "kfold", "folds": 2}', "--seed", "1",
                 "--seed-key", "k"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and str(processed) in err[0]
    assert not (tmp_path / "split.json").exists()


def test_damaged_files_are_removed_for_rebuilding_and_intact_ones_kept(processed, tmp_path,
                                                                      capsys):
    intact = tmp_path / "intact"
    intact.mkdir()
    shutil.copy(processed, intact / "toy.npz")
    shutil.copy(processed.with_suffix(".json"), intact / "toy.json")
    processed.write_bytes(processed.read_bytes()[:300])
    # snakemake -n: named, left in place
    assert remove_damaged_datasets(tmp_path, dry_run=True) == [processed]
    assert processed.exists() and processed.with_suffix(".json").exists()
    assert "left in place by this dry run" in capsys.readouterr().err
    assert remove_damaged_datasets(tmp_path) == [processed]
    assert not processed.exists() and not processed.with_suffix(".json").exists()
    assert capsys.readouterr().err.splitlines() == [
        f"gpcbench: {processed} does not match the SHA-256 recorded in "
        f"{processed.with_suffix('.json')}; rebuilding it"]
    assert remove_damaged_datasets(intact) == [] and (intact / "toy.npz").exists()

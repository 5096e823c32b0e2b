"""The configs validate; bad configs are rejected with the offending key named."""

import copy
import re

import pytest
import yaml

import numpy as np

from gpcbench.config import (ConfigError, check_causes, entry_fold_count, entry_methods,
                             entry_train_size, load_config, method_options, read_causes,
                             run_switch, standardizes, validate_config)
from gpcbench.data.registry import DATASETS


@pytest.fixture
def config(repo):
    return yaml.safe_load((repo / "config" / "config.yaml").read_text())


@pytest.mark.parametrize("name", ["config.yaml", "smoke.yaml"])
def test_shipped_configs_validate(repo, name):
    load_config(repo / "config" / name)


@pytest.mark.parametrize(
    "mutate, key",
    [
        (lambda c: c.update(seed="abc"), "seed"),
        (lambda c: c.pop("offline"), "offline"),
        (lambda c: c["data"].update(source_order=["archive", "ftp"]), "data.source_order[1]"),
        (lambda c: c["jobs"].update(threads=0), "jobs.threads"),
        (lambda c: c["experiments"]["kim2006_binary"]["protocol"].update(folds="ten"),
         "experiments.kim2006_binary.protocol.folds"),
        (lambda c: c["experiments"]["kim2006_binary"]["protocol"].update(type="bootstrap"),
         "experiments.kim2006_binary.protocol.type"),
        (lambda c: c["experiments"]["kim2006_binary"].update(colour="red"),
         "experiments.kim2006_binary.colour"),
        (lambda c: c["experiments"]["kim2006_binary"]["methods"].insert(1, "no-such-method"),
         "experiments.kim2006_binary.methods[1]"),
        (lambda c: c["experiments"]["kim2006_binary"]["datasets"].update(nosuchset={}),
         "experiments.kim2006_binary.datasets.nosuchset"),
        (lambda c: c["tables"]["kim2006_table4"].update(experiment="nowhere"),
         "tables.kim2006_table4.experiment"),
        (lambda c: c["tables"]["kim2006_table4"].update(metric="auc"), "tables.kim2006_table4.metric"),
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["bci"].update(methods=["fbgkm", "nope"]),
         "experiments.zhang2011.datasets.bci.methods[1]"),
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["splice"].update(
            options={"bgkm": {"k_max": 10}}), "experiments.zhang2011.datasets.splice.options.bgkm"),
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["bci"].update(options={"fbgkm": 100}),
         "experiments.zhang2011.datasets.bci.options.fbgkm"),
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["splice"].update(
            pending={"bgkm": "slow"}), "experiments.zhang2011.datasets.splice.pending.bgkm"),
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["bci"].update(
            pending={"fbgkm": ""}), "experiments.zhang2011.datasets.bci.pending.fbgkm"),
        (lambda c: c["tables"]["cho2015_table2"]["methods"].append("gpc-l-hmc"),
         "tables.cho2015_table2.methods[2]"),
        (lambda c: c["tables"]["zhang2011_table12"].update(method_metrics={"svm-ep": "error"}),
         "tables.zhang2011_table12.method_metrics.svm-ep"),
        (lambda c: c["tables"]["zhang2011_table12"].update(method_metrics={"fbgkm": "auc"}),
         "tables.zhang2011_table12.method_metrics.fbgkm"),
        (lambda c: c["tables"]["cho2015_table2"]["published"].pop("method"),
         "tables.cho2015_table2.published"),
        (lambda c: c["tables"]["zhang2011_table4"]["published"].update(key=["n_train"]),
         "tables.zhang2011_table4.published.key"),
        (lambda c: c["figures"]["cho2015_decision_regions"].update(methods=["knn"]),
         "figures.cho2015_decision_regions.methods"),
        (lambda c: c["figures"]["williams1998_figure2"].update(type="violin"),
         "figures.williams1998_figure2.type"),
        (lambda c: c["figures"]["zhang2011_figure3"].update(table="zhang2011_table11"),
         "figures.zhang2011_figure3.table"),
        (lambda c: c["figures"]["zhang2011_figure4"].pop("table"), "figures.zhang2011_figure4.table"),
        (lambda c: c["figures"]["zhang2011_figure4"].update(datasets=["splice", "bci"]),
         "figures.zhang2011_figure4.datasets[1]"),
        # per-entry protocol overrides follow the protocol's schema
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["bci"].update(protocol={"fold": 2}),
         "experiments.zhang2011.datasets.bci.protocol.fold"),
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["bci"].update(
            protocol={"type": "kfoldx"}), "experiments.zhang2011.datasets.bci.protocol.type"),
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["bci"].update(
            protocol={"folds": "three"}), "experiments.zhang2011.datasets.bci.protocol.folds"),
        # method options: declared by the method's registry entry, with their types
        (lambda c: c["experiments"]["kim2006_binary"].update(raw_input_methods=["knn", "fbgkm"]),
         "experiments.kim2006_binary.raw_input_methods[1]"),
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["bci"].update(standardize="no"),
         "experiments.zhang2011.datasets.bci.standardize"),
        (lambda c: c["methods"]["knn"].update(tie_break="random"), "methods.knn.tie_break"),
        (lambda c: c["methods"]["knn"].update(k_gird=[1, 3]), "methods.knn.k_gird"),
        (lambda c: c["methods"]["knn"].update(k_grid="abc"), "methods.knn.k_grid"),
        (lambda c: c["methods"].update(lda={"k_grid": [1]}), "methods.lda.k_grid"),
        (lambda c: c["methods"].update(nosuch={}), "methods.nosuch"),
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["bci"].update(
            options={"fbgkm": {"k_max": "many"}}),
         "experiments.zhang2011.datasets.bci.options.fbgkm.k_max"),
        (lambda c: c["experiments"]["zhang2011"]["datasets"]["bci"].update(
            options={"fbgkm": {"kmax": 10}}), "experiments.zhang2011.datasets.bci.options.fbgkm.kmax"),
        # scheduler-request overrides
        (lambda c: c["jobs"].update(resources={"gkm-rjmcmc": {"minutes": 60}}),
         "jobs.resources.gkm-rjmcmc"),
        (lambda c: c["jobs"].update(resources={"fbgkm": {"minutes": "long"}}),
         "jobs.resources.fbgkm.minutes"),
        (lambda c: c["jobs"].update(resources={"fbgkm": {"minuts": 60}}),
         "jobs.resources.fbgkm.minuts"),
    ],
)
def test_bad_config_is_rejected_naming_the_key(config, mutate, key):
    bad = copy.deepcopy(config)
    mutate(bad)
    with pytest.raises(ConfigError) as info:
        validate_config(bad)
    message = str(info.value)
    assert f"config key '{key}'" in message
    assert "\n" not in message


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["experiments"]["kim2006_binary"]["methods"].insert(1, "lad"),
     "config key 'experiments.kim2006_binary.methods[1]': unknown method 'lad' (did you mean "
     "'lda'?); known: 1nn, bgkm, "),
    (lambda c: c["experiments"]["kim2006_binary"]["datasets"].update(crabz={}),
     "config key 'experiments.kim2006_binary.datasets.crabz': unknown data set 'crabz' (did you "
     "mean 'crabs'"),
    (lambda c: c["tables"]["kim2006_table4"].update(experiment="kim2006_binar"),
     "config key 'tables.kim2006_table4.experiment': unknown experiment 'kim2006_binar' (did "
     "you mean 'kim2006_binary'"),
    (lambda c: c.update(seeed=1),
     "config key 'seeed': unknown key 'seeed' (did you mean 'seed'?); known: data, "),
    (lambda c: c["data"].update(prepare=["xyzzy"]),
     "config key 'data.prepare[0]': unknown data set 'xyzzy'; known: adult, astroparticle, "),
])
def test_an_unknown_name_gets_the_closest_known_ones_and_a_short_list(config, mutate, message):
    """A misspelt name: one line with the closest known names (difflib) and the known names,
    the first 12 and their count where there are more."""
    bad = copy.deepcopy(config)
    mutate(bad)
    with pytest.raises(ConfigError) as info:
        validate_config(bad)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    names = str(info.value).split("; known: ")[1]
    assert names.count(", ") <= 12 and (names.endswith(" in all)") or "..." not in names)


def test_the_schemas_causes_of_cells_beyond_two_se_are_the_reports():
    """A ``beyond_2se`` cause the schema admits is one the index explains, and conversely."""
    from gpcbench.config import causes_schema
    from gpcbench.experiments.report.fidelity import CAUSES

    cause = causes_schema()["additionalProperties"]["items"]["properties"]["cause"]
    assert cause["enum"] == list(CAUSES)


@pytest.mark.parametrize("entry, key", [
    ({"cause": "bad luck", "cells": {"SVM": ["Ringnorm"]}, "why": "x"},
     "beyond_2se.yaml.zhang2011_table13[0].cause"),
    ({"cause": "data", "cells": {"SVM": ["Ringnrom"]}, "why": "x"},
     "beyond_2se.yaml.zhang2011_table13[0].cells.SVM"),
    ({"cause": "data", "cells": {"SVM": ["Ringnorm"]}}, "beyond_2se.yaml.zhang2011_table13[0].why"),
])
def test_bad_causes_beside_the_published_numbers_are_rejected_naming_the_key(
        config, repo, tmp_path, entry, key):
    for path in (repo / "config" / "published").glob("*.csv"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "beyond_2se.yaml").write_text(yaml.safe_dump({"zhang2011_table13": [entry]}))
    with pytest.raises(ConfigError, match=re.escape(f"config key '{key}'")):
        validate_config(config, published_dir=tmp_path)
        check_causes(config, read_causes(tmp_path))
    with pytest.raises(ConfigError, match="config key 'beyond_2se.yaml.zhang2011_tabel13'"):
        check_causes(config, {"zhang2011_tabel13": [entry]})


def test_the_shipped_causes_name_the_protocols_tables_and_columns(config, repo):
    check_causes(config, read_causes(repo / "config" / "published"))


def test_config_yaml_holds_no_prose(repo):
    """Notes live in docs/tables and causes in config/published: config.yaml has no ``notes``
    key, no comment of more than one line and no line over 150 characters."""
    text = (repo / "config" / "config.yaml").read_text()
    assert not re.search(r"^\s*notes:", text, flags=re.M)
    assert not re.search(r"^\s*beyond_2se:", text, flags=re.M)
    lines = text.splitlines()
    comment = [line.lstrip().startswith("#") for line in lines]
    blocks = [i for i in range(1, len(lines)) if comment[i] and comment[i - 1]]
    assert not blocks, f"config.yaml line {blocks[0] + 1}: a comment of more than one line"
    long = [i + 1 for i, line in enumerate(lines) if len(line) > 150]
    assert not long, f"config.yaml lines over 150 characters: {long}"


def test_unreadable_config_file_is_named(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("seed: [unclosed\n")
    with pytest.raises(ConfigError, match="broken.yaml"):
        load_config(path)


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("seed: 1\noffline: true\ndata: {source_order: [archive}\n")
    with pytest.raises(ConfigError, match=r"broken.yaml, line 3, column \d+: invalid YAML"):
        load_config(path)


def test_missing_published_file_names_the_table_and_path(config, repo, tmp_path):
    config["tables"]["kim2006_table4"]["published"]["file"] = "kim2006_table44.csv"
    with pytest.raises(ConfigError) as info:
        validate_config(config, published_dir=repo / "config" / "published")
    message = str(info.value)
    assert "tables.kim2006_table4.published.file" in message
    assert str(repo / "config" / "published" / "kim2006_table44.csv") in message


def test_shipped_configs_name_existing_published_files(repo):
    for name in ("config.yaml", "smoke.yaml"):
        load_config(repo / "config" / name, published_dir=repo / "config" / "published")


def test_the_documented_resource_override_validates(config, repo):
    """The ``jobs: {resources: ...}`` examples of docs/cluster.md and resources.smk."""
    docs = (repo / "docs" / "cluster.md").read_text() + (
        repo / "workflow" / "rules" / "resources.smk").read_text()
    examples = re.findall(r"^#?\s*jobs: (\{resources: .*\})$", docs, re.M)
    examples += [yaml.safe_load(block)["jobs"] for block in re.findall(
        r"```yaml\n(jobs:\n.*?)```", docs, re.S)]
    assert len(examples) >= 2
    for example in examples:
        jobs = yaml.safe_load(example) if isinstance(example, str) else example
        validate_config({**config, "jobs": {**config["jobs"], **jobs}})


@pytest.mark.parametrize("protocol", [
    {"type": "kfold", "folds": 4}, {"type": "kfold"}, {"type": "fixed"},
    {"type": "random", "partitions": 3, "n_train": 100, "n_test": 40},
    {"type": "random", "n_train": 100, "n_test": 40},
    {"type": "per_class", "per_cell": 20}, {"type": "per_class", "per_cell": 20, "partitions": 5},
    {"type": "blocks"}, {"type": "blocks", "block_size": 100}, {"type": "blocks", "block_size": 400},
])
def test_fold_counts_and_training_sizes_known_from_the_config_are_the_splitters(protocol):
    """The pipeline plans fold jobs and scheduler requests from the config alone; the counts
    and sizes it plans are those of the folds the splitter makes (Kim's Table 1 blocks data:
    10 x 200 rows, whatever block_size divides them into)."""
    from gpcbench.data.dataset import Dataset
    from gpcbench.data.splits import make_splits

    entry = "kim_gp2d" if protocol["type"] in ("blocks", "fixed") else "iris"
    if protocol["type"] == "fixed":
        entry = "pima"
    experiment = {"protocol": protocol, "datasets": {entry: {}}}
    spec = DATASETS[entry]
    rng = np.random.default_rng(0)
    counts = list((spec.class_counts or {"all": spec.rows}).values())
    y = np.repeat(np.arange(len(counts)), counts)
    dataset = Dataset(X=rng.normal(size=(spec.rows, 2)), y=y, feature_names=["a", "b"],
                      feature_types=["continuous"] * 2, class_names=[str(k) for k in range(len(counts))],
                      provenance=dict(spec.extra))
    folds = make_splits(protocol, dataset, seed=1)
    assert entry_fold_count(experiment, entry) == len(folds)
    assert entry_train_size(experiment, entry) == max(len(f["train"]) for f in folds)


def test_entry_methods_and_options_override_the_experiments():
    config = {
        "methods": {"fbgkm": {"n_sweeps": 100, "k_max": 200}},
        "experiments": {"z": {"methods": ["knn", "fbgkm"], "datasets": {
            "a": {}, "b": {"methods": ["bgkm", "fbgkm"], "options": {"fbgkm": {"k_max": 40}}}}}},
    }
    experiment = config["experiments"]["z"]
    assert entry_methods(experiment, "a") == ["knn", "fbgkm"]
    assert entry_methods(experiment, "b") == ["bgkm", "fbgkm"]
    assert method_options(config, "z", "a", "fbgkm") == {"n_sweeps": 100, "k_max": 200}
    assert method_options(config, "z", "b", "fbgkm") == {"n_sweeps": 100, "k_max": 40}
    assert method_options(config, "z", "b", "bgkm") == {}


def test_an_entrys_standardize_overrides_the_experiments_but_not_its_raw_input_methods():
    experiment = {"standardize": True, "raw_input_methods": ["knn"],
                  "datasets": {"a": {}, "b": {"standardize": False}}}
    assert standardizes(experiment, "a", "fbgkm") and not standardizes(experiment, "a", "knn")
    assert not standardizes(experiment, "b", "fbgkm") and not standardizes(experiment, "b", "knn")
    raw = {"standardize": False, "datasets": {"a": {}, "b": {"standardize": True}}}
    assert not standardizes(raw, "a", "fbgkm") and standardizes(raw, "b", "fbgkm")


@pytest.mark.parametrize("word", ["true", "false", "True", "False", "TRUE", "yes", "no", "on",
                                  "off"])
def test_a_run_switch_word_reads_as_yaml_reads_it(word):
    """``snakemake --config reuse_ledger=false`` hands the rule file the string 'false'."""
    config = {"reuse_ledger": word, "seed": 1}
    assert run_switch(config, "reuse_ledger", True) is yaml.safe_load(word)
    assert config == {"seed": 1}  # the switch is not part of the validated config


@pytest.mark.parametrize("value, expected", [(0, False), (1, True), ("0", False), ("1", True),
                                             (False, False), (True, True)])
def test_a_run_switch_takes_booleans_and_one_or_zero(value, expected):
    assert run_switch({"partial": value}, "partial", not expected) is expected


def test_an_absent_run_switch_is_its_default():
    assert run_switch({}, "partial", False) is False
    assert run_switch({}, "reuse_ledger", True) is True


@pytest.mark.parametrize("value", ["maybe", "", 2, "tru"])
def test_a_run_switch_of_another_value_is_named(value):
    with pytest.raises(ConfigError, match=re.escape(
            f"config key 'partial': expected true or false, got {value!r}")):
        run_switch({"partial": value}, "partial", False)

"""The configs validate; bad configs are rejected with the offending key named."""

import copy

import pytest
import yaml

from gpcbench.config import (ConfigError, entry_methods, load_config, method_options, n_folds,
                             validate_config)


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
         "experiments.kim2006_binary"),
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
        (lambda c: c["tables"]["cho2015_table2"]["methods"].append("gpc-l-hmc"),
         "tables.cho2015_table2.methods[2]"),
        (lambda c: c["tables"]["cho2015_table2"]["published"].pop("method"),
         "tables.cho2015_table2.published"),
        (lambda c: c["tables"]["zhang2011_table4"]["published"].update(key=["n_train"]),
         "tables.zhang2011_table4.published.key"),
        (lambda c: c["figures"]["cho2015_decision_regions"].update(methods=["knn"]),
         "figures.cho2015_decision_regions.methods"),
        (lambda c: c["figures"]["williams1998_figure2"].update(type="violin"),
         "figures.williams1998_figure2.type"),
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


def test_unreadable_config_file_is_named(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("seed: [unclosed\n")
    with pytest.raises(ConfigError, match="broken.yaml"):
        load_config(path)


def test_fold_counts_follow_the_protocol():
    assert n_folds({"type": "kfold", "folds": 10}) == 10
    assert n_folds({"type": "random", "partitions": 20, "n_train": 1, "n_test": 1}) == 20
    assert n_folds({"type": "fixed"}) == 1
    assert n_folds({"type": "per_class", "per_cell": 3}) == 1
    assert n_folds({"type": "per_class", "per_cell": 3, "partitions": 20}) == 20


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

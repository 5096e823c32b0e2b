"""Loading and validating the pipeline configuration (schema: workflow/schemas/)."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """A configuration error; the message names the offending key."""


def _key_path(path) -> str:
    parts = []
    for item in path:
        parts.append(f"[{item}]" if isinstance(item, int) else f".{item}")
    return "".join(parts).lstrip(".") or "(top level)"


def validate_config(config: dict, schema_path: Path = SCHEMA_PATH) -> dict:
    """Check ``config`` against the JSON schema and the registries; raise ConfigError naming
    the first offending key."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        path = list(error.absolute_path)
        if error.validator == "required":  # name the missing key itself
            path.append(next(k for k in error.validator_value if k not in error.instance))
        raise ConfigError(f"config key '{_key_path(path)}': {error.message}")
    _check_names(config)
    return config


def _check_names(config: dict) -> None:
    from gpcbench.data.registry import DATASETS
    from gpcbench.experiments.registry import METHODS

    for name, experiment in config["experiments"].items():
        for entry, spec in experiment["datasets"].items():
            for key in ("data", "split_data"):
                data = spec.get(key, spec.get("data", entry))
                if data not in DATASETS:
                    raise ConfigError(f"config key 'experiments.{name}.datasets.{entry}"
                                      f"{'' if key == 'data' else '.' + key}': unknown data set '{data}'")
        for i, method in enumerate(experiment["methods"]):
            if method not in METHODS:
                raise ConfigError(f"config key 'experiments.{name}.methods[{i}]': "
                                  f"unknown method '{method}'")
        for entry, spec in experiment["datasets"].items():
            key = f"experiments.{name}.datasets.{entry}"
            for i, method in enumerate(spec.get("methods", [])):
                if method not in METHODS:
                    raise ConfigError(f"config key '{key}.methods[{i}]': unknown method '{method}'")
            for method in spec.get("options", {}):
                if method not in entry_methods(experiment, entry):
                    raise ConfigError(f"config key '{key}.options.{method}': not a method of "
                                      f"this entry")
    for name, table in config["tables"].items():
        experiment = config["experiments"].get(table["experiment"])
        if experiment is None:
            raise ConfigError(f"config key 'tables.{name}.experiment': "
                              f"unknown experiment '{table['experiment']}'")
        for entry in table["datasets"]:
            if entry not in experiment["datasets"]:
                raise ConfigError(f"config key 'tables.{name}.datasets.{entry}': not a data set "
                                  f"of experiment '{table['experiment']}'")
        run = {m for entry in experiment["datasets"] for m in entry_methods(experiment, entry)}
        for i, method in enumerate(table.get("methods", [])):
            if method not in run:
                raise ConfigError(f"config key 'tables.{name}.methods[{i}]': '{method}' is not "
                                  f"a method of experiment '{table['experiment']}'")
        published = table.get("published", {})
        if table["metric"] == "confusion" and published and not {"mean", "method"} <= set(published):
            raise ConfigError(f"config key 'tables.{name}.published': a confusion table's "
                              "published rates need 'mean' (the rate column) and 'method'")
    for name, figure in config.get("figures", {}).items():
        experiment = config["experiments"].get(figure["experiment"])
        if experiment is None:
            raise ConfigError(f"config key 'figures.{name}.experiment': "
                              f"unknown experiment '{figure['experiment']}'")
        for i, method in enumerate(figure["methods"]):
            if method not in experiment["methods"]:
                raise ConfigError(f"config key 'figures.{name}.methods[{i}]': '{method}' is not "
                                  f"a method of experiment '{figure['experiment']}'")
        if figure["type"] == "decision_regions":
            _check_decision_regions(name, figure)
    prepare = config["data"].get("prepare", [])
    for i, data in enumerate([] if prepare == "all" else prepare):
        if data not in DATASETS:
            raise ConfigError(f"config key 'data.prepare[{i}]': unknown data set '{data}'")


def _check_decision_regions(name: str, figure: dict) -> None:
    """A decision-regions figure refits one softmax Laplace method on one data set."""
    from gpcbench.experiments.report import DECISION_REGION_METHODS

    if len(figure["methods"]) != 1 or figure["methods"][0] not in DECISION_REGION_METHODS:
        raise ConfigError(f"config key 'figures.{name}.methods': a decision_regions figure "
                          f"takes one method of {', '.join(DECISION_REGION_METHODS)}")
    if len(figure.get("datasets", [])) > 1:
        raise ConfigError(f"config key 'figures.{name}.datasets': a decision_regions figure "
                          "shows one data set")


def load_config(path: Path) -> dict:
    try:
        config = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    return validate_config(config)


def entry_protocol(experiment: dict, entry: str) -> dict:
    """The experiment's protocol with the entry's overrides applied."""
    return {**experiment["protocol"], **experiment["datasets"][entry].get("protocol", {})}


def entry_methods(experiment: dict, entry: str) -> list[str]:
    """The entry's methods: its own ``methods`` list, else the experiment's."""
    return experiment["datasets"][entry].get("methods", experiment["methods"])


def method_options(config: dict, experiment: str, entry: str, method: str) -> dict:
    """Options of one fold job: ``methods.<method>`` with the entry's ``options.<method>``
    merged over it."""
    entry_spec = config["experiments"][experiment]["datasets"][entry]
    return {**config.get("methods", {}).get(method, {}),
            **entry_spec.get("options", {}).get(method, {})}


def n_folds(protocol: dict) -> int:
    """Number of fold jobs a protocol yields (known from the config alone)."""
    kind = protocol["type"]
    if kind in ("kfold", "blocks"):
        return int(protocol.get("folds", 10))
    if kind == "random":
        return int(protocol.get("partitions", 20))
    if kind == "per_class":
        return int(protocol.get("partitions", 1))
    return 1

"""Loading and validating the pipeline configuration (JSON schema: the package data file
``gpcbench/schemas/config.schema.yaml``)."""

from __future__ import annotations

import functools
from importlib.resources import files
from pathlib import Path

import jsonschema
import yaml


class ConfigError(ValueError):
    """A configuration error; the message names the offending key."""


def _key_path(path) -> str:
    parts = []
    for item in path:
        parts.append(f"[{item}]" if isinstance(item, int) else f".{item}")
    return "".join(parts).lstrip(".") or "(top level)"


def _check_schema(instance, schema: dict, prefix: tuple = ()) -> None:
    """Raise ConfigError naming the key of the first violation of ``schema``."""
    from gpcbench.data.registry import unknown_name

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        path = [*prefix, *error.absolute_path]
        if error.validator == "required":  # name the missing key itself
            path.append(next(k for k in error.validator_value if k not in error.instance))
        if error.validator == "additionalProperties" and error.validator_value is False:
            known = error.schema.get("properties", {})
            unknown = sorted(set(error.instance) - set(known))
            raise ConfigError(f"config key '{_key_path([*path, unknown[0]])}': "
                              f"{unknown_name('key', unknown[0], known)}")
        raise ConfigError(f"config key '{_key_path(path)}': {error.message}")


#: How a run switch may be written on the command line (YAML's boolean words and 1 / 0).
_SWITCH_WORDS = {"true": True, "yes": True, "on": True, "1": True,
                 "false": False, "no": False, "off": False, "0": False}


def run_switch(config: dict, key: str, default: bool) -> bool:
    """Remove the on/off run switch ``key`` from ``config`` and return it. ``snakemake --config
    partial=true`` passes ``true`` as a string (its own parser knows only ``True``), so the
    words are read as YAML reads them; anything else is a ConfigError naming the key."""
    value = config.pop(key, default)
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word not in _SWITCH_WORDS:
        raise ConfigError(f"config key '{key}': expected true or false, got {value!r}")
    return _SWITCH_WORDS[word]


@functools.cache
def config_schema() -> dict:
    """The JSON schema of a config file (shipped with the package)."""
    return yaml.safe_load(files("gpcbench").joinpath("schemas", "config.schema.yaml").read_text())


def validate_config(config: dict, published_dir: Path | None = None) -> dict:
    """Check ``config`` against the JSON schema, the registries (data sets, methods and each
    method's declared options) and, given ``published_dir``, the published-number files its
    tables name; raise ConfigError naming the first offending key."""
    if not isinstance(config, dict):
        raise ConfigError("config: not a mapping of keys (seed, offline, data, ...)")
    _check_schema(config, config_schema())
    _check_names(config)
    _check_options(config)
    _check_resources(config)
    if published_dir is not None:
        _check_published_files(config, Path(published_dir))
    return config


def _check_options(config: dict) -> None:
    """Every method option set in the config is one its registry entry declares, of its type."""
    from gpcbench.data.registry import unknown_name
    from gpcbench.experiments.options import options_schema
    from gpcbench.experiments.registry import METHODS

    places = [(("methods", method), options) for method, options in config.get("methods", {}).items()]
    for name, experiment in config["experiments"].items():
        for entry, spec in experiment["datasets"].items():
            places += [(("experiments", name, "datasets", entry, "options", method), options)
                       for method, options in spec.get("options", {}).items()]
    for path, options in places:
        method = path[-1]
        if method not in METHODS:
            raise ConfigError(f"config key '{_key_path(path)}': "
                              f"{unknown_name('method', method, METHODS)}")
        _check_schema(options, options_schema(METHODS[method].options), path)


def _check_resources(config: dict) -> None:
    from gpcbench.data.registry import unknown_name
    from gpcbench.experiments.registry import METHODS

    for method in config["jobs"].get("resources", {}):
        if method != "default" and method not in METHODS:
            raise ConfigError(f"config key 'jobs.resources.{method}': "
                              f"{unknown_name('method', method, [*METHODS, 'default'])}")


def _check_published_files(config: dict, published_dir: Path) -> None:
    for name, table in config["tables"].items():
        file = table.get("published", {}).get("file")
        if file and not (published_dir / file).is_file():
            raise ConfigError(f"config key 'tables.{name}.published.file': table '{name}' "
                              f"names {published_dir / file}, which does not exist")
    _check_schema(read_causes(published_dir), causes_schema(), (CAUSES_FILE,))


#: The causes of the cells beyond two standard errors, beside the published numbers.
CAUSES_FILE = "beyond_2se.yaml"


def read_causes(published_dir: Path) -> dict:
    """Table -> its ``beyond_2se`` entries, from ``<published_dir>/beyond_2se.yaml`` (none if
    the file is absent); each entry names a cause, the cells as printed and why."""
    path = Path(published_dir) / CAUSES_FILE
    return (read_config_file(path) or {}) if path.is_file() else {}


@functools.cache
def causes_schema() -> dict:
    """The JSON schema of ``beyond_2se.yaml`` (shipped with the package)."""
    schema = files("gpcbench").joinpath("schemas", "beyond_2se.schema.yaml")
    return yaml.safe_load(schema.read_text())


def check_causes(config: dict, causes: dict) -> None:
    """Every entry of ``causes`` names a table of ``config`` and that table's columns (a
    confusion table's columns are classes, not checked here): the causes are the full
    protocol's, so this holds for config/config.yaml, not for a smaller config sharing
    config/published (smoke.yaml), whose validation checks only their schema."""
    from gpcbench.data.registry import unknown_name

    for name, entries in causes.items():
        table = config["tables"].get(name)
        if table is None:
            raise ConfigError(f"config key '{CAUSES_FILE}.{name}': "
                              f"{unknown_name('table', name, config['tables'])}")
        for i, entry in enumerate([] if table["metric"] == "confusion" else entries):
            for row, columns in entry["cells"].items():
                unknown = [c for c in columns if c not in table["datasets"].values()]
                if unknown:
                    raise ConfigError(f"config key '{CAUSES_FILE}.{name}[{i}].cells.{row}': "
                                      f"'{unknown[0]}' is not a column of the table (one of "
                                      f"{', '.join(table['datasets'].values())})")


def _check_names(config: dict) -> None:
    from gpcbench.data.registry import DATASETS, unknown_name
    from gpcbench.experiments.readings import READINGS
    from gpcbench.experiments.registry import METHODS

    for name, experiment in config["experiments"].items():
        for entry, spec in experiment["datasets"].items():
            for key in ("data", "split_data"):
                data = spec.get(key, spec.get("data", entry))
                if data not in DATASETS:
                    raise ConfigError(f"config key 'experiments.{name}.datasets.{entry}"
                                      f"{'' if key == 'data' else '.' + key}': "
                                      f"{unknown_name('data set', data, DATASETS)}")
        for i, method in enumerate(experiment["methods"]):
            if method not in METHODS:
                raise ConfigError(f"config key 'experiments.{name}.methods[{i}]': "
                                  f"{unknown_name('method', method, METHODS)}")
        used = {method for entry in experiment["datasets"]
                for method in entry_methods(experiment, entry)}
        for i, method in enumerate(experiment.get("raw_input_methods", [])):
            if method not in used:
                raise ConfigError(f"config key 'experiments.{name}.raw_input_methods[{i}]': "
                                  f"'{method}' is not a method of this experiment")
        for entry, spec in experiment["datasets"].items():
            key = f"experiments.{name}.datasets.{entry}"
            for i, method in enumerate(spec.get("methods", [])):
                if method not in METHODS:
                    raise ConfigError(f"config key '{key}.methods[{i}]': "
                                      f"{unknown_name('method', method, METHODS)}")
            for part in ("options", "pending"):
                for method in spec.get(part, {}):
                    if method not in entry_methods(experiment, entry):
                        raise ConfigError(f"config key '{key}.{part}.{method}': not a method "
                                          f"of this entry")
    for name, table in config["tables"].items():
        experiment = config["experiments"].get(table["experiment"])
        if experiment is None:
            raise ConfigError(f"config key 'tables.{name}.experiment': " + unknown_name(
                "experiment", table["experiment"], config["experiments"]))
        for entry in table["datasets"]:
            if entry not in experiment["datasets"]:
                raise ConfigError(f"config key 'tables.{name}.datasets.{entry}': not a data set "
                                  f"of experiment '{table['experiment']}'")
        run = {m for entry in experiment["datasets"] for m in entry_methods(experiment, entry)}
        for i, method in enumerate(table.get("methods", [])):
            if method not in run:
                raise ConfigError(f"config key 'tables.{name}.methods[{i}]': '{method}' is not "
                                  f"a method of experiment '{table['experiment']}'")
        for method in table.get("method_metrics", {}):
            if method not in run:
                raise ConfigError(f"config key 'tables.{name}.method_metrics.{method}': not a "
                                  f"method of experiment '{table['experiment']}'")
        published = table.get("published", {})
        if table["metric"] == "confusion" and published and not {"mean", "method"} <= set(published):
            raise ConfigError(f"config key 'tables.{name}.published': a confusion table's "
                              "published rates need 'mean' (the rate column) and 'method'")
    for name, figure in config.get("figures", {}).items():
        experiment = config["experiments"].get(figure["experiment"])
        if experiment is None:
            raise ConfigError(f"config key 'figures.{name}.experiment': " + unknown_name(
                "experiment", figure["experiment"], config["experiments"]))
        for i, method in enumerate(figure["methods"]):
            if method not in experiment["methods"]:
                raise ConfigError(f"config key 'figures.{name}.methods[{i}]': '{method}' is not "
                                  f"a method of experiment '{figure['experiment']}'")
        if figure["type"] == "decision_regions":
            _check_decision_regions(name, figure)
        if figure["type"] == "timing":
            _check_timing(name, figure, config["tables"])
    for name in config.get("readings", {}):
        if name not in READINGS:
            raise ConfigError(f"config key 'readings.{name}': "
                              f"{unknown_name('reading', name, READINGS)}")
    check = config.get("exact_regression")
    if check and check["data"] not in DATASETS:
        raise ConfigError(f"config key 'exact_regression.data': "
                          f"{unknown_name('data set', check['data'], DATASETS)}")
    prepare = config["data"].get("prepare", [])
    for i, data in enumerate([] if prepare == "all" else prepare):
        if data not in DATASETS:
            raise ConfigError(f"config key 'data.prepare[{i}]': "
                              f"{unknown_name('data set', data, DATASETS)}")


def _check_decision_regions(name: str, figure: dict) -> None:
    """A decision-regions figure refits one softmax Laplace method on one data set."""
    from gpcbench.experiments.registry import decision_region_methods

    methods = decision_region_methods()
    if len(figure["methods"]) != 1 or figure["methods"][0] not in methods:
        raise ConfigError(f"config key 'figures.{name}.methods': a decision_regions figure "
                          f"takes one method of {', '.join(methods)}")
    if len(figure.get("datasets", [])) > 1:
        raise ConfigError(f"config key 'figures.{name}.datasets': a decision_regions figure "
                          "shows one data set")


def _check_timing(name: str, figure: dict, tables: dict) -> None:
    """A timing figure names a table of its experiment and shows some of its data sets."""
    table = tables.get(figure.get("table"))
    if table is None or table["experiment"] != figure["experiment"]:
        raise ConfigError(f"config key 'figures.{name}.table': a timing figure names a table of "
                          f"experiment '{figure['experiment']}' (got {figure.get('table')!r})")
    for i, entry in enumerate(figure.get("datasets", [])):
        if entry not in table["datasets"]:
            raise ConfigError(f"config key 'figures.{name}.datasets[{i}]': '{entry}' is not a "
                              f"data set of table '{figure['table']}'")


def read_config_file(path: Path) -> dict:
    """The YAML mapping in ``path``; a syntax error names the file, line and column."""
    try:
        return yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"config file {path}{where}: invalid YAML ({problem})") from None


def load_config(path: Path, published_dir: Path | None = None) -> dict:
    return validate_config(read_config_file(path), published_dir=published_dir)


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


def entry_standardizes(experiment: dict, entry: str) -> bool:
    """The entry's ``standardize``, else the experiment's (default true)."""
    return experiment["datasets"].get(entry, {}).get("standardize",
                                                     experiment.get("standardize", True))


def standardizes(experiment: dict, entry: str, method: str) -> bool:
    """Whether a method's fold jobs on an entry standardise the inputs on the training rows:
    :func:`entry_standardizes`, except for the experiment's ``raw_input_methods``."""
    return (entry_standardizes(experiment, entry)
            and method not in experiment.get("raw_input_methods", []))


def entry_data(experiment: dict, entry: str) -> str:
    """The processed data set an entry runs on (its own name unless ``data`` says otherwise)."""
    return experiment["datasets"][entry].get("data", entry)


def entry_fold_count(experiment: dict, entry: str) -> int:
    """Fold jobs of one entry (the split protocol's count on the entry's data set)."""
    from gpcbench.data.registry import DATASETS
    from gpcbench.data.splits import fold_count

    spec = DATASETS[entry_data(experiment, entry)]
    return fold_count(entry_protocol(experiment, entry), spec.rows, spec.extra)


def entry_train_size(experiment: dict, entry: str) -> int:
    """Training rows of one fold of the entry (an upper bound where the split draws them)."""
    from gpcbench.data.registry import DATASETS
    from gpcbench.data.splits import train_size

    spec = DATASETS[entry_data(experiment, entry)]
    return train_size(entry_protocol(experiment, entry), spec.rows, spec.extra,
                      len(spec.class_counts or {}))


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

"""pyproject.toml, environment.yml and config/constraints.txt agree on the dependencies."""

import re
import tomllib

import yaml

#: The extras ./run and environment.yml install beside the package's own dependencies.
INSTALLED_EXTRAS = ("pipeline", "test")


def _normalise(requirement: str) -> str:
    name, spec = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", requirement).groups()
    return name.lower().replace("_", "-") + spec.replace(" ", "")


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0).lower().replace("_", "-")


def _project(repo) -> dict:
    return tomllib.loads((repo / "pyproject.toml").read_text())["project"]


def test_environment_yml_is_the_package_with_its_pipeline_and_test_extras(repo):
    project = _project(repo)
    wanted = {_normalise(r) for r in project["dependencies"]}
    wanted |= {_normalise(r) for extra in INSTALLED_EXTRAS
               for r in project["optional-dependencies"][extra]}
    env = yaml.safe_load((repo / "environment.yml").read_text())
    conda = {_normalise(d) for d in env["dependencies"]
             if isinstance(d, str) and not d.startswith(("python", "pip"))}
    assert conda == wanted, f"only in environment.yml: {conda - wanted}; only in pyproject: {wanted - conda}"
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip == [f'-e ".[{",".join(INSTALLED_EXTRAS)}]"']


def test_run_installs_the_pipeline_and_test_extras(repo):
    assert f'-e ".[{",".join(INSTALLED_EXTRAS)}]"' in (repo / "run").read_text()


def test_constraints_pin_every_dependency_and_extra(repo):
    project = _project(repo)
    names = {_name(r) for r in project["dependencies"]}
    names |= {_name(r) for extra in project["optional-dependencies"].values() for r in extra}
    pins = {line.split("==")[0].lower().replace("_", "-")
            for line in (repo / "config" / "constraints.txt").read_text().splitlines() if "==" in line}
    assert names <= pins, f"not pinned in config/constraints.txt: {names - pins}"


def test_the_config_schema_and_data_catalog_are_package_data(repo):
    """An installed (not editable) package finds its YAML files: they are declared."""
    package_data = tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["gpcbench"]
    assert {"schemas/*.yaml", "data/*.yaml"} <= set(package_data)
    assert (repo / "src" / "gpcbench" / "schemas" / "config.schema.yaml").is_file()

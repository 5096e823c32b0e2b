"""pyproject.toml and environment.yml list the same dependencies."""

import re
import tomllib

import yaml


def _normalise(requirement: str) -> str:
    name, spec = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", requirement).groups()
    return name.lower().replace("_", "-") + spec.replace(" ", "")


def test_environment_yml_matches_pyproject(repo):
    pyproject = tomllib.loads((repo / "pyproject.toml").read_text())
    wanted = {_normalise(r) for r in pyproject["project"]["dependencies"]}
    env = yaml.safe_load((repo / "environment.yml").read_text())
    conda = {_normalise(d) for d in env["dependencies"]
             if isinstance(d, str) and not d.startswith(("python", "pip"))}
    assert conda == wanted, f"only in environment.yml: {conda - wanted}; only in pyproject: {wanted - conda}"


def test_constraints_pin_every_dependency(repo):
    pyproject = tomllib.loads((repo / "pyproject.toml").read_text())
    names = {re.match(r"[A-Za-z0-9_.\-]+", r).group(0).lower().replace("_", "-")
             for r in pyproject["project"]["dependencies"]}
    pins = {line.split("==")[0].lower().replace("_", "-")
            for line in (repo / "config" / "constraints.txt").read_text().splitlines() if "==" in line}
    assert names <= pins, f"not pinned in config/constraints.txt: {names - pins}"

"""numba's on-disk cache is named by the compiled code's version, so an edit to a compiled
callee in another module cannot leave a stale compiled caller in use."""

import shutil
from pathlib import Path

import numba

from gpcbench import jit


def _copy_of_package(tmp_path) -> Path:
    package = tmp_path / "gpcbench"
    shutil.copytree(jit.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def test_cache_folder_changes_with_compiled_code_only(tmp_path):
    package = _copy_of_package(tmp_path)
    before = jit.compiled_code_hash(package)
    (package / "cli.py").write_text((package / "cli.py").read_text() + "\n# edited\n")
    assert jit.compiled_code_hash(package) == before  # no compiled code in cli.py
    moves = package / "mcmc" / "moves.py"
    moves.write_text(moves.read_text() + "\n# edited\n")
    assert jit.compiled_code_hash(package) != before


def test_numba_caches_in_the_versioned_folder():
    assert Path(numba.config.CACHE_DIR) == jit.cache_dir()
    assert jit.cache_dir().name == f"numba-{jit.compiled_code_hash()}"

"""Atomic writes leave either the old file or the new one, never a partial one."""

import hashlib
import os
import stat

import pytest

from gpcbench.io import atomic_write_bytes, sha256_file


def test_atomic_write_replaces_and_sets_normal_permissions(tmp_path):
    target = tmp_path / "sub" / "f.bin"
    atomic_write_bytes(target, b"one")
    atomic_write_bytes(target, b"two")
    assert target.read_bytes() == b"two"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in target.parent.iterdir()] == ["f.bin"]


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "f.bin"
    atomic_write_bytes(target, b"old")
    with pytest.raises(TypeError):
        atomic_write_bytes(target, object())  # not bytes: the write fails midway
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]
    assert sha256_file(target) == hashlib.sha256(b"old").hexdigest()

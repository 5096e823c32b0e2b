"""A fresh clone has no Snakemake record of the params a committed reading was made with, so the
pipeline's start removes reading outputs of other code or another seed and measures them again
(gpcbench.workflow.remove_stale_readings)."""

import json

from gpcbench.experiments.readings import READINGS, reading_code_hash
from gpcbench.workflow import remove_stale_readings


def _write(directory, name, **fields):
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"reading": name, "values": {}, **fields}))
    return path


def test_only_readings_of_other_code_or_seed_or_unreadable_are_removed_with_their_tables(
        tmp_path, capsys):
    current, other_code, broken, unlisted = READINGS[0], READINGS[1], "broken", "unlisted"
    readings = {current: {"seed": 0}, other_code: {"seed": 0}}
    kept = _write(tmp_path, current, code_hash=reading_code_hash(current), seed=0)
    stale = _write(tmp_path, other_code, code_hash="0" * 16, seed=0)
    (tmp_path / f"{broken}.json").write_text("{cut sho")
    readings[broken] = {"seed": 0}
    table, other_table = tmp_path / "table.md", tmp_path / "other_table.md"
    table.write_text("quotes the stale reading")
    other_table.write_text("quotes the current one")
    quoting = {other_code: [str(table), str(tmp_path / "table.tex")], current: [str(other_table)]}
    # snakemake -n names what a run would remove and removes nothing
    planned = remove_stale_readings(tmp_path, readings, quoting, dry_run=True)
    assert sorted(planned) == sorted([stale, table, tmp_path / f"{broken}.json"])
    assert stale.is_file() and table.is_file()
    assert capsys.readouterr().err.count("left in place by this dry run") == 2
    removed = remove_stale_readings(tmp_path, readings, quoting)
    assert sorted(removed) == sorted([stale, table, tmp_path / f"{broken}.json"])
    assert other_table.is_file()
    assert kept.is_file() and not stale.exists()
    assert capsys.readouterr().err.count("measuring it again") == 2
    # the same reading with the config's seed changed is stale too; files of readings the
    # config does not run are left alone
    unlisted_path = _write(tmp_path, unlisted, code_hash="0" * 16, seed=0)
    assert remove_stale_readings(tmp_path, {current: {"seed": 1}}, quoting) == [kept, other_table]
    assert unlisted_path.is_file()

"""docs/equations.md, the equation index generated from the code's paper tags (``K&G eq. 18``,
``W&B Appendix B``, ...), is current, and every tag names something its paper has."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "equations.py"
_spec = importlib.util.spec_from_file_location("equations", SCRIPT)
equations = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(equations)


def test_index_is_current():
    assert equations.INDEX.read_text() == equations.render(equations.tags()), (
        "docs/equations.md is stale: run `python docs/equations.py` and commit the result")


def test_every_tag_names_something_its_paper_has():
    unknown = [f"{paper} {kind} {number} in {where}"
               for paper, kind, number, where in equations.unknown(equations.tags())]
    assert not unknown, "tags beyond equations.CONTENTS (wrong number?): " + "; ".join(unknown)


def test_contents_cover_every_paper():
    assert set(equations.CONTENTS) == set(equations.PAPERS)


@pytest.mark.parametrize("text, expected", [
    ("K&G eqs. 27-31", [("K&G", "eq.", n) for n in "27 28 29 30 31".split()]),
    ("Rodrigues eqs. 23, 25 and 28", [("Rodrigues", "eq.", n) for n in ("23", "25", "28")]),
    ("(W&B Appendix B; GPML eq. 5.9)", [("W&B", "Appendix", "B")]),
    ("W&B eq. 12 and CKP eq. 3", [("W&B", "eq.", "12"), ("CKP", "eq.", "3")]),
    ("ZDJ secs. 3.3, 4.2 and 6.2's", [("ZDJ", "sec.", n) for n in ("3.3", "4.2", "6.2")]),
    ("K&G Tables 4, 5 and 7", [("K&G", "Table", n) for n in ("4", "5", "7")]),
    ("K&G's footnote 11", [("K&G", "footnote", "11")]),
    ("ZDJ Appendix A, ZDJ alg. 1", [("ZDJ", "Appendix", "A"), ("ZDJ", "alg.", "1")]),
    ("eq. 13 of the paper, Kim & Ghahramani sec. 3", []),
])
def test_tag_regex(text, expected):
    found = [(m["paper"], equations.KINDS[m["kind"]], number)
             for m in equations.TAG.finditer(text) for number in equations.expand(m["refs"])]
    assert found == expected

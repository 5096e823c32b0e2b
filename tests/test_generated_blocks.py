"""The docs' generated blocks: benchmarks/generated_block.replace_block rewrites exactly the
text between a block's markers, and every block a benchmark writes exists in its document."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from generated_block import replace_block  # noqa: E402


def test_only_the_text_between_the_markers_changes(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("before\n<!-- s.py a: begin -->\nold\n<!-- s.py a: end -->\nafter\n"
                   "<!-- s.py b: begin -->\nkept\n<!-- s.py b: end -->\n")
    replace_block(doc, "s.py", "a", "stamp:", "| new |")
    assert doc.read_text() == ("before\n<!-- s.py a: begin -->\nstamp:\n\n| new |\n"
                               "<!-- s.py a: end -->\nafter\n"
                               "<!-- s.py b: begin -->\nkept\n<!-- s.py b: end -->\n")
    assert not list(tmp_path.glob("*.partial"))


def test_a_document_without_the_block_is_named_and_left_as_it_was(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("no markers\n")
    with pytest.raises(SystemExit, match="doc.md: no generated block between"):
        replace_block(doc, "s.py", "a", "stamp:", "text")
    assert doc.read_text() == "no markers\n"


@pytest.mark.parametrize("path, script, kind", [
    ("docs/performance.md", "estimate_paper_scale.py", "current without adult2"),
    ("docs/performance.md", "estimate_paper_scale.py", "current"),
    ("docs/cluster.md", "fold_memory.py", "memory"),
    ("docs/cluster.md", "fold_memory.py", "times"),
])
def test_the_docs_hold_every_block_the_benchmarks_write(path, script, kind):
    text = (ROOT / path).read_text()
    assert text.count(f"<!-- {script} {kind}: begin -->") == 1
    assert text.count(f"<!-- {script} {kind}: end -->") == 1

"""Replace a generated block of a Markdown file: the text between ``<!-- SCRIPT KIND: begin -->``
and ``<!-- SCRIPT KIND: end -->``, which the benchmark scripts' ``--update-docs FILE`` rewrite."""

import re
from pathlib import Path


def replace_block(path: Path, script: str, kind: str, stamp: str, text: str) -> None:
    """Put ``stamp``, a blank line and ``text`` between the markers of (script, kind) in
    ``path``; exits naming the file and the marker when the file has no such block."""
    begin, end = f"<!-- {script} {kind}: begin -->", f"<!-- {script} {kind}: end -->"
    old = Path(path).read_text()
    pattern = re.compile(f"{re.escape(begin)}.*?{re.escape(end)}", re.S)
    if not pattern.search(old):
        raise SystemExit(f"{path}: no generated block between '{begin}' and '{end}'")
    new = pattern.sub(lambda _: f"{begin}\n{stamp}\n\n{text}\n{end}", old)
    partial = Path(path).with_name(Path(path).name + ".partial")
    partial.write_text(new)
    partial.replace(path)

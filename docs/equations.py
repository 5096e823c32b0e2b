"""Generate docs/equations.md, the equation index: for each paper and equation (or section,
algorithm, appendix), the functions of src/gpcbench that implement it.

It is read from the code's tagged citations, one style for the whole code base:
``<paper> eq. N`` (also ``eqs. N-M``, ``eqs. N, M and K``, ``sec. N.M``, ``alg. N``,
``Appendix B``, ``Table N``, ``Fig. N``, ``footnote N``), where <paper> is one of the keys of
:data:`PAPERS`; tag and reference stand on one line. A tag belongs to the innermost function or
class around it (the module, for module docstrings). ``tests/test_equations.py`` regenerates
the index and fails when the committed one differs, or when a tag names an equation, section,
table, ... that the paper does not have (:data:`CONTENTS`).

Usage: python docs/equations.py            (rewrites docs/equations.md)
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "gpcbench"
INDEX = ROOT / "docs" / "equations.md"

#: tag -> (README key, full reference, seed text in ../shared/seeds)
PAPERS = {
    "K&G": ("kim2006", "Kim & Ghahramani, Bayesian Gaussian Process Classification with the "
            "EM-EP Algorithm, IEEE TPAMI 2006", "000_608fd141a40bf538.txt"),
    "Rodrigues": ("rodrigues2014", "Rodrigues, Gaussian process classification: a "
                  "message-passing viewpoint, 2014", "001_c27752f27602fee5.txt"),
    "W&B": ("williams1998", "Williams & Barber, Bayesian Classification with Gaussian "
            "Processes, IEEE TPAMI 1998", "002_1a8e2d4009f4a63f.txt"),
    "CKP": ("cho2015", "Cho, Kim & Park, New Inference for a Multiclass GPC Model using a "
            "Variational Bayesian EM Algorithm and Laplace Approximation, IEIE SPC 2015",
            "003_e65587d59912019d.txt"),
    "ZDJ": ("zhang2011", "Zhang, Dai & Jordan, Bayesian Generalized Kernel Mixed Models, "
            "JMLR 2011", "004_282271c774a9766d.txt"),
}
#: What each paper has, read once from the seed texts in ../shared/seeds (README there says which
#: file is which): eq., Table, Fig. and footnote give the highest number (the largest "(N)" equation
#: label; for W&B, whose extraction lost the display equations, the largest "equation N" its text
#: refers to, eqs. 24 and 25 of Appendix C; its Fig. 2 is the Pima ARD figure, "Figure 5.1" in the
#: extraction); sec., Appendix and alg. list the headings. tests/test_equations.py fails on a tag
#: beyond these, without needing ../shared.
CONTENTS = {
    "K&G": {"eq.": 57, "Table": 7, "Fig.": 3, "footnote": 18, "Appendix": "A",
            "sec.": "1 2 3 3.1 3.2 3.3 3.4 3.5 3.5.1 3.5.2 4 4.1 4.2 4.3 5"},
    "Rodrigues": {"eq.": 53, "Fig.": 2, "sec.": "1 2 3 4", "Appendix": "A"},
    "W&B": {"eq.": 25, "Table": 3, "Fig.": 2, "footnote": 6, "Appendix": "A B C D E",
            "sec.": "1 2 2.1 2.2 3 3.1 3.2 3.3 4 5 5.1 5.2 6"},
    "CKP": {"eq.": 29, "Table": 2, "Fig.": 2, "sec.": "1 2 3 3.1 3.2 4 5 5.1 5.2 6"},
    "ZDJ": {"eq.": 13, "Table": 13, "Fig.": 4, "alg.": "1", "Appendix": "A B",
            "sec.": "1 2 2.1 2.2 2.3 3 3.1 3.2 3.3 4 4.1 4.2 5 5.1 5.2 5.3 5.4 6 6.1 6.2 7"},
}
#: spelling in the code -> kind in the index (singular)
KINDS = {"eq.": "eq.", "eqs.": "eq.", "sec.": "sec.", "secs.": "sec.", "alg.": "alg.",
         "algs.": "alg.", "Appendix": "Appendix", "Appendices": "Appendix", "Table": "Table",
         "Tables": "Table", "Fig.": "Fig.", "Figs.": "Fig.", "footnote": "footnote",
         "footnotes": "footnote"}
NUMBER = r"(?:\d+(?:\.\d+)*|[A-E])\b"   # 13, 3.5.2, or an appendix letter
TAG = re.compile(
    rf"\b(?P<paper>{'|'.join(map(re.escape, PAPERS))})(?:'s)? "
    rf"(?P<kind>{'|'.join(map(re.escape, sorted(KINDS, key=len, reverse=True)))}) "
    rf"(?P<refs>{NUMBER}(?:(?:-|–|, | and ){NUMBER})*)")


def expand(refs: str) -> list[str]:
    """'27-31' -> 27..31; '23, 25 and 28' -> 23, 25, 28; '4.3' -> 4.3; '3.1-3.3' -> 3.1, 3.3."""
    numbers = []
    for part in re.split(r", | and ", refs):
        low, _, high = part.replace("–", "-").partition("-")
        if high and low.isdigit() and high.isdigit() and int(low) < int(high) <= int(low) + 40:
            numbers += [str(n) for n in range(int(low), int(high) + 1)]
        else:
            numbers += [low] + ([high] if high else [])
    return numbers


def _scopes(tree: ast.Module) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function and class, outermost first."""
    scopes = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                scopes.append((first, child.end_lineno, name))
                walk(child, f"{name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return scopes


def tags() -> list[tuple[str, str, str, str]]:
    """(paper, kind, number, 'module:function') of every tag in the source."""
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        text = path.read_text()
        module = ".".join(path.relative_to(SOURCE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")  # a package is named as it is imported
        scopes = _scopes(ast.parse(text))
        for lineno, line in enumerate(text.splitlines(), start=1):
            for match in TAG.finditer(line):
                inner = [name for first, last, name in scopes if first <= lineno <= last]
                where = f"{module}:{inner[-1]}" if inner else module
                for number in expand(match["refs"]):
                    found.append((match["paper"], KINDS[match["kind"]], number, where))
    return sorted(set(found))


def unknown(found) -> list[tuple[str, str, str, str]]:
    """The tags of :func:`tags` naming an equation, section, ... that their paper lacks."""
    def has(paper, kind, number):
        known = CONTENTS[paper].get(kind)
        if isinstance(known, str):
            return number in known.split()
        return known is not None and number.isdigit() and 1 <= int(number) <= known

    return [tag for tag in found if not has(*tag[:3])]


def _sort_key(item):
    kind, number = item
    order = ["eq.", "sec.", "alg.", "Appendix", "Table", "Fig.", "footnote"]
    return order.index(kind), [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", number)]


def render(found) -> str:
    by_paper: dict[str, dict] = defaultdict(lambda: defaultdict(set))
    for paper, kind, number, where in found:
        by_paper[paper][(kind, number)].add(where)
    lines = ["# Equation index", "",
             "Generated by `python docs/equations.py` from the code's tagged citations "
             "(`<paper> eq. N`); do not edit by hand. `tests/test_equations.py` fails when "
             "this file is stale or a tag names an equation the paper does not have.", ""]
    for paper, (key, reference, _) in PAPERS.items():
        if paper not in by_paper:
            continue
        lines += [f"## {paper}: {reference} (`{key}`)", "", "| cited | implemented in |",
                  "|---|---|"]
        for kind, number in sorted(by_paper[paper], key=_sort_key):
            places = ", ".join(f"`{w}`" for w in sorted(by_paper[paper][(kind, number)]))
            lines.append(f"| {kind} {number} | {places} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    INDEX.write_text(render(tags()))
    print(f"wrote {INDEX}")

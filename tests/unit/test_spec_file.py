"""docs/spec.md is the contract the code, the tests and the docs cite as "SPEC §N": every
citation names a section (or an invariant) the file has, the file numbers its sections §1 to
§19 once each, and its table of contents links to its headings. (That the sdist ships it is
``test_packaging``'s.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import ROOT

SPEC = ROOT / "docs" / "spec.md"
#: Where citations may stand: the package, the tests, the grammar, the docs, the tools.
CITING = ("src", "tests", "grammar", "docs", "benchmarks", "fuzz", "examples")
CITING_FILES = ("README.md", "CHANGELOG.md", "pyproject.toml")
SUFFIXES = (".py", ".md", ".lark", ".toml", ".txt")
SECTIONS = 19

# "§7", "§4.3", "§Invariants 2", "§Inv. 5", "§Inv 1", "§Invariants 1, 2, 3 and 5", "§Invariants 1–3"
_CITE = re.compile(r"§\s?(?:(\d+)(?:\.(\d+))?|Inv(?:ariants|\.)?((?:\s*(?:\d+|[-–,/]|and))*))")
_NUMBER = re.compile(r"\d+")


def _spec() -> str:
    return SPEC.read_text(encoding="utf-8")


def _citing_files() -> list[Path]:
    files = [ROOT / name for name in CITING_FILES if (ROOT / name).is_file()]
    for folder in CITING:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and ".venv" not in path.parts:
                files.append(path)
    return files


def _headings(text: str) -> tuple[list[str], set[str]]:
    """The §N of the ``##`` headings, in order, and the N.M of the ``###`` ones."""
    sections = re.findall(r"^## §(\d+|Invariants)\b", text, re.MULTILINE)
    subsections = set(re.findall(r"^### (\d+\.\d+) ", text, re.MULTILINE))
    return sections, subsections


def _invariants(text: str) -> set[int]:
    part = text.split("\n## §Invariants", 1)[1].split("\n## ", 1)[0]
    return {int(n) for n in re.findall(r"^(\d+)\. \*\*", part, re.MULTILINE)}


def test_the_spec_numbers_its_sections_once_each() -> None:
    sections, _ = _headings(_spec())
    numbered = [s for s in sections if s != "Invariants"]
    assert numbered == [str(n) for n in range(1, SECTIONS + 1)], numbered
    assert sections.count("Invariants") == 1
    assert _invariants(_spec()) == {1, 2, 3, 4, 5}


def test_every_citation_names_a_section_the_spec_has() -> None:
    text = _spec()
    sections, subsections = _headings(text)
    invariants = _invariants(text)
    bad: list[str] = []
    for path in _citing_files():
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in _CITE.finditer(line):
                section, sub, numbers = m.groups()
                if section is None:
                    known = all(int(n) in invariants for n in _NUMBER.findall(numbers or ""))
                else:
                    known = section in sections and (
                        sub is None or f"{section}.{sub}" in subsections
                    )
                if not known:
                    bad.append(f"{path.relative_to(ROOT)}:{lineno}: {m.group(0).strip()}")
    assert not bad, "citations of sections docs/spec.md does not have:\n" + "\n".join(bad)


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to dashes."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def test_the_table_of_contents_links_to_headings() -> None:
    text = _spec()
    anchors = {_slug(h) for h in re.findall(r"^##+ (.+)$", text, re.MULTILINE)}
    links = re.findall(r"^- \[[^\]]+\]\(#([^)]+)\)", text, re.MULTILINE)
    assert links, "no table of contents"
    assert [a for a in links if a not in anchors] == []
    assert len(links) == len(re.findall(r"^## (?!Contents)", text, re.MULTILINE))


def test_links_into_the_spec_name_its_headings() -> None:
    """``spec.md#anchor`` links in the README and the docs point at a heading it has."""
    anchors = {_slug(h) for h in re.findall(r"^##+ (.+)$", _spec(), re.MULTILINE)}
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    links = [
        (path.name, anchor)
        for path in pages
        for anchor in re.findall(r"spec\.md#([\w-]+)", path.read_text(encoding="utf-8"))
    ]
    assert links, "no links into docs/spec.md"
    assert [(name, a) for name, a in links if a not in anchors] == []


@pytest.mark.parametrize(
    "text, cited",
    [
        ("SPEC §7 streaming", [("7", None, None)]),
        ("§4.3 repairs", [("4", "3", None)]),
        ("(§Inv. 5)", [(None, None, " 5")]),
        (
            "SPEC §Invariants 1, 2, 3 and 5 and §8",
            [(None, None, " 1, 2, 3 and 5 and"), ("8", None, None)],
        ),
        ("§Invariants 1–3", [(None, None, " 1–3")]),
    ],
)
def test_the_citation_pattern(text: str, cited: list[tuple[str | None, ...]]) -> None:
    assert [m.groups() for m in _CITE.finditer(text)] == cited

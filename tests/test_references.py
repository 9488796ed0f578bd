"""Every document the source refers to is in this repository: each `<name>.md` a comment, docstring or help
text names exists, and each `§N` after it is a numbered heading of that document."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "harness"
DOCUMENT = re.compile(r"[\w./-]*\w\.md\b")
SECTION = re.compile(r"§(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#+ §(\d+(?:\.\d+)*) ", re.M)
# The first migrations' header comments predate docs/ and say `ledger.md`; their text is checksummed into every
# ledger they created (ledger/migrations/__init__.py refuses a changed file), so they stay as written.
CHECKSUMMED = {"ledger/migrations/postgres/0001_initial.sql", "ledger/migrations/sqlite/0001_initial.sql"}


def _resolve(name: str) -> Path | None:
    """The file a reference names, as a path from the repository root (docs/ledger.md, README.md)."""
    candidate = ROOT / name
    return candidate if candidate.is_file() else None


def _references() -> list[tuple[str, int, str, str | None]]:
    """(file, line, document, section or None) for every reference in the package's text files."""
    found = []
    for path in sorted(SOURCE.rglob("*")):
        if not path.is_file() or path.suffix not in {".py", ".sql", ".toml", ".yaml", ".json"}:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            documents = list(DOCUMENT.finditer(line))
            for document in documents:
                found.append((str(path.relative_to(SOURCE)), number, document[0], None))
            for section in SECTION.finditer(line):
                before = [d[0] for d in documents if d.start() < section.start()]
                found.append((str(path.relative_to(SOURCE)), number, before[-1] if before else "", section[1]))
    return found


def test_every_referenced_document_and_section_exists() -> None:
    headings: dict[Path, set[str]] = {}
    broken = []
    for file, line, document, section in _references():
        if file in CHECKSUMMED:
            continue
        target = _resolve(document) if document else None
        if target is None:
            broken.append(f"{file}:{line}: {document or '(no document)'} {section or ''}".rstrip())
            continue
        if section is not None:
            sections = headings.setdefault(target, set(HEADING.findall(target.read_text(encoding="utf-8"))))
            if section not in sections:
                broken.append(f"{file}:{line}: {document} §{section}")
    assert broken == []


def test_the_checksummed_exceptions_still_name_sections_that_exist() -> None:
    ledger = set(HEADING.findall((ROOT / "docs" / "ledger.md").read_text(encoding="utf-8")))
    cited = {section for file, _, _, section in _references() if file in CHECKSUMMED and section}
    assert cited and cited <= ledger

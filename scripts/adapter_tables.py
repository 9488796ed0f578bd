"""Render the README's adapter mapping tables and event-type list from the adapters' data tables.

tests/adapters/test_adapter_readme.py checks that the README holds exactly this text, so a table change
shows up in the README's diff.

    .venv/bin/python scripts/adapter_tables.py
"""

from __future__ import annotations

from harness.adapters import ADAPTERS, EVENT_TYPES, GENERIC_TYPE
from harness.adapters.table import Table


def _paths(paths: tuple[str, ...]) -> str:
    if len(paths) < 2:
        return f"`{paths[0]}`" if paths else "(none)"
    return "first of " + ", ".join(f"`{path}`" for path in paths)


def _types(table: Table) -> list[str]:
    by_type: dict[str, list[str]] = {}
    for name, kind in table.types.items():
        by_type.setdefault(kind, []).append(name)
    lines = ["| type | vendor events |", "|---|---|"]
    lines += [f"| `{kind}` | {', '.join(f'`{n}`' for n in names)} |" for kind, names in sorted(by_type.items())]
    fallback = ", ".join(f"`{value}` → `{kind}`" for value, kind in table.fallback_types.items())
    rest = f"by `{table.fallback_path}`: {fallback}; " if fallback else ""
    lines.append(f"| (any other) | {rest}else `{table.default_type}` |")
    return lines


def source_table(table: Table) -> str:
    """One source's field mapping and type mapping, as Markdown."""
    lines = [
        f"#### `{table.format}` (source `{table.source}`)",
        "",
        "| event field | from the vendor record |",
        "|---|---|",
        f"| `id` | `{table.format}-` + {_paths((table.id_path, *table.id_alternates))}, else "
        f"`{table.format}-sha256-` + a hash of the record |",
        f"| `timestamp` | {_paths(table.time_paths)}, as RFC 3339 UTC |",
        f"| `actor` | {table.actor_rule} |",
        f"| `source` | {table.derived.get('source', f'`{table.source}`')} |",
        f"| `org` | {_paths(table.org_paths)} |",
        f"| `action` | {_paths((table.action_path, *table.action_alternates))} |",
        "| `type` | `action` in the table below |",
        f"| `target` | {table.derived.get('target', f'{_paths(table.target_paths)}')} |",
    ]
    lines += [f"| `metadata.{key}` | {_paths(paths)} |" for key, paths in table.metadata.items()]
    lines += [
        f"| `{'metadata.' + key if key not in ('type', 'target') else key}` | {how} |"
        for key, how in table.derived.items()
        if key not in ("target", "source")
    ]
    lines += ["| `raw` | the vendor record, verbatim |", "", *_types(table)]
    return "\n".join(lines)


def vocabulary() -> str:
    """The event-type vocabulary, as Markdown."""
    lines = ["| type | meaning |", "|---|---|"]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in EVENT_TYPES.items()]
    assert GENERIC_TYPE in EVENT_TYPES
    return "\n".join(lines)


def render() -> str:
    """The generated part of the README's "Loading your data" section."""
    return "\n\n".join([vocabulary(), *(source_table(fmt.table) for fmt in ADAPTERS.values())]) + "\n"


if __name__ == "__main__":
    print(render(), end="")

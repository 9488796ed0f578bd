"""The watcher path rules of docs/triage.md §11.4, shared by the code-fix gate and repo_file."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.triage.paths import PathError, check_path, path_problem


@pytest.mark.parametrize(
    "path", ["src/trustsight/analysis/build.py", "tests/regressions/test_fp.py", "tests/x", "src/trustsight/a@b+c-d_e.py"]
)
def test_spec_accepted_paths(path: str) -> None:
    assert path_problem(path) == ""
    assert check_path(path) == tuple(path.split("/"))


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("/src/trustsight/x.py", "absolute path"),
        ("tests\\x.py", "path contains a backslash"),
        ("src//trustsight/x.py", "path has an empty component"),
        ("src/trustsight/x.py/", "path has an empty component"),
        ("src/trustsight/../../etc/passwd", "path has a dot component"),
        ("src/trustsight/.git/config", "path has a dot component"),
        (".git/hooks/pre-commit", "path has a dot component"),
        ("tests/-x.py", "path has an invalid component"),
        ("src/other/x.py", "path outside the allowlist"),
        ("Tests/x.py", "path outside the allowlist"),
        ("src/trustsight", "path outside the allowlist"),
    ],
)
def test_spec_rejected_paths(path: str, rule: str) -> None:
    assert path_problem(path) == rule
    with pytest.raises(PathError, match=f"^{rule}$"):
        check_path(path)


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        # First failure in the spec's order wins.
        ("/tests\\x", "absolute path"),
        ("tests\\a//b", "path contains a backslash"),
        ("tests//.x", "path has an empty component"),
        ("tests/.x/a b", "path has a dot component"),
        ("src/other/a b", "path has an invalid component"),
        ("", "path has an empty component"),
        ("tests", "path outside the allowlist"),
        ("tests/.", "path has a dot component"),
        ("tests/..", "path has a dot component"),
        ("tests/src/trustsight", ""),
        ("src/trustsight/x y.py", "path has an invalid component"),
        ("src/trustsight/x:y.py", "path has an invalid component"),
        ("src/trustsight/caf\u00e9.py", "path has an invalid component"),
        ("tests/" + "a" * 255, ""),
        ("tests/" + "a" * 256, "path has an invalid component"),
        ("tests/" + "/".join("a" * 31), ""),
        ("tests/" + "/".join("a" * 32), "path has an invalid component"),
        ("src/TrustSight/x.py", "path outside the allowlist"),
        ("src/trustsightx/y.py", "path outside the allowlist"),
    ],
)
def test_rule_order_and_limits(path: str, rule: str) -> None:
    assert path_problem(path) == rule


@given(st.text(alphabet="ab./\\-_@+ \x00", max_size=40))
def test_an_accepted_path_is_always_a_plain_relative_path_under_an_allowed_root(path: str) -> None:
    if path_problem(path):
        return
    parts = path.split("/")
    assert parts[0] in ("src", "tests") and all(parts) and not any(p.startswith((".", "-")) for p in parts)

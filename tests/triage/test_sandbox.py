"""The code-fix sandbox (docs/triage.md §11.5 steps 4-5, docs/triage.md §11.6) against a real watcher checkout and real git."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from watcher import (
    LONG_NAME,
    RULES_PATH,
    creation_diff,
    edit_diff,
    git,
    head,
    make_watcher,
    rules_line,
    rules_text,
    tree_state,
)

from harness.triage.sandbox import (
    BUDGET_EXHAUSTED,
    NO_GIT,
    NOT_A_REPOSITORY,
    NOT_CONFIGURED,
    FixOutcome,
    Limits,
    SandboxReport,
    find_git,
    run_fixes,
    sandbox_env,
)
from harness.triage.verdict import CodeFix

GIT = find_git(os.environ.get("PATH", os.defpath))
EDIT = CodeFix(RULES_PATH, edit_diff(2, 'RULE_002 = "changed"'))
NEW_TEST = CodeFix("tests/test_new.py", creation_diff("tests/test_new.py", ["def test_new():", "    assert True"]))


@pytest.fixture(scope="module")
def watcher(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_watcher(tmp_path_factory.mktemp("watcher") / "checkout")


@pytest.fixture(autouse=True)
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    sandboxes = tmp_path / "sandboxes"
    sandboxes.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(sandboxes))
    yield sandboxes
    assert list(sandboxes.iterdir()) == [], "the sandbox directory must be removed"


def run(fixes: list[CodeFix], watcher: Path | None, **kwargs: object) -> SandboxReport:
    return run_fixes(fixes, watcher, kwargs.pop("git", GIT), **kwargs)  # type: ignore[arg-type]


def statuses(report: SandboxReport) -> list[tuple[str, str]]:
    return [(fix.status, fix.reason) for fix in report.fixes]


def test_an_edit_is_applied_on_the_checkout_head_and_its_text_returned(watcher: Path) -> None:
    report = run([EDIT], watcher)
    assert report.base_commit == head(watcher)
    assert report.fixes == (FixOutcome(1, RULES_PATH, "applied", "", 1, 1),)
    assert report.files == {RULES_PATH: rules_text().replace(rules_line(2), 'RULE_002 = "changed"\n')}


def test_nothing_is_written_to_the_configured_checkout(watcher: Path) -> None:
    before = tree_state(watcher)
    failing = CodeFix("src/trustsight/tool.sh", "--- a/src/trustsight/tool.sh\n+++ b/src/trustsight/tool.sh\n"
                      "@@ -1 +1 @@\n-#!/bin/sh\n+#!/bin/bash\n")
    report = run([EDIT, NEW_TEST, failing], watcher)
    assert [fix.status for fix in report.fixes] == ["applied", "applied", "rejected"]
    assert tree_state(watcher) == before


def test_uncommitted_changes_of_the_checkout_are_not_used(tmp_path: Path) -> None:
    checkout = make_watcher(tmp_path / "dirty")
    (checkout / RULES_PATH).write_text("uncommitted\n")
    (checkout / "tests/untracked.py").write_text("x = 1\n")
    before = tree_state(checkout)
    report = run([EDIT, CodeFix("tests/untracked.py", creation_diff("tests/untracked.py", ["y = 2"]))], checkout)
    assert statuses(report) == [("applied", ""), ("applied", "")]
    assert report.files["tests/untracked.py"] == "y = 2\n"
    assert tree_state(checkout) == before


def test_fixes_apply_cumulatively_and_a_failure_resets_to_the_previous_fix(watcher: Path) -> None:
    executable = CodeFix(
        "src/trustsight/tool.sh",
        "--- a/src/trustsight/tool.sh\n+++ b/src/trustsight/tool.sh\n@@ -1 +1 @@\n-#!/bin/sh\n+#!/bin/bash\n",
    )
    later = CodeFix("tests/test_later.py", creation_diff("tests/test_later.py", ["x = 1"]))
    report = run([EDIT, executable, NEW_TEST, later], watcher)
    assert statuses(report) == [
        ("applied", ""),
        ("rejected", "post-check failed: the fixed file is executable"),
        ("applied", ""),
        ("applied", ""),
    ]
    # The reset is what lets the next fixes pass the "exactly one changed path" post-check.
    assert set(report.files) == {RULES_PATH, "tests/test_new.py", "tests/test_later.py"}


def test_a_fix_that_changes_nothing_is_rejected(watcher: Path) -> None:
    same = rules_line(2)
    noop = CodeFix(
        RULES_PATH,
        f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -1,3 +1,3 @@\n {rules_line(1)}-{same}+{same} {rules_line(3)}",
    )
    assert statuses(run([noop], watcher)) == [("rejected", "post-check failed: the fix changed nothing")]


@pytest.mark.parametrize(
    ("fix", "reason"),
    [
        (CodeFix("src/trustsight/missing.py", edit_diff(1, "x", path="src/trustsight/missing.py")),
         "file does not exist at the watcher base commit"),
        (CodeFix("src/trustsight/nodir/x.py", edit_diff(1, "x", path="src/trustsight/nodir/x.py")),
         "file does not exist at the watcher base commit"),
        (CodeFix("src/trustsight/link.py", edit_diff(2, "x", path="src/trustsight/link.py")),
         "target is a symlink or not a regular file"),
        (CodeFix("src/trustsight/ld/x.py", edit_diff(1, "x", path="src/trustsight/ld/x.py")),
         "target is a symlink or not a regular file"),
        (CodeFix("src/trustsight/pkg", edit_diff(1, "x", path="src/trustsight/pkg")),
         "target is a symlink or not a regular file"),
        (CodeFix("tests/fixtures/latin1.txt", edit_diff(1, "x", path="tests/fixtures/latin1.txt")),
         "target is not UTF-8 text"),
        (CodeFix(RULES_PATH, creation_diff(RULES_PATH, ["x"])), "file already exists at the watcher base commit"),
        (CodeFix("src/trustsight/link.py", creation_diff("src/trustsight/link.py", ["x"])),
         "file already exists at the watcher base commit"),
        (CodeFix("src/trustsight/ld/new.py", creation_diff("src/trustsight/ld/new.py", ["x"])),
         "a parent directory is a symlink or not a directory"),
        (CodeFix("src/trustsight/rules.py/new.py", creation_diff("src/trustsight/rules.py/new.py", ["x"])),
         "a parent directory is a symlink or not a directory"),
    ],
)
def test_target_rules_in_the_sandbox_tree(watcher: Path, fix: CodeFix, reason: str) -> None:
    report = run([fix], watcher)
    assert statuses(report) == [("rejected", reason)]
    assert report.base_commit == head(watcher)
    assert report.files == {}


def test_a_creation_may_create_directories(watcher: Path) -> None:
    fix = CodeFix("tests/deep/er/test_x.py", creation_diff("tests/deep/er/test_x.py", ["x = 1"]))
    assert run([fix], watcher).files == {"tests/deep/er/test_x.py": "x = 1\n"}


def test_git_failures_name_git_and_never_the_temp_path(watcher: Path, private_tmp: Path) -> None:
    stale = CodeFix(RULES_PATH, f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -2 +2 @@\n-not the line\n+x\n")
    (outcome,) = run([stale], watcher).fixes
    assert outcome.status == "rejected"
    assert outcome.reason == f"git apply --check failed: error: patch failed: {RULES_PATH}:2"
    assert str(private_tmp) not in outcome.reason


def test_git_output_is_capped(watcher: Path) -> None:
    stale = CodeFix(RULES_PATH, f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -2 +2 @@\n-not the line\n+x\n")
    (outcome,) = run([stale], watcher, limits=Limits(output_cap=12)).fixes
    assert outcome.reason == "git apply --check failed: error: patch"


def test_git_detail_is_cut_at_200_characters(watcher: Path) -> None:
    stale = CodeFix(LONG_NAME, f"--- a/{LONG_NAME}\n+++ b/{LONG_NAME}\n@@ -1 +1 @@\n-not the line\n+x\n")
    (outcome,) = run([stale], watcher).fixes
    detail = f"error: patch failed: {LONG_NAME}:1"[:200]
    assert outcome.reason == f"git apply --check failed: {detail}"


def test_rejections_from_the_text_gate_keep_their_reason_and_skip_git(watcher: Path) -> None:
    fixes = [CodeFix("../etc/passwd", EDIT.diff), CodeFix(RULES_PATH, "new mode 100755\n" + EDIT.diff)]
    report = run(fixes, watcher)
    assert statuses(report) == [
        ("rejected", "path has a dot component"),
        ("rejected", 'diff header "new mode" is not allowed'),
    ]
    assert report.base_commit is None


@pytest.mark.parametrize(
    ("where", "git", "reason"),
    [
        (None, GIT, NOT_CONFIGURED),
        ("plain", GIT, NOT_A_REPOSITORY),
        ("missing", GIT, NOT_A_REPOSITORY),
        ("file", GIT, NOT_A_REPOSITORY),
        ("repo", None, NO_GIT),
        ("repo", "/nonexistent/git", NO_GIT),
        ("empty", GIT, "watcher checkout has no commit at HEAD"),
    ],
)
def test_an_unusable_sandbox_rejects_every_fix(
    tmp_path: Path, watcher: Path, where: str | None, git: str | None, reason: str
) -> None:
    checkout: Path | None = {"repo": watcher, None: None}.get(where, tmp_path / str(where))
    if where == "plain":
        (tmp_path / "plain").mkdir()
    elif where == "file":
        (tmp_path / "file").write_text("x")
    elif where == "empty":
        (tmp_path / "empty").mkdir()
        os.system(f"git init -q --template= {tmp_path / 'empty'}")  # noqa: S605 - fixed test command
    report = run([CodeFix("/abs", "x"), EDIT, NEW_TEST], checkout, git=git)
    assert statuses(report) == [("rejected", "absolute path"), ("rejected", reason), ("rejected", reason)]
    assert report.base_commit is None and report.files == {}


class SteppingClock:
    """A monotonic clock that advances `step` seconds per reading."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_the_time_budget_rejects_the_remaining_fixes(watcher: Path) -> None:
    # One reading sets the deadline, each git call takes one (4 for the setup, 5 per applied fix) and each
    # fix starts with one: at 1 s per reading, an 11 s budget runs out exactly when the second fix starts.
    report = run([EDIT, NEW_TEST, CodeFix("/abs", "x")], watcher, clock=SteppingClock(1.0), limits=Limits(total_s=11))
    assert statuses(report) == [("applied", ""), ("rejected", BUDGET_EXHAUSTED), ("rejected", "absolute path")]
    assert report.base_commit == head(watcher)


def test_an_exhausted_budget_before_the_clone_rejects_everything(watcher: Path) -> None:
    report = run([EDIT], watcher, limits=Limits(total_s=0))
    assert statuses(report) == [("rejected", BUDGET_EXHAUSTED)]
    assert report.base_commit is None


def test_the_environment_is_replaced_not_inherited(watcher: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert GIT is not None
    env = sandbox_env(GIT, Path("/h"))
    assert set(env) == {
        "PATH", "HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_TERMINAL_PROMPT", "GIT_ATTR_NOSYSTEM",
        "GIT_NO_REPLACE_OBJECTS", "LC_ALL", "TZ",
    }  # fmt: skip
    assert env["PATH"].split(os.pathsep)[0] == os.path.dirname(GIT)
    assert (env["HOME"], env["GIT_CONFIG_GLOBAL"], env["LC_ALL"], env["TZ"]) == ("/h", "/dev/null", "C", "UTC")
    # Variables that would redirect or break git if they leaked into the sandbox.
    monkeypatch.setenv("GIT_DIR", "/nonexistent")
    monkeypatch.setenv("GIT_WORK_TREE", "/nonexistent")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.hooksPath'='/nonexistent'")
    assert statuses(run([EDIT], watcher)) == [("applied", "")]


def test_same_fixes_same_checkout_give_identical_reports(watcher: Path) -> None:
    fixes = [EDIT, CodeFix("../x", "y"), NEW_TEST]
    assert run(fixes, watcher) == run(fixes, watcher)


def test_patch_files_are_private(watcher: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.triage.sandbox as sandbox

    modes: list[int] = []
    write_patch = sandbox._write_patch

    def spy(directory: Path, index: int, diff: str) -> Path:
        patch = write_patch(directory, index, diff)
        modes.extend([stat.S_IMODE(patch.stat().st_mode), stat.S_IMODE(directory.parent.stat().st_mode)])
        return patch

    monkeypatch.setattr(sandbox, "_write_patch", spy)
    run([EDIT], watcher)
    assert modes == [0o600, 0o700]


def _zero_context(after: int, text: str) -> CodeFix:
    return CodeFix(RULES_PATH, f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -{after},0 +{after + 1} @@\n+{text}\n")


def test_a_zero_context_hunk_that_git_moves_is_rejected_and_the_tree_reset(watcher: Path) -> None:
    # git apply places a hunk with no context at the end of the file, whatever its header says.
    report = run([_zero_context(5, "INJECT = 1"), EDIT], watcher)
    assert statuses(report) == [
        ("rejected", "post-check failed: git applied the hunks other than where their headers place them"),
        ("applied", ""),
    ]
    assert report.files == {RULES_PATH: rules_text().replace(rules_line(2), 'RULE_002 = "changed"\n')}


def test_a_zero_context_hunk_where_git_puts_it_is_applied(watcher: Path) -> None:
    report = run([_zero_context(48, "APPENDED = 1")], watcher)
    assert statuses(report) == [("applied", "")]
    assert report.files == {RULES_PATH: rules_text() + "APPENDED = 1\n"}


def test_a_hunk_git_applies_at_an_offset_is_rejected(watcher: Path) -> None:
    # The header claims lines 20 to 22; the context is lines 1 to 3, which git finds and uses.
    shifted = CodeFix(RULES_PATH, edit_diff(2, "SHIFTED = 1").replace("@@ -1,5 +1,5 @@", "@@ -20,5 +20,5 @@"))
    assert shifted.diff != edit_diff(2, "SHIFTED = 1")
    assert statuses(run([shifted], watcher)) == [
        ("rejected", "post-check failed: hunk 1 does not match the file at line 20")
    ]


def test_context_and_removed_lines_carry_the_files_own_utf8_and_crlf(tmp_path: Path) -> None:
    checkout = tmp_path / "utf8"
    checkout.mkdir()
    git(checkout, "init", "--quiet", "--template=", "--initial-branch=main")
    (checkout / "src/trustsight").mkdir(parents=True)
    (checkout / "src/trustsight/names.txt").write_bytes("caf\u00e9\r\ncr\u00e8me\r\nna\u00efve\r\n".encode())
    git(checkout, "add", "--all")
    git(checkout, "commit", "--quiet", "-m", "utf-8 and crlf")
    diff = (
        "--- a/src/trustsight/names.txt\n+++ b/src/trustsight/names.txt\n@@ -1,3 +1,3 @@\n"
        " caf\u00e9\r\n-cr\u00e8me\r\n+creme\r\n na\u00efve\r\n"
    )
    refused = CodeFix("src/trustsight/names.txt", diff.replace("+creme\r\n", "+cr\u00e8me brul\u00e9e\n"))
    report = run([refused, CodeFix("src/trustsight/names.txt", diff.replace("+creme\r\n", "+creme\n"))], checkout)
    assert statuses(report) == [
        ("rejected", "format gate: diff line 6: character U+00E8 at index 3 is not allowed"),
        ("applied", ""),
    ]
    assert report.files == {"src/trustsight/names.txt": "caf\u00e9\r\ncreme\nna\u00efve\r\n"}

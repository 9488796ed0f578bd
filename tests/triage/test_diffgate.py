"""The text half of the code-fix gate (docs/triage.md §11.5 steps 1 to 3) and its diff vectors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from watcher import RULES_PATH, creation_diff, edit_diff, rules_line

from harness.triage.diffgate import MAX_DIFF_BYTES, DiffRejected, place, screen

EDIT = edit_diff(2, 'RULE_002 = "changed"')


def rejection(path: str, diff: str) -> str:
    with pytest.raises(DiffRejected) as caught:
        screen(path, diff)
    return str(caught.value)


def test_a_plain_edit_hunk_passes() -> None:
    screened = screen(RULES_PATH, EDIT)
    assert (screened.creation, screened.added, screened.removed) == (False, 1, 1)


def test_a_dev_null_creation_under_tests_passes() -> None:
    screened = screen("tests/regressions/test_fp.py", creation_diff("tests/regressions/test_fp.py", ["a", "b"]))
    assert (screened.creation, screened.added, screened.removed) == (True, 2, 0)


def test_git_style_headers_with_index_and_timestamps_pass() -> None:
    diff = (
        f"diff --git a/{RULES_PATH} b/{RULES_PATH}\n"
        "index 1234567..89abcde 100644\n"
        f"--- a/{RULES_PATH}\t2026-01-01 00:00:00\n"
        f"+++ b/{RULES_PATH}\t2026-01-02 00:00:00\n"
        "@@ -1,2 +1,3 @@ def rules():\n"
        f" {rules_line(1)}"
        f"-{rules_line(2)}"
        "+two\n"
        "+three\n"
        "@@ -10 +11 @@\n"
        f"-{rules_line(10)}"
        "+ten\n"
        "\\ No newline at end of file\n"
    )
    screened = screen(RULES_PATH, diff)
    assert (screened.added, screened.removed) == (3, 2)


def test_a_diff_without_its_final_newline_passes() -> None:
    assert screen(RULES_PATH, EDIT[:-1]).added == 1


def test_tabs_in_added_lines_pass() -> None:
    assert screen(RULES_PATH, edit_diff(2, "\tindented")).added == 1


@pytest.mark.parametrize(
    "header",
    [
        "GIT binary patch",
        "Binary files",
        "old mode",
        "new mode",
        "new file mode",
        "deleted file mode",
        "similarity index",
        "dissimilarity index",
        "rename from",
        "rename to",
        "copy from",
        "copy to",
    ],
)
def test_each_refused_header_is_named(header: str) -> None:
    line = {
        "GIT binary patch": "GIT binary patch",
        "Binary files": f"Binary files a/{RULES_PATH} and b/{RULES_PATH} differ",
        "similarity index": "similarity index 90%",
        "dissimilarity index": "dissimilarity index 10%",
    }.get(header, f"{header} {RULES_PATH}" if "from" in header or "to" in header else f"{header} 100644")
    diff = f"diff --git a/{RULES_PATH} b/{RULES_PATH}\n{line}\n" + EDIT
    assert rejection(RULES_PATH, diff) == f'diff header "{header}" is not allowed'


@pytest.mark.parametrize("mode", ["120000", "160000", "100755"])
def test_refused_index_modes(mode: str) -> None:
    diff = f"index 1234567..89abcde {mode}\n" + EDIT
    assert rejection(RULES_PATH, diff) == f'diff header "index mode {mode}" is not allowed'


def test_deletion_is_refused() -> None:
    diff = f"--- a/{RULES_PATH}\n+++ /dev/null\n@@ -1 +0,0 @@\n-{rules_line(1)}"
    assert rejection(RULES_PATH, diff) == 'diff header "+++ /dev/null" is not allowed'


def test_a_second_file_section_is_refused() -> None:
    assert rejection(RULES_PATH, EDIT + EDIT) == "diff has more than one file section"
    git_second = EDIT + f"diff --git a/{RULES_PATH} b/{RULES_PATH}\n" + EDIT
    assert rejection(RULES_PATH, git_second) == "diff has more than one file section"


@pytest.mark.parametrize(
    "diff",
    [
        edit_diff(2, "x", path="src/trustsight/other.py"),
        f"diff --git a/src/trustsight/other.py b/{RULES_PATH}\n" + EDIT,
        f"diff --git a/{RULES_PATH} b/src/trustsight/other.py\n" + EDIT,
        f"--- a/{RULES_PATH}\n+++ b/src/trustsight/other.py\n@@ -1 +1 @@\n-a\n+b\n",
    ],
)
def test_headers_naming_another_path_are_refused(diff: str) -> None:
    assert rejection(RULES_PATH, diff) == f"diff names src/trustsight/other.py, expected {RULES_PATH}"


def test_a_long_foreign_name_is_shortened_in_the_reason() -> None:
    other = "src/trustsight/" + "a" * 400
    reason = rejection(RULES_PATH, edit_diff(1, "x", path=other))
    assert reason == f"diff names {other[:200]}..., expected {RULES_PATH}"


def test_a_hunk_announcing_three_lines_with_two_present_is_refused() -> None:
    diff = f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -1,3 +1,3 @@\n {rules_line(1)}-{rules_line(2)}"
    assert rejection(RULES_PATH, diff) == "hunk 1 does not have the lines its @@ header counts"


def test_a_hunk_with_more_lines_than_counted_is_refused() -> None:
    diff = EDIT + "+extra\n"
    assert rejection(RULES_PATH, diff) == "hunk 1 has more lines than its @@ header counts"


def test_a_cr_in_a_header_or_an_added_line_is_refused() -> None:
    assert rejection(RULES_PATH, EDIT.replace("\n", "\r\n", 1)) == "diff line 1 contains CR"
    assert rejection(RULES_PATH, edit_diff(2, "new\r")) == "diff line 6 contains CR"


def test_context_and_removed_lines_may_carry_utf8_and_cr_as_the_file_does() -> None:
    diff = (
        f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -1,3 +1,3 @@ caf\u00e9 heading\n"
        " caf\u00e9 cr\u00e8me\r\n-\u2014 old \u2603\r\n+plain ascii\n \x1b[31m\n"
    )
    screened = screen(RULES_PATH, diff)
    assert (screened.added, screened.removed) == (1, 1)
    assert screened.hunks[0].old_lines == ("caf\u00e9 cr\u00e8me\r\n", "\u2014 old \u2603\r\n", "\x1b[31m\n")
    assert screened.hunks[0].new_lines == ("caf\u00e9 cr\u00e8me\r\n", "plain ascii\n", "\x1b[31m\n")


def test_a_262145_byte_diff_is_refused_and_262144_is_not_refused_for_size() -> None:
    filler = "+" + "x" * 99 + "\n"
    body = EDIT + filler * ((MAX_DIFF_BYTES - len(EDIT)) // len(filler))
    exact = body + "+" + "y" * (MAX_DIFF_BYTES - len(body) - 2) + "\n"
    assert len(exact.encode()) == MAX_DIFF_BYTES
    assert "larger" not in rejection(RULES_PATH, exact)
    assert rejection(RULES_PATH, exact + "\n") == "diff is larger than 262,144 bytes"


def test_path_rules_come_first() -> None:
    assert rejection("../etc/passwd", EDIT) == "path has a dot component"
    assert rejection("src/trustsight/.env", "\r") == "path has a dot component"


def test_characters_outside_the_diff_mode_are_refused() -> None:
    assert rejection(RULES_PATH, edit_diff(2, "caf\u00e9")) == (
        "format gate: diff line 6: character U+00E9 at index 4 is not allowed"
    )
    assert rejection(RULES_PATH, edit_diff(2, "a\x1bb")).startswith("format gate: diff line 6: character U+001B")
    assert rejection(RULES_PATH, f"--- a/{RULES_PATH}\u00e9\n").startswith("format gate: diff line 1: character U+00E9")
    assert rejection(RULES_PATH, edit_diff(2, "\ud800")) == "diff is not UTF-8"


def test_prose_rule_does_not_apply_to_diffs() -> None:
    assert screen(RULES_PATH, edit_diff(2, "old -- text")).added == 1


@pytest.mark.parametrize(
    ("diff", "reason"),
    [
        ("+++ b/x\n", "diff line 1: expected a --- a/<path> or --- /dev/null header"),
        (f"--- a/{RULES_PATH}\n", "diff line 2: expected a +++ b/<path> header"),
        (f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n", "diff line 3: expected a @@ hunk header"),
        (f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -1 +1 @@\n-a\n+b\ntrailing\n", "diff line 6: expected a @@ hunk header"),
        (f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -1 +1 @@\n-a\n\n+b\n", "hunk 1 does not have the lines its @@ header counts"),
        (f"--- {RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -1 +1 @@\n-a\n+b\n", "diff line 1: expected a --- a/<path> or --- /dev/null header"),
        ("diff --git a/x\n" + EDIT, "diff line 1: malformed diff --git header"),
        ("index 12..34\n" + EDIT, "diff line 1: malformed index header"),
        ("index 1234567..89abcde 100664\n" + EDIT, "diff line 1: index mode 100664 is not 100644"),
        (EDIT + "\\ No newline at end of file\n\\ No newline at end of file\n", "diff line 11: expected a @@ hunk header"),
        (f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -1 +1 @@\n\\ No newline at end of file\n-a\n+b\n", "hunk 1 does not have the lines its @@ header counts"),
        (f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -1,x +1 @@\n-a\n+b\n", "diff line 3: expected a @@ hunk header"),
    ],
)
def test_grammar_violations(diff: str, reason: str) -> None:
    assert rejection(RULES_PATH, diff) == reason


def test_hunk_and_line_limits() -> None:
    hunk = "@@ -1 +1 @@\n-a\n+b\n"
    head = f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n"
    assert screen(RULES_PATH, head + hunk * 200).added == 200
    assert rejection(RULES_PATH, head + hunk * 201) == "diff has more than 200 hunks"
    many = head + "@@ -1,9998 +1,9998 @@\n" + " x\n" * 9998
    assert len(many.split("\n")) - 1 == 10_001
    assert rejection(RULES_PATH, many) == "diff has more than 10,000 lines"
    assert screen(RULES_PATH, head + "@@ -1,9997 +1,9997 @@\n" + " x\n" * 9997).added == 0


@given(st.text(alphabet=" +-@\\abc/\n\t,0123456789", max_size=200))
def test_screen_only_ever_rejects_with_a_reason(diff: str) -> None:
    try:
        screened = screen(RULES_PATH, diff or "x")
    except DiffRejected as exc:
        assert str(exc)
    else:
        assert screened.added + screened.removed >= 0


ORIGINAL = "".join(f"L{n}\n" for n in range(1, 11))


def placed(diff_body: str, original: str = ORIGINAL) -> str:
    return place(original, screen(RULES_PATH, f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n{diff_body}"))


def test_place_puts_each_hunk_where_its_header_says() -> None:
    assert placed("@@ -5,0 +6 @@\n+INJECT = 1\n") == ORIGINAL.replace("L5\n", "L5\nINJECT = 1\n")
    assert placed("@@ -0,0 +1 @@\n+top\n") == "top\n" + ORIGINAL
    assert placed("@@ -2 +1,0 @@\n-L2\n@@ -9,2 +8,2 @@\n L9\n-L10\n+ten\n\\ No newline at end of file\n") == (
        ORIGINAL.replace("L2\n", "").replace("L10\n", "ten")
    )
    assert placed("@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n", "a") == "b\n"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("@@ -6 +6 @@\n-L5\n+five\n", "hunk 1 does not match the file at line 6"),
        ("@@ -11 +11 @@\n-L11\n+x\n", "hunk 1 (-11) lies outside the file or before the previous hunk"),
        (
            "@@ -5 +5 @@\n-L5\n+x\n@@ -2 +2 @@\n-L2\n+y\n",
            "hunk 2 (-2) lies outside the file or before the previous hunk",
        ),
        ("@@ -5,0 +9 @@\n+x\n", "hunk 1 says +9, but -5 puts it elsewhere"),
        ("@@ -10 +10 @@\n-L10\n\\ No newline at end of file\n+x\n", "hunk 1 does not match the file at line 10"),
    ],
)
def test_place_refuses_hunks_that_do_not_fit_where_they_say(body: str, reason: str) -> None:
    with pytest.raises(DiffRejected) as caught:
        placed(body)
    assert str(caught.value) == reason

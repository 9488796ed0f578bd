"""The PKGBUILD prologue scanner and word expansion (docs/triage.md §6)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.aur.pkgbuild import PkgbuildError, Prologue, scan_prologue


def urls(text: str) -> list[str]:
    return list(scan_prologue(text).source_urls)


def sources(text: str) -> list[str]:
    return list(scan_prologue(text).sources)


def scalars(text: str) -> dict[str, str]:
    return dict(scan_prologue(text).scalars)


@pytest.mark.parametrize(
    ("text", "declared"),
    [
        (
            'pkgver=1.0.1\n_dl="https://downloads.example.org/tiny"\n'
            "source=(\"tiny-$pkgver.tar.gz::$_dl/v${pkgver}/tiny.tar.gz\"\n  'LICENSE')",
            ["https://downloads.example.org/tiny/v1.0.1/tiny.tar.gz"],
        ),
        (
            'source_x86_64=("https://d.example.org/t-x86_64.bin")\nsource_aarch64+=(https://d.example.org/t-aarch64.bin)',
            ["https://d.example.org/t-x86_64.bin", "https://d.example.org/t-aarch64.bin"],
        ),
        ('_v=$(cat VERSION)\nsource=("https://d.example.org/$_v.tar.gz")', []),
        ("source=(https://d.example.org/{a,b}.tar.gz)", []),
        ('pkgver=1\nbuild() {\nsource=("https://late.example.org/x")\n}', []),
        ("source=( # a ) in a comment\n  'https://d.example.org/a.tar.gz' )", ["https://d.example.org/a.tar.gz"]),
        (
            'source=("https://d.example.org/a.tgz")\nsource=("https://d.example.org/c.tgz")\nsource+=("https://d.example.org/d.tgz")',
            ["https://d.example.org/c.tgz", "https://d.example.org/d.tgz"],
        ),
        ("source=('https://d.example.org/$pkgver.tar.gz')", ["https://d.example.org/$pkgver.tar.gz"]),
        ('pkgver=1.0\npkgver=$(date)\nsource=("https://d.example.org/$pkgver.tgz")', []),
        ('_u=https://d.example.org\n_u+=/sub\nsource=("$_u/x.tgz" "$CARCH.tgz")', ["https://d.example.org/sub/x.tgz"]),
        ('cat <<EOF\nsource=("https://h.example.org/x")\nEOF\nsource=("https://after.example.org/x")', []),
        ('source=("git+https://example.org/tiny.git#tag=v1")', ["https://example.org/tiny.git"]),
    ],
)
def test_spec_extraction_vectors(text: str, declared: list[str]) -> None:
    assert urls(text) == declared


TINY_DEMO = """pkgname=tiny-demo-bin
pkgver=1.0.1
pkgrel=1
arch=('x86_64')
_dl=https://downloads.example.org/tiny
source=("tiny-$pkgver.tar.gz::$_dl/v$pkgver/tiny.tar.gz")
install=tiny-demo.install
package() { install -Dm755 tiny "$pkgdir/usr/bin/tiny"; }
"""

TINY_FETCH = """pkgname=tiny-fetch
pkgver=2.0.1
pkgrel=1
_dl=https://downloads.example.org/fetch
source=("data-$pkgver.zip::$_dl/data-$pkgver.zip")
build() { curl -fsSL "$_dl/data-$pkgver.zip" -o data.zip; }
package() { install -Dm644 data.zip "$pkgdir/usr/share/tiny/data.zip"; }
"""


def test_tiny_demo_fixture() -> None:
    prologue = scan_prologue(TINY_DEMO.encode("utf-8"))
    assert prologue.install == "tiny-demo.install"
    assert prologue.source_urls == ("https://downloads.example.org/tiny/v1.0.1/tiny.tar.gz",)
    assert prologue.scalars == {
        "pkgname": "tiny-demo-bin",
        "pkgver": "1.0.1",
        "pkgrel": "1",
        "_dl": "https://downloads.example.org/tiny",
        "install": "tiny-demo.install",
    }


def test_tiny_fetch_fixture_and_its_undeclared_variant() -> None:
    assert urls(TINY_FETCH) == ["https://downloads.example.org/fetch/data-2.0.1.zip"]
    undeclared = TINY_FETCH.replace(
        "-o data.zip; }", "-o data.zip; curl -fsSL https://cdn.example.net/fetch/extra-$pkgver.zip -o x.zip; }"
    )
    assert undeclared != TINY_FETCH
    assert urls(undeclared) == ["https://downloads.example.org/fetch/data-2.0.1.zip"]
    assert scan_prologue(TINY_FETCH).install is None


def test_crlf_and_lone_cr_are_line_endings() -> None:
    assert scan_prologue(TINY_DEMO.replace("\n", "\r\n").encode()).install == "tiny-demo.install"
    assert scalars("a=1\rb=2\r") == {"a": "1", "b": "2"}


def test_not_utf8() -> None:
    with pytest.raises(PkgbuildError, match="not UTF-8"):
        scan_prologue(b"pkgver=1\n# caf\xe9\n")


# Rule 1: statements, blank lines, `;`, comments, and the function start that ends the scan.


def test_blank_lines_semicolons_and_comments_are_skipped() -> None:
    assert scalars("\n\n ; ;\n# a=0 'unterminated\n  # x\na=1\n\t\n") == {"a": "1"}


@pytest.mark.parametrize(
    "start",
    [
        "build() {",
        "build () {",
        "build( ) {",
        "  prepare\t(\t) {",
        "package_tiny-demo.bin:x() {",
        "function build {",
        "function\tbuild {",
        "_f()",
        "pkgver() {",
    ],
)
def test_function_start_ends_the_scan(start: str) -> None:
    assert scalars(f"a=1\n{start}\nb=2\n}}\nc=3\n") == {"a": "1"}


@pytest.mark.parametrize("line", ["functions=(a)", "function_x=1", "functionx", "(cd x)", "f (x)"])
def test_lines_that_only_look_like_functions_do_not_end_the_scan(line: str) -> None:
    assert scalars(f"{line}\nafter=1\n")["after"] == "1"


@pytest.mark.parametrize(
    "line", ["pkgver=1; build() {", "echo a && package() {", "true || function x {", "a=(x); b() {"]
)
def test_a_function_after_a_separator_ends_the_scan(line: str) -> None:
    assert "inside" not in scalars(f"{line}\ninside=1\n}}\n")


# Rule 2: assignments.


def test_scalar_assignment_with_a_trailing_comment() -> None:
    assert scalars("a=x # comment\nb='y'   # c\nc=\nd=z#not-a-comment\n") == {
        "a": "x",
        "b": "y",
        "c": "",
        "d": "z#not-a-comment",
    }


@pytest.mark.parametrize(
    "line", ["a=x y", "a=x;", "a=1; b=2", "a=x cmd", "a=x | tee", "a=x && true", "a=x \\\ny", "a=(x)y=1", "a=x>out"]
)
def test_anything_after_the_word_makes_a_scalar_unresolvable(line: str) -> None:
    prologue = scan_prologue(f'a=old\n{line}\nsource=("$a" ok)\n')
    assert "a" not in prologue.scalars
    assert prologue.sources == ("ok",)


def test_the_rest_of_a_refused_assignment_line_is_skipped() -> None:
    assert "b" not in scalars("a=1; b=2\n")
    assert scalars("a=1; b=2\nc=3\n") == {"c": "3"}


def test_arrays_span_lines_and_skip_comments() -> None:
    text = "source=(\n  'https://a.example.org/1' # one ) two\n  # a whole line 'comment\n  \"https://a.example.org/2\"\n)\n"
    assert sources(text) == ["https://a.example.org/1", "https://a.example.org/2"]


def test_array_words_may_be_continued_with_a_backslash() -> None:
    assert sources("source=(a\\\nb \\\n c)") == ["ab", "c"]


def test_array_followed_by_a_command_is_not_kept() -> None:
    assert sources("source=(a)\nsource=(b c) echo hi\nx=1") == []
    assert sources("source=(a)\nsource+=(b c) echo hi\n") == ["a"]


def test_array_followed_by_a_separator_or_comment_is_kept() -> None:
    assert sources("source=(a b); source+=(c) # note\n") == ["a", "b", "c"]


# Rule 3: other statements, heredocs and constructs that end the scan.


def test_other_statements_are_skipped_to_the_end_of_the_line() -> None:
    text = "echo 'it''s' \"a\nsource=(inside-quote)\" \\\n  source=(continued)\nsource=(ok)\n"
    assert sources(text) == ["ok"]


def test_quotes_and_substitutions_in_skipped_lines_are_followed() -> None:
    text = "x=1\ncmd \"$(printf ')')\" `echo \"#\"` ${a:-\"}\"} $'\\'' # '\nsource=(ok)\n"
    assert sources(text) == ["ok"]


def test_comment_only_at_a_word_start_in_skipped_lines() -> None:
    assert sources("echo a#'b\nsource=(x)'\nsource=(ok)\n") == ["ok"]
    assert sources("echo a #'b\nsource=(ok)\n") == ["ok"]


@pytest.mark.parametrize(
    "ending",
    [
        "cat <<EOF\nsource=(inside)\nEOF",
        "cat <<-EOF\n\tsource=(inside)\nEOF",
        "cat <<< word\nsource=(inside)",
        "x=$(cat <<EOF\nsource=(inside)\nEOF\n)",
        "echo 'unterminated\nsource=(inside)",
        'echo "unterminated\nsource=(inside)',
        "x=`unterminated\nsource=(inside)",
        "x=$(unterminated\nsource=(inside)",
        "x=${unterminated\nsource=(inside)",
        "source=(unterminated\nsource=(inside)",
        "x=$'unterminated\nsource=(inside)",
        "echo $((1 << 2))\nsource=(inside)",
        "source=(a;b)\nsource=(inside)",
        "source=(a|b)\nsource=(inside)",
        "source=(a(b))\nsource=(inside)",
    ],
)
def test_constructs_that_end_the_scan_keep_what_came_before(ending: str) -> None:
    assert sources(f"source=(before)\n{ending}\nsource=(after)\n") == ["before"]


def test_heredoc_marker_inside_quotes_does_not_end_the_scan() -> None:
    assert sources("echo '<<EOF' \"<<\" \\<<x\nsource=(ok)\n") == ["ok"]


def test_here_string_in_a_scalar_assignment_line_ends_the_scan() -> None:
    assert sources("source=(before)\na=x <<<y\nsource=(after)\n") == ["before"]


# Rule 4: order, `+=`, arrays unusable in expansions, source arrays.


def test_assignments_apply_in_order() -> None:
    assert sources('v=1\nsource=("$v")\nv=2\nsource+=("$v")\n') == ["1", "2"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=x\na+=y\n", {"a": "xy"}),
        ("a+=y\n", {}),
        ("a=$(x)\na+=y\n", {}),
        ("a=(x)\na+=y\n", {}),
        ("a=x\na+=$(y)\n", {}),
        ("a=x\na+=(y)\n", {}),
        ("a=(x)\na=y\n", {}),
    ],
)
def test_append_and_arrays(text: str, expected: dict[str, str]) -> None:
    assert scalars(text) == expected


def test_arrays_are_unusable_in_expansions() -> None:
    assert sources('arch=(x86_64)\nsource=("a-$arch" "b-${arch}" c)\n') == ["c"]


def test_source_array_names() -> None:
    text = "source_x86_64=(a)\nsource_i686_v2=(b)\nsources=(no)\nsource_=(no)\nSOURCE=(no)\nsource=(c)\n"
    assert sources(text) == ["a", "b", "c"]


def test_source_elements_come_from_every_source_array_in_first_assignment_order() -> None:
    text = "source_x86_64=(x1)\nsource=(s1)\nsource_x86_64+=(x2)\nsource_aarch64=(a1)\n"
    assert sources(text) == ["x1", "x2", "s1", "a1"]


def test_a_scalar_assignment_to_a_source_array_drops_it() -> None:
    assert sources("source=(a b)\nsource=c\n") == []
    assert sources("source=(a b)\nsource+=c\nsource+=(d)\n") == ["d"]
    assert sources('source=(a)\nx=1\nsource_x86_64=("$x")\nsource_x86_64="$x"\n') == ["a"]


def test_unresolvable_words_are_dropped_from_source_arrays() -> None:
    assert sources('source=(a "$nope" b $(c) d)\n') == ["a", "b", "d"]


def test_empty_arrays() -> None:
    assert sources("source=(a)\nsource=()\n") == []
    assert sources("source=( )\nsource+=(\n)\n") == []


def test_install_is_a_resolvable_scalar_only() -> None:
    assert scan_prologue('_n=tiny\ninstall="$_n.install"\n').install == "tiny.install"
    assert scan_prologue("install=$(echo x.install)\n").install is None
    assert scan_prologue("install=(x.install)\n").install is None
    assert scan_prologue("build() {\ninstall=x.install\n}\n").install is None


# Words and expansion.


@pytest.mark.parametrize(
    ("word", "value"),
    [
        ("'lit $x `y` \\n'", "lit $x `y` \\n"),
        ('"a\\$b\\`c\\"d\\\\e\\f"', 'a$b`c"d\\e\\f'),
        ('"line\\\ncontinued"', "linecontinued"),
        ("a\\ b\\'c", "a b'c"),
        ("a\\\nb", "ab"),
        ("'a'\"b\"c", "abc"),
        ('"$v-${v}"', "V-V"),
        ("$v${v}x", "VVx"),
        ("${v}_suffix", "V_suffix"),
        ("$v_suffix", None),
        ('"a*b?c[d]{e}~f"', "a*b?c[d]{e}~f"),
        ("x~y", "x~y"),
        ("'~'x", "~x"),
        ("", ""),
        ('""', ""),
        ("a#b", "a#b"),
        ("#b", "#b"),
        ("#", "#"),
        ("'' #b", ""),
    ],
)
def test_word_values(word: str, value: str | None) -> None:
    result = scalars(f"v=V\nw={word}\n").get("w")
    assert result == value


@pytest.mark.parametrize(
    "word",
    [
        "$(date)",
        '"$(date)"',
        "$((1+2))",
        "${v:-y}",
        "${v[0]}",
        "${#v}",
        "${!v}",
        "$1",
        "$@",
        '"$*"',
        "$#",
        "$?",
        "$$",
        "$!",
        "$-",
        "$'x'",
        '$"x"',
        "$",
        '"$"',
        "a$",
        '"$\'"',
        "`date`",
        '"`date`"',
        "$unknown",
        "$CARCH",
        "${srcdir}",
        "*",
        "a?",
        "[ab]",
        "{a,b}",
        "~",
        "~/x",
        "~user",
    ],
)
def test_unresolvable_words(word: str) -> None:
    assert "w" not in scalars(f"v=V\nw={word}\n")


def test_unresolvable_variable_poisons_later_expansions() -> None:
    assert "w" not in scalars("v=$(x)\nw=$v\n")
    assert scalars("v=$(x)\nv=ok\nw=$v\n")["w"] == "ok"


def test_expansion_uses_the_value_at_that_point() -> None:
    assert scalars("v=1\nw=$v\nv=2\n") == {"v": "2", "w": "1"}


# Robustness.


def test_deep_nesting_does_not_recurse() -> None:
    depth = 100_000
    assert sources("x=" + "$(" * depth + ")" * depth + "\nsource=(ok)\n") == ["ok"]
    assert sources('x="' + '${a:-"' * 1000 + '"}' * 1000 + '"\nsource=(ok)\n') == ["ok"]


def test_empty_input() -> None:
    assert scan_prologue(b"") == Prologue({}, ())


def test_trailing_backslash_at_the_end_of_the_text() -> None:
    assert scalars("a=b\\") == {"a": "b\\"}
    assert sources("echo x \\") == []


SHELL_ALPHABET = st.sampled_from(
    [*"ab_=+()[]{}$`'\"\\#;&|<>*?~ \t\n\r-:/.", "source=(", "build() {", "<<", "$(", "${", "\u00e9"]
)


@settings(max_examples=500)
@given(st.lists(SHELL_ALPHABET, max_size=60).map("".join))
def test_arbitrary_text_never_raises(text: str) -> None:
    prologue = scan_prologue(text)
    assert all(isinstance(element, str) for element in prologue.sources)


@settings(max_examples=200)
@given(st.binary(max_size=80))
def test_arbitrary_bytes_raise_only_pkgbuild_errors(data: bytes) -> None:
    try:
        scan_prologue(data)
    except PkgbuildError:
        pass


@settings(max_examples=300)
@given(st.lists(SHELL_ALPHABET, max_size=40).map("".join))
def test_nothing_after_a_function_start_counts(tail: str) -> None:
    head = "pkgver=1\nsource=(https://a.example.org/x)\n"
    assert scan_prologue(head + "build() {\n" + tail) == scan_prologue(head)


# Word characters only: a blank would end the word, which the empty quoted suffix would then follow.
WORD_ALPHABET = st.sampled_from([*"ab#~=:/.-+@%,!^", "\\\n", "$v", "${v}", "*"])


@settings(max_examples=300)
@given(st.lists(WORD_ALPHABET, max_size=12).map("".join))
def test_scalar_fast_path_agrees_with_the_word_reader(word: str) -> None:
    # An empty quoted suffix adds nothing to the value but forces the general reader.
    assert scalars(f"v=V\nw={word}\n") == scalars(f"v=V\nw={word}''\n")


@settings(max_examples=300)
@given(st.lists(st.lists(WORD_ALPHABET, min_size=1, max_size=6).map("".join), max_size=6))
def test_array_fast_path_agrees_with_the_word_reader(words: list[str]) -> None:
    # Each word starts with a letter, so none is only a line continuation.
    fast = sources("v=V\nsource=(" + "\n".join(f"a{word}" for word in words) + "\n)\n")
    general = sources("v=V\nsource=(" + "\n".join(f"a{word}''" for word in words) + "\n)\n")
    assert fast == general

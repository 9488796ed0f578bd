"""fp_agent_pr (docs/triage.md §11): render the pull request of a verified fp_agent_verify result."""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from harness.context import Context
from harness.errors import Refused
from harness.fields import ObjectInput
from harness.text.sanitize import echo
from harness.triage.names import is_date
from harness.triage.pr import TARGETS, Target, render_fp, render_tp
from harness.triage.render import load_result
from harness.triage.sandbox import find_git, run_fixes
from harness.triage.verdict import RESULT_MAX_BYTES

DESCRIPTION = """\
Render the pull request for a verified fp_agent_verify result: branch, title, markdown body and the full text \
of every file to add or change. Rendering only: nothing is pushed, fetched or merged, the AUR is not contacted \
again, and a maintainer reviews the PR. The same inputs give byte-identical output.

trustsight (the watcher) gets suppression records, indicator files and code fixes; trustsight-harness records \
the verified benign result (FP only). FP: branch triage/fp-<package>-<first 12 hex of verdict_sha256>, title \
"fp: suppress <rules> on <package> (<old> -> <new>)" (trustsight-harness: "triage: record benign ..."); files \
data/fp-suppressions/<date>-<package>.json (one file per rule, suffixed -<rule id lowercased>, when several \
rules are suppressed) or benign/fp-<date>/<package>.triage.json. TP (trustsight only): branch \
triage/ioc-<package>-<hash12>, file data/iocs/triage-<date>.json.

Code fixes: each fix's path must lie under src/trustsight/ or tests/ (no dot, empty or absolute components); \
its diff must be one file's unified diff (optional diff --git and index lines, --- a/<path> or --- /dev/null, \
+++ b/<path>, hunks with exact line counts), at most 262,144 bytes; headers and added lines printable ASCII or \
tab, no CR (context and removed lines as the file really has them, say UTF-8 or CRLF); mode changes, renames, \
copies, deletions, binary patches and symlinks are rejected. Fixes are applied in order, cumulatively, by git \
apply in a throwaway clone of [triage] watcher_repo at its HEAD (read it with repo_file first); the configured \
checkout is never written. A fix is accepted only if the resulting file is exactly its hunks applied where \
their @@ headers place them (git moves hunks whose context does not fit). A rejected fix is listed with its \
reason and never blocks the suppression.

Body: the verdict's rationale is shown verbatim as an indented code block, so no agent text can start a \
heading, table row, list item or fence.

Errors: invalid_input (malformed result, a result whose parts disagree with its verdict_document, the message \
naming the field, unknown target_repo, invalid date, body over 65,536 characters); refused (a result that is \
not verified, an uncertain verdict, a TP for trustsight-harness)."""


def _check_date(value: str) -> str:
    if not is_date(value):
        raise ValueError(f"{echo(value)} is not a real date YYYY-MM-DD in the years 2000 to 2099")
    return value


def _check_target(value: str) -> str:
    if value not in TARGETS:
        raise ValueError(f"{echo(value)} is not one of trustsight, trustsight-harness")
    return value


class Input(BaseModel):
    """Arguments of fp_agent_pr."""

    model_config = ConfigDict(extra="forbid")

    result: Annotated[dict[str, Any], ObjectInput(RESULT_MAX_BYTES)] = Field(
        description="The fp_agent_verify result object, unchanged; on the CLI JSON text or a file path. "
        "At most 2,097,152 bytes. Required."
    )
    target_repo: Annotated[str, AfterValidator(_check_target)] = Field(
        description="trustsight (suppressions, indicators, code fixes) or trustsight-harness (benign record, FP "
        "only). Required."
    )
    date: Annotated[str, AfterValidator(_check_date)] = Field(
        description="The PR date, YYYY-MM-DD (2000-2099); names the files and sets created_at. Required."
    )


class CodeFixOutcome(BaseModel):
    """What became of one proposed code fix."""

    index: int = Field(description="Position of the fix in the verdict's code_fixes, from 1.")
    path: str = Field(description="The fix's path.")
    status: Literal["applied", "rejected"] = Field(description="applied or rejected.")
    reason: str = Field(description='Why it was rejected; "" when applied.')
    added: int = Field(description="Lines added by the applied fix; 0 when rejected.")
    removed: int = Field(description="Lines removed by the applied fix; 0 when rejected.")


class Output(BaseModel):
    """The rendered pull request; every key always present."""

    target_repo: str = Field(description="trustsight or trustsight-harness.")
    branch: str = Field(description="Branch name: triage/fp-<package>-<hash12> or triage/ioc-<package>-<hash12>.")
    title: str = Field(description="PR title.")
    body: str = Field(description="PR body (markdown).")
    files: dict[str, str] = Field(description="Path to full file text, for every file the PR adds or changes.")
    code_fixes: list[CodeFixOutcome] = Field(description="One outcome per proposed fix (trustsight FP); else [].")
    base_commit: str | None = Field(description="The watcher commit the fixes were applied on; null if no sandbox ran.")


def handle(args: Input, ctx: Context) -> Output:
    """Check the result (docs/triage.md §10), run the code fixes in the sandbox when they apply, and render the PR."""
    rendering = load_result(args.result)
    target: Target = "trustsight" if args.target_repo == "trustsight" else "trustsight-harness"
    if rendering.result.verdict == "TP":
        if target != "trustsight":
            raise Refused("TP results render only for target trustsight")
        pr = render_tp(rendering, args.date)
    else:
        report = None
        if target == "trustsight" and rendering.verdict.code_fixes:
            settings = ctx.settings
            watcher = settings.workspace_path(settings.get("triage", "watcher_repo"))
            git = find_git(settings.environ.get("PATH", os.defpath))
            report = run_fixes(rendering.verdict.code_fixes, watcher, git)
        pr = render_fp(rendering, target, args.date, report)
    return Output.model_validate(
        {
            "target_repo": pr.target_repo,
            "branch": pr.branch,
            "title": pr.title,
            "body": pr.body,
            "files": pr.files,
            "code_fixes": pr.code_fixes,
            "base_commit": pr.base_commit,
        }
    )

"""fp_agent_verify (docs/triage.md §9): verify an agent's FP/TP verdict against a fresh read-only AUR snapshot."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from harness.context import Context
from harness.errors import InvalidInput
from harness.fields import ObjectInput
from harness.text.formatgate import FormatError
from harness.triage.result import Result
from harness.triage.services import aur
from harness.triage.verdict import VERDICT_MAX_BYTES, ObjectInputError, validate_verdict
from harness.triage.verify import verify

DESCRIPTION = """\
Verify an agent's verdict on a TrustSight AUR alert against deterministic evidence: a fresh, read-only look at \
the AUR (RPC info and the package's git files at the cited commits). The agent proposes; the checks decide. \
Nothing from the package is executed or fetched: URLs in package files are only compared as text.

The verdict document (schema v1, at most 1,048,576 bytes, nesting at most 16, no duplicate keys) has these keys, \
all required and no others: schema_version (1), package, verdict (FP, TP or uncertain), confidence (low, medium, \
high), rationale (1..4,000 characters), transition (null or {old_version, new_version, old_commit, new_commit}), \
evidence (0..64 {rule_id, file, line, claim, url?}), proposed_changes (0..64: FP suppressions {kind: \
"suppression", rule_id, reason}; TP iocs {kind: "ioc", type, value, confidence, provenance, campaign?, \
incident?, expires_at?, note?}), code_fixes (0..8 {path, diff}). Text must be printable ASCII (rationale also \
newlines; no em or en dashes, no "--" as a sentence separator in prose: rationale, claims, reasons, notes, \
provenance); diffs are not gated here but fix by fix in fp_agent_pr, so a bad fix never blocks a verdict. An FP \
needs the full transition with both AUR commit ids (cite full 40-hex ids), at least one evidence item and one \
suppression per cited rule; rules R012 and R013 can never be suppressed. A TP proposes only ioc changes.

What is checked: FP: the package is on the AUR (RPC), PKGBUILD and .SRCINFO at both commits bind the package \
base and the claimed versions, then each evidence item is routed: a file ending in .install or rules R007, \
R053, H015, H017, H023, H100 go to check_phantom_install (the install scriptlet is declared alike and \
identical at both commits, line endings aside); H016, R010, R011, H082, X009, R152, SOURCE_BUCKET, NOVELTY, \
C003 go to check_url_in_source (the evidence url, with a routable host, is declared in the sources at \
new_commit); any other rule has no deterministic check and fails. TP: the RPC lookup (a package absent from \
the AUR passes only when every package indicator's provenance cites a takedown) and every indicator's \
normalization. An uncertain verdict is never verified and makes no request. Pass the whole result to \
fp_agent_pr or fp_agent_alert unchanged.

Errors: invalid_input for a malformed verdict (the message names the JSON path and the rule). Network trouble \
(timeouts, HTTP errors after retries, challenge pages, malformed replies, missing files) is never an error: \
the result says verified false with the reason. Caps: at most 1 MiB per AUR answer, 60 s per request, 180 s \
for all requests of one call; retries on 429 and 5xx honour Retry-After up to [aur] retry_after_cap_s. \
Requests go only to [aur] base_url (default https://aur.archlinux.org)."""


class Input(BaseModel):
    """Arguments of fp_agent_verify."""

    model_config = ConfigDict(extra="forbid")

    verdict: Annotated[dict[str, Any], ObjectInput(VERDICT_MAX_BYTES)] = Field(
        description="The verdict document (schema v1) as a JSON object; on the CLI JSON text or a file path. "
        "At most 1,048,576 bytes. Required."
    )


Output = Result


def handle(args: Input, ctx: Context) -> Result:
    """Validate the verdict (docs/triage.md §4 order: size, gate, model, cross-field rules), then replay its checks."""
    try:
        verdict = validate_verdict(args.verdict)
    except FormatError as exc:
        raise InvalidInput(f"verdict: {exc}") from None
    except ObjectInputError as exc:
        raise InvalidInput(str(exc)) from None
    return verify(verdict, aur(ctx), ctx.clock)

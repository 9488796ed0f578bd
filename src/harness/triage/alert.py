"""The trustsight.confirmed-ioc envelope of a verified TP result (docs/triage.md §12, docs/triage.md §14.4)."""

from __future__ import annotations

from typing import Any

from harness import __version__
from harness.errors import InvalidInput, Refused
from harness.text import canonjson
from harness.text.formatgate import FormatError, JsonPath, Mode, check_tree
from harness.triage.render import Rendering, branch, campaign_label

EVENT = "trustsight.confirmed-ioc"
TOOL = "triage-harness"
# A confirmed IOC deserves prompt human attention, not a siren.
PRIORITY = "default"
MAX_ENVELOPE_BYTES = 900_000
NOT_TP = "alerts render only verified TP results"


def aur_page(package: str) -> str:
    """The public AUR page of a package, whatever `[aur] base_url` points at."""
    return f"https://aur.archlinux.org/packages/{package}"


def envelope_mode(path: JsonPath) -> Mode:
    """Envelope strings are `line`, except the agent's prose: the rationale (`prose_text`) and each
    indicator's provenance and note (`prose_line`)."""
    if path == ("rationale",):
        return "prose_text"
    if len(path) == 3 and path[0] == "iocs" and path[2] in ("provenance", "note"):
        return "prose_line"
    return "line"


def render_alert(r: Rendering) -> dict[str, Any]:
    """The envelope, every key present; refused for anything but a TP, invalid when it is too large."""
    result = r.result
    if result.verdict != "TP":
        raise Refused(NOT_TP)
    package = result.package
    page = aur_page(package)
    envelope: dict[str, Any] = {
        "event": EVENT,
        "tool": TOOL,
        "tool_version": __version__,
        "title": f"TrustSight: confirmed IOC on {package} ({campaign_label(result.ioc_entries)})",
        "priority": PRIORITY,
        "package": package,
        "aur": page,
        "aur_status": "present" if result.pkgbase else "absent",
        "version": result.version_transition,
        "ioc_matches": [
            {"package": package, "indicator": f"{entry.type}:{entry.value}", "aur": page}
            for entry in result.ioc_entries
        ],
        "iocs": r.document["ioc_entries"],
        "rationale": r.verdict.rationale,
        "branch": branch("ioc", package, result.verdict_sha256),
        "verdict_sha256": result.verdict_sha256,
    }
    size = len(canonjson.dumps_bytes(envelope))
    if size >= MAX_ENVELOPE_BYTES:
        raise InvalidInput(f"result: the envelope would be {size:,} bytes, not under {MAX_ENVELOPE_BYTES:,}")
    try:
        check_tree(envelope, envelope_mode)
    except FormatError as exc:
        raise InvalidInput(f"envelope: {exc}") from None
    return envelope

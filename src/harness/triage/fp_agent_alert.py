"""fp_agent_alert (docs/triage.md §12): the trustsight.confirmed-ioc envelope of a verified TP result."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.context import Context
from harness.fields import ObjectInput
from harness.triage.alert import render_alert
from harness.triage.render import load_result
from harness.triage.result import IocEntry
from harness.triage.verdict import RESULT_MAX_BYTES

DESCRIPTION = """\
Render the trustsight.confirmed-ioc alert envelope for a verified TP result of fp_agent_verify. Rendering \
only: nothing is sent (delivery to the alert sinks belongs to the pipeline) and the AUR is not contacted again. \
The title reads "TrustSight: confirmed IOC on <package> (<campaign, else incident>)"; the same result gives \
identical bytes.

Errors: invalid_input (malformed result, a result whose parts disagree with its verdict_document, the message \
naming the field, an envelope of 900,000 bytes or more); refused (a result that is not verified, or not a TP)."""


class Input(BaseModel):
    """Arguments of fp_agent_alert."""

    model_config = ConfigDict(extra="forbid")

    result: Annotated[dict[str, Any], ObjectInput(RESULT_MAX_BYTES)] = Field(
        description="The fp_agent_verify result object of a verified TP, unchanged; on the CLI JSON text or a "
        "file path. At most 2,097,152 bytes. Required."
    )


class IocMatch(BaseModel):
    """One indicator of the alert, in the watcher's ioc_matches shape."""

    package: str = Field(description="The package.")
    indicator: str = Field(description="<type>:<value>.")
    aur: str = Field(description="The package's public AUR page.")


class Output(BaseModel):
    """The trustsight.confirmed-ioc envelope; every key always present."""

    event: Literal["trustsight.confirmed-ioc"] = Field(description="Always trustsight.confirmed-ioc.")
    tool: Literal["triage-harness"] = Field(description="Always triage-harness.")
    tool_version: str = Field(description="The harness version.")
    title: str = Field(description="TrustSight: confirmed IOC on <package> (<label>).")
    priority: Literal["default"] = Field(description="Always default.")
    package: str = Field(description="The package.")
    aur: str = Field(description="https://aur.archlinux.org/packages/<package>.")
    aur_status: Literal["present", "absent"] = Field(description="Whether the AUR RPC found the package.")
    version: str = Field(description="The result's version_transition.")
    ioc_matches: list[IocMatch] = Field(description="One entry per indicator, in ioc_entries order.")
    iocs: list[IocEntry] = Field(description="The result's ioc_entries.")
    rationale: str = Field(description="The verdict's rationale.")
    branch: str = Field(description="triage/ioc-<package>-<hash12>, the branch of the matching PR.")
    verdict_sha256: str = Field(description="From the result.")


def handle(args: Input, ctx: Context) -> Output:
    """Check the result (docs/triage.md §10), refuse anything but a TP, and render the envelope."""
    return Output.model_validate(render_alert(load_result(args.result)))

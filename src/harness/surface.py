"""The canonical operation list: one entry per operation, shared by the CLI and the MCP server.

Each entry names the module that implements it. That module exports `Input` and `Output`
(pydantic models), `DESCRIPTION` (what the agent reads) and `handle(input, ctx) -> Output`.
Modules load on first use, so `harness --help` stays fast without importing every model.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

Toolset = Literal["investigate", "triage"]
TOOLSETS: tuple[Toolset, ...] = ("investigate", "triage")


@dataclass(frozen=True)
class Implementation:
    """What an operation module provides."""

    input_model: type[Any]
    output_model: type[Any]
    description: str
    handler: Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Operation:
    """One operation: its MCP tool name and CLI subcommand, hints, and where its code lives."""

    name: str
    title: str
    toolset: Toolset
    module: str = ""
    open_world: bool = False
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    # Test registries pass an Implementation directly instead of a module path.
    implementation: Implementation | None = field(default=None, compare=False, repr=False)

    @cached_property
    def impl(self) -> Implementation:
        """The loaded implementation (imported on first use)."""
        if self.implementation is not None:
            return self.implementation
        mod = importlib.import_module(self.module)
        return Implementation(
            input_model=mod.Input,
            output_model=mod.Output,
            description=mod.DESCRIPTION,
            handler=mod.handle,
        )

    def annotations(self) -> dict[str, bool]:
        """The MCP tool hints."""
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }


class Registry:
    """An ordered, name-indexed set of operations (the package's, a toolset subset, or a test's)."""

    def __init__(self, operations: Iterable[Operation]) -> None:
        self._ops: dict[str, Operation] = {}
        for op in operations:
            if op.name in self._ops:
                raise ValueError(f"operation {op.name} is registered twice")
            self._ops[op.name] = op

    def __iter__(self) -> Iterator[Operation]:
        return iter(self._ops.values())

    def __len__(self) -> int:
        return len(self._ops)

    def get(self, name: str) -> Operation | None:
        """The operation called `name`, or None."""
        return self._ops.get(name)

    def names(self) -> list[str]:
        """Operation names in registry order."""
        return list(self._ops)

    def subset(self, toolsets: Iterable[str]) -> Registry:
        """The operations of the given toolsets only."""
        wanted = set(toolsets)
        return Registry(op for op in self if op.toolset in wanted)


OPERATIONS = Registry(
    [
        Operation("search_events", "Search security events", "investigate", module="harness.investigate.search_events"),
        Operation("search_findings", "Search security findings", "investigate", module="harness.investigate.search_findings"),
        Operation("check_baseline", "Check an entity against the baseline", "investigate", module="harness.investigate.check_baseline"),
        Operation("lookup_rules", "Look up operator rules for a finding", "investigate", module="harness.investigate.lookup_rules"),
        Operation("get_raw_event", "Read one event's raw payload", "investigate", module="harness.investigate.get_raw_event"),
        Operation(
            "resolve_finding",
            "Propose resolving or escalating a finding, checked against its events and rules",
            "investigate",
            module="harness.investigate.resolve_finding",
            # It appends its proposal to the resolutions stream, and each call is recorded anew.
            read_only=False,
            idempotent=False,
        ),
        Operation("github_actor", "Look up a GitHub account", "investigate", module="harness.investigate.github_actor", open_world=True),
        Operation("fp_agent_verify", "Verify an FP/TP verdict against the AUR", "triage", module="harness.triage.fp_agent_verify", open_world=True),
        Operation("fp_agent_pr", "Render the PR of a verified verdict", "triage", module="harness.triage.fp_agent_pr"),
        Operation("fp_agent_alert", "Render the confirmed-IOC alert of a verified TP", "triage", module="harness.triage.fp_agent_alert"),
        Operation("repo_file", "Read one file of the watcher checkout", "triage", module="harness.triage.repo_file"),
    ]
)

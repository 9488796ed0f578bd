"""The dispatcher on its own: one call path, strict validation, recording order, defensive limits."""

from __future__ import annotations

from typing import Any

import pytest
from testops import REGISTRY

from harness.dispatch import MAX_ARGUMENT_DEPTH, CallContext, CallRecord, NullRecorder, Outcome, dispatch
from harness.errors import LedgerUnavailable

CALL = CallContext(surface="cli", conversation_id="c-1", conversation_source="flag", request_id="r-1", tool_call_id="t-1")


class Spy(NullRecorder):
    def __init__(self, fail_begin: bool = False) -> None:
        self.events: list[tuple[str, Any]] = []
        self.fail_begin = fail_begin

    def begin(self, record: CallRecord) -> None:
        if self.fail_begin:
            raise LedgerUnavailable("database is locked")
        self.events.append(("begin", record.arguments))

    def finish(self, record: CallRecord, outcome: Outcome, duration_ms: int, exit_code: int | None) -> None:
        self.events.append(("finish", (outcome.error_code, exit_code, duration_ms >= 0)))

    def refuse(self, record: CallRecord, outcome: Outcome, exit_code: int | None) -> None:
        self.events.append(("refuse", (outcome.error_code, exit_code)))


def _nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"a": value}
    return value


def test_a_success_writes_begin_then_finish_with_canonical_arguments() -> None:
    spy = Spy()
    outcome = dispatch(REGISTRY, "test_echo", {"text": "é", "required_name": "n"}, CALL, None, recorder=spy)
    assert outcome.exit_code == 0
    assert spy.events == [("begin", '{"required_name":"n","text":"é"}'), ("finish", ("", 0, True))]


def test_handler_errors_are_finished_not_refused() -> None:
    spy = Spy()
    dispatch(REGISTRY, "test_fail", {"code": "not_found"}, CALL, None, recorder=spy)
    assert [kind for kind, _ in spy.events] == ["begin", "finish"]
    assert spy.events[1][1][:2] == ("not_found", 1)


@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [("test_echo", {"bogus": 1}, "invalid_input"), ("nope", {}, "unknown_operation")],
)
def test_calls_refused_before_the_handler_are_recorded_as_one_pair(name: str, arguments: dict, code: str) -> None:
    spy = Spy()
    dispatch(REGISTRY, name, arguments, CALL, None, recorder=spy)
    assert spy.events == [("refuse", (code, 2))]


def test_an_unwritable_start_refuses_the_call_and_the_handler_never_runs() -> None:
    calls: list[Any] = []
    from harness.surface import Implementation, Operation, Registry

    spy_op = Operation(
        "spy", "Spy", "investigate",
        implementation=Implementation(
            REGISTRY.get("test_echo").impl.input_model,
            REGISTRY.get("test_echo").impl.output_model,
            "spy",
            lambda args, ctx: calls.append(args),
        ),
    )
    outcome = dispatch(Registry([spy_op]), "spy", {"required_name": "n"}, CALL, None, recorder=Spy(fail_begin=True))
    assert outcome.document == {
        "error": {"code": "ledger_unavailable", "message": "database is locked", "operation": "spy"}
    }
    assert outcome.exit_code == 3
    assert calls == []


def test_mcp_calls_record_no_exit_code() -> None:
    spy = Spy()
    mcp_call = CallContext(surface="mcp", conversation_id="c", conversation_source="meta", request_id="1", tool_call_id="t")
    dispatch(REGISTRY, "test_fail", {"code": "refused"}, mcp_call, None, recorder=spy)
    assert spy.events[-1] == ("finish", ("refused", None, True))


def test_arguments_nested_too_deep_are_refused_before_anything_recurses() -> None:
    spy = Spy()
    outcome = dispatch(REGISTRY, "test_echo", {"meta": _nested(5000)}, CALL, None, recorder=spy)
    assert outcome.document["error"]["message"] == f"arguments: nesting is deeper than {MAX_ARGUMENT_DEPTH} levels"
    assert spy.events == [("refuse", ("invalid_input", 2))]
    shallow = dispatch(REGISTRY, "test_echo", {"meta": _nested(MAX_ARGUMENT_DEPTH - 1)}, CALL, None)
    assert shallow.document["error"]["message"].startswith("meta.a: expected a string")


def test_a_handler_returning_the_wrong_type_is_an_internal_error() -> None:
    from harness.surface import Implementation, Operation, Registry

    echo = REGISTRY.get("test_echo").impl
    bad = Operation("bad", "Bad", "investigate",
                    implementation=Implementation(echo.input_model, echo.output_model, "bad", lambda a, c: {"x": 1}))
    outcome = dispatch(Registry([bad]), "bad", {"required_name": "n"}, CALL, None)
    assert outcome.error_code == "internal_error"

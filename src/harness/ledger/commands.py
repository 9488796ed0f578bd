"""The logic of `harness ledger list|show|verify|head|keygen|export|tail|migrate` (docs/ledger.md §12): JSON-ready results.

cli.py parses flags, opens the store (reading commands with `create=False`) and prints; these functions
validate option values (raising InvalidInput or NotFound), read one snapshot and build the document.
"""

from __future__ import annotations

import datetime
import re
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from harness import files
from harness.errors import InvalidInput, NotFound
from harness.ledger import ids, migrations, sidecars, signing, sqlite, tail
from harness.ledger.model import format_ts
from harness.ledger.postgres import DEFAULT_APP_ROLE, DEFAULT_OWNER_ROLE, migrate_postgres
from harness.ledger.recorder import PRINCIPAL_CAP
from harness.ledger.records import Call, CallFilter, Clock, ConversationSummary
from harness.ledger.redaction_boundary import LedgerRedactor
from harness.ledger.settings import LedgerSettings, is_postgres_target
from harness.ledger.store import LedgerStore, open_store
from harness.ledger.verify import HeadsFormatError, heads_document, parse_heads_document, verify
from harness.text import canonjson
from harness.text.rfc3339 import TimestampError, parse_timestamp
from harness.text.sanitize import echo

LIST_DEFAULT_LIMIT = 100
LIST_MAX_LIMIT = 10_000
SHOW_DEFAULT_LIMIT = 1000
SHOW_MAX_LIMIT = 10_000
CALL_STATUSES = ("ok", "error", "in_flight")
VERIFY_PROBLEMS_EXIT = 4
HEADS_FILE_MAX_BYTES = 64 * 1024 * 1024
TAIL_BATCH = 1000
# Sidecar files imported per transaction by `ledger migrate`: bounded memory, few commits.
SIDECAR_IMPORT_BATCH = 200
TAIL_DEFAULT_INTERVAL = 1.0
TAIL_MAX_INTERVAL = 3600.0
_DURATION = re.compile(r"([1-9][0-9]{0,8})([smhd])")
_DURATION_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def parse_ts_option(name: str, text: str) -> datetime.datetime:
    """An RFC 3339 option value as an aware UTC datetime; InvalidInput names the option."""
    try:
        micros = parse_timestamp(text)
    except TimestampError as exc:
        raise InvalidInput(f"{name}: {exc}") from exc
    return _EPOCH + datetime.timedelta(microseconds=micros)


def parse_cutoff(name: str, text: str, now: datetime.datetime) -> datetime.datetime:
    """A TS or a DURATION such as `15m` (s, m, h, d) counted back from `now`."""
    match = _DURATION.fullmatch(text)
    if match is None:
        try:
            return parse_ts_option(name, text)
        except InvalidInput:
            expected = "an RFC3339 timestamp such as 2026-04-10T09:00:00Z or a duration such as 15m"
            raise InvalidInput(f"{name}: expected {expected}, got {echo(text)}") from None
    return now - datetime.timedelta(**{_DURATION_UNITS[match[2]]: int(match[1])})


def _check_limit(name: str, value: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidInput(f"{name}: expected an integer in 1..{maximum}, got {value!r}")
    return value


def _check_id(name: str, value: str | None) -> str | None:
    if value is not None and not ids.is_id(value):
        raise InvalidInput(f"{name}: expected an id matching {ids.ID_RE.pattern}, got {echo(value)}")
    return value


def _ts(value: datetime.datetime | None) -> str | None:
    return None if value is None else format_ts(value)


def _call_json(call: Call) -> dict[str, Any]:
    return {
        "conversation_id": call.conversation_id,
        "request_id": call.request_id,
        "tool_call_id": call.tool_call_id,
        "tool_name": call.tool_name,
        "seq": call.seq,
        "started_at": format_ts(call.started_at),
        "ended_at": _ts(call.ended_at),
        "duration_ms": call.duration_ms,
        "status": call.status,
        "error": call.error,
        "exit_code": call.exit_code,
        "result_bytes": call.result_bytes,
        "result_truncated": call.result_truncated,
        "principal": call.principal,
    }


def _summary_json(summary: ConversationSummary) -> dict[str, Any]:
    return {
        "id": summary.id,
        "created_at": format_ts(summary.created_at),
        "calls": summary.calls,
        "last_chain_seq": summary.last_chain_seq,
        "last_ts": _ts(summary.last_ts),
    }


def list_calls(
    store: LedgerStore,
    *,
    clock: Clock,
    conversation: str | None = None,
    tool: str | None = None,
    status: str | None = None,
    since: str | None = None,
    until: str | None = None,
    in_flight_before: str | None = None,
    conversations: bool = False,
    limit: int = LIST_DEFAULT_LIMIT,
    principal: str | None = None,
) -> dict[str, Any]:
    """`ledger list`: calls (start joined with end), newest first; or with `conversations`, the conversations."""
    _check_limit("limit", limit, LIST_MAX_LIMIT)
    _check_id("conversation", conversation)
    if tool is not None and not ids.is_tool_name(tool):
        raise InvalidInput(f"tool: expected a name matching {ids.TOOL_NAME_RE.pattern}, got {echo(tool)}")
    if status is not None and status not in CALL_STATUSES:
        raise InvalidInput(f"status: expected one of ok, error, in_flight, got {echo(status)}")
    if in_flight_before is not None and status not in (None, "in_flight"):
        raise InvalidInput("in_flight_before: lists in-flight calls only, so --status must be in_flight or absent")
    if principal is not None and not 0 < len(principal) <= PRINCIPAL_CAP:
        raise InvalidInput(f"principal: expected 1 to {PRINCIPAL_CAP} characters, got {len(principal)}")
    where = CallFilter(
        principal=principal,
        conversation_id=conversation,
        tool_name=tool,
        status=status,
        since=None if since is None else parse_ts_option("since", since),
        until=None if until is None else parse_ts_option("until", until),
        in_flight_before=None
        if in_flight_before is None
        else parse_cutoff("in_flight_before", in_flight_before, clock()),
    )
    with store.snapshot() as snap:
        if conversations:
            found = snap.conversation_summaries(conversation, limit + 1)
            listed = [_summary_json(s) for s in found[:limit]]
            notes = "" if listed else "no conversations in the ledger"
            return {"conversations": listed, "truncated": len(found) > limit, "notes": notes}
        calls = snap.calls(where, limit + 1)
    listed = [_call_json(c) for c in calls[:limit]]
    return {"calls": listed, "truncated": len(calls) > limit, "notes": "" if listed else "no calls matched"}


def show(
    store: LedgerStore,
    conversation_id: str,
    *,
    call: str | None = None,
    after_chain_seq: int = 0,
    limit: int = SHOW_DEFAULT_LIMIT,
) -> dict[str, Any]:
    """`ledger show`: a conversation's full rows in chain order (NULL as null, bytes as hex)."""
    _check_id("conversation_id", conversation_id)
    _check_id("call", call)
    _check_limit("limit", limit, SHOW_MAX_LIMIT)
    if isinstance(after_chain_seq, bool) or not isinstance(after_chain_seq, int) or after_chain_seq < 0:
        raise InvalidInput(f"after_chain_seq: expected an integer >= 0, got {after_chain_seq!r}")
    with store.snapshot() as snap:
        found = snap.conversations([conversation_id])
        if not found:
            deleted = any(t.conversation_id == conversation_id for t in snap.tombstones())
            reason = "was deleted from the ledger" if deleted else "is not in the ledger"
            raise NotFound(f"conversation_id: conversation {conversation_id} {reason}")
        heads = snap.heads(conversation_id)
        count = snap.count_rows(conversation_id)
        rows = snap.conversation_rows(
            conversation_id, after_chain_seq=after_chain_seq, tool_call_id=call, limit=limit + 1
        )
    head = {"chain_seq": heads[0].chain_seq, "row_hash": heads[0].row_hash.hex()} if heads else None
    return {
        "conversation": {"id": found[0].id, "created_at": format_ts(found[0].created_at), "rows": count, "head": head},
        "rows": [row.to_json() for row in rows[:limit]],
        "truncated": len(rows) > limit,
    }


def read_heads_file(path: Path) -> str:
    """The text of a heads file given by `--heads`: a regular file (harness.files), size-capped, strict UTF-8."""
    try:
        return files.read_text(path, HEADS_FILE_MAX_BYTES)
    except files.FileRefused as exc:
        raise InvalidInput(f"heads: {exc}") from None


def verify_ledger(
    store: LedgerStore,
    *,
    conversations: Sequence[str] = (),
    heads_file: Path | None = None,
    pubkey: Path | None = None,
    sidecars: bool = False,
    workspace: Path | None = None,
) -> dict[str, Any]:
    """`ledger verify`: the docs/ledger.md §8.3 report; the CLI exits VERIFY_PROBLEMS_EXIT when `ok` is false. With `pubkey` the
    heads file must carry a valid signature by that key, checked before anything else."""
    for cid in conversations:
        _check_id("conversation", cid)
    if sidecars and workspace is None:
        raise InvalidInput("sidecars: checking sidecars needs the workspace they live in")
    if pubkey is not None and heads_file is None:
        raise InvalidInput("pubkey: a public key checks a signed heads file, so --heads is needed too")
    public_key = None if pubkey is None else signing.load_public_key(pubkey)
    heads = None
    if heads_file is not None:
        text = read_heads_file(heads_file)
        try:
            heads = parse_heads_document(text)
            if public_key is not None:
                signing.check_signature(canonjson.loads_strict(text), public_key)
        except (HeadsFormatError, signing.SignatureError) as exc:
            raise InvalidInput(f"heads: {exc}") from exc
    return verify(
        store,
        conversation_ids=list(conversations) or None,
        heads=heads,
        sidecar_root=workspace if sidecars else None,
    )


def write_private_file(
    path: Path, chunks: Iterator[bytes], *, mode: int = 0o600, overwrite: bool = True
) -> tuple[int, str]:
    """`--output`: an atomic private write (harness.files.write_private) whose failures name the flag;
    returns (size, sha256). Without `overwrite` an existing file (a key) is refused, never replaced."""
    try:
        return files.write_private(path, chunks, mode=mode, overwrite=overwrite)
    except FileExistsError:
        raise InvalidInput(f"output: {echo(str(path))} exists; it is never overwritten") from None
    except OSError as exc:
        raise InvalidInput(f"output: cannot write in {echo(str(path.parent))}: {exc.strerror}") from exc


def keygen(output: Path) -> dict[str, Any]:
    """`ledger keygen`: a new Ed25519 key pair, the private key at `output` (0600) and the public key beside it
    (`output`.pub, 0644); neither file is overwritten and the private key is never printed."""
    private_pem, public_pem, kid = signing.new_key_pair()
    public_path = output.with_name(output.name + ".pub")
    if public_path.exists():
        raise InvalidInput(f"output: {echo(str(public_path))} exists; it is never overwritten")
    write_private_file(output, iter([private_pem]), overwrite=False)
    write_private_file(public_path, iter([public_pem]), mode=0o644, overwrite=False)
    return {"private_key": str(output), "public_key": str(public_path), "alg": signing.SIGNATURE_ALG, "key_id": kid}


def head(
    store: LedgerStore,
    *,
    clock: Clock,
    conversation: str | None = None,
    output: Path | None = None,
    sign: Path | None = None,
) -> dict[str, Any]:
    """`ledger head`: the docs/ledger.md §8.4 heads document, signed with the key file `sign` when given, also written (0600)
    to `output` when given."""
    _check_id("conversation", conversation)
    private_key = None if sign is None else signing.load_private_key(sign)
    document = heads_document(store.heads(conversation), backend=store.backend, exported_at=clock())
    if private_key is not None:
        document = signing.sign_document(document, private_key)
    if output is not None:
        write_private_file(output, iter([canonjson.dumps_bytes(document) + b"\n"]))
    return document


def export_lines(
    store: LedgerStore,
    *,
    conversations: Sequence[str] = (),
    since: str | None = None,
    until: str | None = None,
) -> Iterator[str]:
    """`ledger export`: one canonical full-row JSON object per line, by (conversation_id, chain_seq), one snapshot."""
    for cid in conversations:
        _check_id("conversation", cid)
    since_ts = None if since is None else parse_ts_option("since", since)
    until_ts = None if until is None else parse_ts_option("until", until)
    return _export(store, list(conversations) or None, since_ts, until_ts)


def _export(
    store: LedgerStore,
    conversations: list[str] | None,
    since: datetime.datetime | None,
    until: datetime.datetime | None,
) -> Iterator[str]:
    for row in store.iter_rows(conversations, since, until):
        yield canonjson.dumps(row.to_json()) + "\n"


def tail_lines(
    store: LedgerStore,
    *,
    since: str | None = None,
    from_position: str | None = None,
    line_format: str = "jsonl",
    follow: bool = False,
    interval: float = TAIL_DEFAULT_INTERVAL,
    hostname: str = "-",
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[str]:
    """`ledger tail`: every row after `from_position` in the global tail order, one line each (tail.py); with
    `follow`, polls every `interval` seconds for rows committed since, and never ends."""
    tail.check_format(line_format)
    after = None if from_position is None else tail.parse_position(from_position)
    since_ts = None if since is None else parse_ts_option("since", since)
    if isinstance(interval, bool) or not 0 < interval <= TAIL_MAX_INTERVAL:
        raise InvalidInput(f"interval: expected seconds in (0, {TAIL_MAX_INTERVAL}], got {interval!r}")
    return _tail(store, after, since_ts, line_format, follow, interval, hostname, sleep)


def _tail(
    store: LedgerStore,
    after: tail.Position | None,
    since: datetime.datetime | None,
    line_format: str,
    follow: bool,
    interval: float,
    hostname: str,
    sleep: Callable[[float], None],
) -> Iterator[str]:
    while True:
        with store.snapshot() as snap:
            batch = snap.tail_rows(after, since, TAIL_BATCH)
        for position, row in batch:
            if line_format == "jsonl":
                yield tail.jsonl_line(position, row)
            else:
                yield tail.syslog_line(position, row, hostname)
            after = position
        if len(batch) < TAIL_BATCH:
            if not follow:
                return
            sleep(interval)


def export_to_file(
    store: LedgerStore,
    output: Path,
    *,
    conversations: Sequence[str] = (),
    since: str | None = None,
    until: str | None = None,
) -> dict[str, Any]:
    """`ledger export --output`: the same lines written mode 0600; returns the file's size and SHA-256."""
    lines = export_lines(store, conversations=conversations, since=since, until=until)
    count = 0

    def encoded() -> Iterator[bytes]:
        nonlocal count
        for line in lines:
            count += 1
            yield line.encode("utf-8")

    size, sha256 = write_private_file(output, encoded())
    return {"output": str(output), "rows": count, "bytes": size, "sha256": sha256}


def migrate(
    target: str | Path,
    *,
    clock: Clock,
    settings: LedgerSettings,
    redactor: LedgerRedactor,
    admin_dsn: str | None = None,
    owner_role: str = DEFAULT_OWNER_ROLE,
    app_role: str = DEFAULT_APP_ROLE,
    grant_app_to: Sequence[str] = (),
    dry_run: bool = False,
    workspace: Path | None = None,
) -> dict[str, Any]:
    """`ledger migrate` (docs/ledger.md §7.4) for a SQLite path or a PostgreSQL DSN; then, given the workspace, the
    import of its sidecar files into the ledger."""
    report = _migrate_schema(
        target,
        clock=clock,
        settings=settings,
        redactor=redactor,
        admin_dsn=admin_dsn,
        owner_role=owner_role,
        app_role=app_role,
        grant_app_to=grant_app_to,
        dry_run=dry_run,
    )
    if not dry_run and workspace is not None and (workspace / sidecars.SIDECAR_DIR).is_dir():
        store = open_store(str(target), redactor=redactor, clock=clock, settings=settings, create=True)
        try:
            report["sidecars"] = import_sidecars(store, workspace)
        finally:
            store.close()
    return report


def import_sidecars(store: LedgerStore, workspace: Path) -> dict[str, Any]:
    """Store every sidecar file of the workspace whose end row names it in the ledger, then delete the file.

    A file is imported only when it matches its end row's meta.sidecar_bytes and meta.sidecar_sha256, which the
    chain covers; a missing or different file stays where it is and is listed, as `ledger verify --sidecars`
    reports it. Files of rows whose result is stored already are left alone.
    """
    with store.snapshot() as snap:
        unstored = snap.unstored_sidecars()
    found: list[tuple[str, Any, str]] = []
    problems = []
    for row in unstored:
        path = row.result_sidecar_path or ""
        legacy = sidecars.read_legacy(workspace, path)
        problem = legacy.problem
        if legacy.content is not None:
            problem = sidecars.content_problem(row.meta_object or {}, legacy.content, path) or ""
        if not problem:
            try:
                found.append((path, row.id, legacy.content.decode("utf-8")))
            except UnicodeDecodeError:
                problem = f"{path} is not UTF-8 text"
        if problem:
            problems.append({"conversation_id": row.conversation_id, "chain_seq": row.chain_seq, "detail": problem})
    for start in range(0, len(found), SIDECAR_IMPORT_BATCH):
        batch = found[start : start + SIDECAR_IMPORT_BATCH]
        store.add_sidecars([(row_id, text) for _, row_id, text in batch])
        for path, _, _ in batch:
            sidecars.remove_legacy(workspace, path)
    return {"imported": len(found), "left": problems}


def _migrate_schema(
    target: str | Path,
    *,
    clock: Clock,
    settings: LedgerSettings,
    redactor: LedgerRedactor,
    admin_dsn: str | None,
    owner_role: str,
    app_role: str,
    grant_app_to: Sequence[str],
    dry_run: bool,
) -> dict[str, Any]:
    if isinstance(target, str) and is_postgres_target(target):
        try:
            report = migrate_postgres(
                target,
                settings=settings,
                admin_dsn=admin_dsn,
                owner_role=owner_role,
                app_role=app_role,
                grant_app_to=grant_app_to,
                dry_run=dry_run,
                redact=redactor.redact,
            )
        except ValueError as exc:
            raise InvalidInput(str(exc)) from exc
        return _migrate_json(
            "postgresql",
            report.from_version,
            report.to_version,
            report.applied,
            {"owner": report.owner, "app": report.app, "created": report.created},
            dry_run,
        )
    if admin_dsn is not None or grant_app_to:
        raise InvalidInput("admin_dsn: roles and --admin-dsn apply to a PostgreSQL ledger only")
    path = Path(target)
    sqlite.check_library()
    roles = {"owner": None, "app": None, "created": []}
    if dry_run:
        from_version, todo = _sqlite_pending(path, settings)
        return _migrate_json("sqlite", from_version, migrations.target_version("sqlite"), todo, roles, True)
    sqlite.create_file(path)
    conn = sqlite.connect(path, busy_timeout_ms=settings.busy_timeout_ms, query_only=False)
    try:
        from_version, applied = sqlite.migrate_connection(conn, clock)
    finally:
        conn.close()
    return _migrate_json("sqlite", from_version, migrations.target_version("sqlite"), applied, roles, False)


def _sqlite_pending(path: Path, settings: LedgerSettings) -> tuple[int, list[migrations.Migration]]:
    if not path.exists():
        return 0, list(migrations.shipped("sqlite"))
    conn = sqlite.connect(path, busy_timeout_ms=settings.busy_timeout_ms, query_only=True)
    try:
        applied = sqlite.applied_migrations(conn)
    finally:
        conn.close()
    return max((a.version for a in applied), default=0), migrations.pending("sqlite", applied)


def _migrate_json(
    backend: str,
    from_version: int,
    to_version: int,
    applied: Sequence[migrations.Migration],
    roles: dict[str, Any],
    dry_run: bool,
) -> dict[str, Any]:
    return {
        "backend": backend,
        "from_version": from_version,
        "to_version": to_version,
        "applied": [{"version": m.version, "name": m.name} for m in applied],
        "roles": roles,
        "dry_run": dry_run,
    }

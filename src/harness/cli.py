"""The `harness` command: one subcommand per operation (generated from surface.py) plus operator commands."""

from __future__ import annotations

import functools
import logging
import shlex
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import click

from harness import __version__
from harness.cliargs import Flag, convert, flags_for, read_json_argument
from harness.config import ConfigError, Overrides, Settings, load_settings
from harness.dispatch import ArgumentError, CallContext, Outcome, Recorder, dispatch, error_outcome
from harness.errors import HarnessError, InternalError, InvalidInput, LedgerUnavailable
from harness.ledger.settings import is_postgres_target
from harness.logs import setup_logging
from harness.outputs import filtered_std_streams
from harness.surface import OPERATIONS, Registry
from harness.text import canonjson

OPERATOR_COMMANDS = ("init", "serve", "ui", "ingest", "pull", "baseline", "store", "ledger", "redact", "schema", "eval")


@dataclass
class App:
    """Per-invocation state: global options, and the settings and context built from them on demand."""

    overrides: Overrides
    conversation: str | None
    pretty: bool
    registry: Registry
    _context: Any = field(default=None, repr=False)
    _recorder: Recorder | None = field(default=None, repr=False)
    # Set when opening the ledger created its SQLite file (`harness init` lists it).
    ledger_created: Path | None = field(default=None, repr=False)

    def settings(self) -> Settings:
        return self.context().settings

    def context(self) -> Any:
        """The handler context (settings, redactor, clock); raises ConfigError on a bad configuration and
        InvalidInput on a bad `--baseline` file (docs/investigate.md §6.3)."""
        if self._context is None:
            from harness.context import build_context
            from harness.outputs import use_redactor

            context = build_context(load_settings(self.overrides))
            use_redactor(context.redactor)
            click_context = click.get_current_context(silent=True)
            if click_context is not None:
                # Services holding connections (a PostgreSQL store's pool) are released when the command ends.
                click_context.call_on_close(context.close)
            if context.settings.baseline_path is not None:
                # Imported only when needed: the store modules add ~0.1 s to every call's start-up.
                from harness.investigate.services import preload

                preload(context)
            self._context = context
        return self._context

    def recorder(self) -> Recorder:
        """The ledger recorder for this invocation; if the ledger cannot be opened, every call is refused with
        ledger_unavailable (exit 3) before its handler runs."""
        if self._recorder is None:
            from harness.ledger.recorder import UnavailableRecorder

            try:
                self._recorder = self.open_recorder()
            except LedgerUnavailable as exc:
                self._recorder = self.traced(UnavailableRecorder(exc.message))
        return self._recorder

    def open_recorder(self) -> Recorder:
        """Open the configured ledger for writing (creating and migrating a SQLite file); raises
        LedgerUnavailable when it is unavailable or at the wrong schema version."""
        from harness.ledger.recorder import open_recorder
        from harness.ledger.settings import is_postgres_target

        context = self.context()
        settings = context.settings
        target = settings.ledger_target
        is_new_file = not is_postgres_target(target) and not Path(target).exists()
        recorder = open_recorder(
            target,
            settings=settings.ledger,
            redactor=context.redactor,
            clock=context.clock,
        )
        click.get_current_context().call_on_close(recorder.close)
        if is_new_file:
            self.ledger_created = Path(target)
        self._recorder = self.traced(recorder)
        return self._recorder

    def traced(self, recorder: Recorder) -> Recorder:
        """`recorder` itself while telemetry is off; else wrapped so every call is exported as a span, with a
        bounded flush when the invocation ends. The SDK is imported only here (README "Tracing")."""
        settings = self.context().settings.telemetry
        if not settings.enabled:
            return recorder
        from harness.telemetry.otel import Telemetry, TracingRecorder

        telemetry = Telemetry(settings)
        click.get_current_context().call_on_close(telemetry.shutdown)
        return TracingRecorder(recorder, telemetry)

    def call_context(self) -> CallContext:
        """Identifiers of this CLI call: conversation from the flag, the environment, or fresh."""
        from harness.ledger.ids import uuid7

        settings = self.settings()
        if self.conversation:
            conversation, source = self.conversation, "flag"
        elif settings.conversation_env:
            conversation, source = settings.conversation_env, "env"
        else:
            conversation, source = str(uuid7()), "generated"
        return CallContext(
            surface="cli",
            conversation_id=conversation,
            conversation_source=source,
            request_id=str(uuid7()),
            tool_call_id=str(uuid7()),
        )

    def emit(self, outcome: Outcome) -> NoReturn:
        """Write the one JSON document of this invocation to stdout and exit with its status."""
        text = canonjson.pretty(outcome.document) if self.pretty else outcome.text
        click.echo(text)
        sys.exit(outcome.exit_code)


def _context_and_call(app: App, name: str) -> tuple[Any, CallContext]:
    """The handler context and this call's ids; a configuration problem ends the invocation with its error."""
    try:
        return app.context(), app.call_context()
    except HarnessError as exc:
        _fail(name, exc, app.pretty)


def _fail(operation: str, exc: HarnessError, pretty: bool = False) -> NoReturn:
    outcome = error_outcome(exc.code, exc.message, operation)
    click.echo(canonjson.pretty(outcome.document) if pretty else outcome.text)
    sys.exit(outcome.exit_code)


class OperationCommand(click.Command):
    """A subcommand generated from an operation's input model."""

    def __init__(self, op_name: str, flags: list[Flag], help_text: str, short_help: str) -> None:
        params: list[click.Parameter] = [
            click.Option(["--input"], default=None, metavar="JSON_OR_FILE",
                         help="The whole argument object at once; explicit flags override its keys."),
        ]
        for flag in flags:
            params.append(_click_option(flag))
        super().__init__(op_name, params=params, help=help_text, short_help=short_help, callback=None)
        self.flags = flags

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["harness.argv"] = list(args)
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            # Usage errors become the JSON error on stdout, recorded like any other refused call.
            ctx.meta["harness.usage_error"] = exc
            return []

    def invoke(self, ctx: click.Context) -> Any:
        _dispatch_call(ctx, self.name or "", lambda: self._arguments(ctx))

    def _arguments(self, ctx: click.Context) -> dict[str, Any] | ArgumentError:
        argv = shlex.join(ctx.meta.get("harness.argv", []))
        usage = ctx.meta.get("harness.usage_error")
        if usage is not None:
            return ArgumentError(raw=argv, error=InvalidInput(_usage_message(usage)))
        try:
            merged: dict[str, Any] = {}
            if ctx.params.get("input") is not None:
                merged = read_json_argument("input", ctx.params["input"], 1_048_576, want_object=True)
            for flag in self.flags:
                value = ctx.params.get(flag.field)
                if value is None or (flag.kind == "str_list" and value == ()):
                    continue
                merged[flag.field] = convert(flag, value)
            return merged
        except InvalidInput as exc:
            return ArgumentError(raw=argv, error=exc)


def _usage_message(exc: click.UsageError) -> str:
    message = exc.format_message()
    param = getattr(exc, "param", None)
    if param is not None and getattr(param, "name", None):
        return f"{param.name}: {message}"
    option = getattr(exc, "option_name", None)
    if option:
        return f"{option.lstrip('-').replace('-', '_')}: {message}"
    return message


def _click_option(flag: Flag) -> click.Option:
    if flag.kind == "bool":
        base = flag.option[2:]
        return click.Option([f"--{base}/--no-{base}", flag.field], default=None, help=flag.help)
    if flag.kind == "str_list":
        return click.Option([flag.option, flag.field], multiple=True, default=(), help=flag.help + " (repeatable)")
    metavar = {"int": "INTEGER", "object": "JSON_OR_FILE"}.get(flag.kind, "TEXT")
    return click.Option([flag.option, flag.field], default=None, metavar=metavar, help=flag.help)


class UnknownOperationCommand(click.Command):
    """Stands in for a subcommand that does not exist, so the call is refused through the dispatcher."""

    def __init__(self, requested: str) -> None:
        super().__init__(requested, context_settings={"ignore_unknown_options": True, "allow_extra_args": True})

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["harness.argv"] = list(args)
        ctx.args = []
        return []

    def invoke(self, ctx: click.Context) -> Any:
        # The dispatcher refuses the name before looking at the arguments, which are only recorded.
        raw = ArgumentError(raw=shlex.join(ctx.meta["harness.argv"]), error=InvalidInput(""))
        _dispatch_call(ctx, self.name or "", lambda: raw)


def _dispatch_call(
    ctx: click.Context, name: str, arguments: Callable[[], dict[str, Any] | ArgumentError]
) -> NoReturn:
    """One operation call from the command line: build the context, dispatch, print, exit."""
    app: App = ctx.find_object(App)
    context, call = _context_and_call(app, name)
    outcome = dispatch(app.registry, name, arguments(), call, context, recorder=app.recorder(), clock=context.clock)
    app.emit(outcome)


class HarnessGroup(click.Group):
    """Operations come from the registry; a name that is neither an operation nor a command is unknown_operation."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*OPERATOR_COMMANDS, *_registry(ctx).names()]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        op = _registry(ctx).get(cmd_name)
        if op is None:
            return None
        impl = op.impl
        help_text = f"{op.title}\n\n{impl.description}"
        return OperationCommand(op.name, flags_for(impl.input_model), help_text, op.title)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        command = self.get_command(ctx, name)
        if command is None and not name.startswith("-"):
            return name, UnknownOperationCommand(name), args[1:]
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        operator = [(n, self.commands[n].get_short_help_str(80)) for n in OPERATOR_COMMANDS if n in self.commands]
        operations = [(op.name, op.title) for op in _registry(ctx)]
        if operations:
            with formatter.section("Operations (MCP tools)"):
                formatter.write_dl(operations)
        with formatter.section("Operator commands"):
            formatter.write_dl(operator)


def _registry(ctx: click.Context) -> Registry:
    # Subcommands resolve before the group callback turns the root `obj` (a Registry or None) into an App.
    obj = ctx.find_root().obj
    if isinstance(obj, App):
        return obj.registry
    return obj if isinstance(obj, Registry) else OPERATIONS


@click.group(cls=HarnessGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harness")
@click.option("--workspace", type=click.Path(path_type=Path), default=None, help="Workspace directory (holds harness.toml, store, ledger).")
@click.option("--store", default=None, metavar="DIR_OR_POSTGRES_DSN",
              help="Store directory (a git repository) or a PostgreSQL store's postgresql:// DSN.")
@click.option("--ledger", default=None, metavar="SQLITE_PATH_OR_POSTGRES_DSN", help="Ledger location.")
@click.option("--rules", type=click.Path(path_type=Path), default=None, help="Rule corpus file (YAML).")
@click.option("--baseline", type=click.Path(path_type=Path), default=None, help="Baseline file read instead of the stored baseline.")
@click.option("--conversation", default=None, metavar="ID", help="Conversation id recorded in the ledger.")
@click.option("--pretty", is_flag=True, default=False, help="Indent the JSON output.")
@click.pass_context
def main_group(
    ctx: click.Context,
    workspace: Path | None,
    store: str | None,
    ledger: str | None,
    rules: Path | None,
    baseline: Path | None,
    conversation: str | None,
    pretty: bool,
) -> None:
    """triage-harness: deterministic tools for LLM security-triage agents.

    Every operation prints exactly one JSON document on stdout.
    """
    ctx.obj = App(
        overrides=Overrides(
            workspace=workspace,
            store=None if store is None or is_postgres_target(store) else Path(store),
            store_url=store if store is not None and is_postgres_target(store) else None,
            ledger=ledger,
            rules=rules,
            baseline=baseline,
        ),
        conversation=conversation,
        pretty=pretty,
        registry=ctx.obj if isinstance(ctx.obj, Registry) else OPERATIONS,
    )


def operator(name: str) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., None]]:
    """Wrap an operator command body: settings errors and harness errors become the JSON error shape."""

    def wrap(body: Callable[..., dict[str, Any]]) -> Callable[..., None]:
        def run(*args: Any, **kwargs: Any) -> None:
            app: App = click.get_current_context().find_object(App)
            try:
                document = body(app, *args, **kwargs)
            except HarnessError as exc:
                _fail(name, exc, app.pretty)
            app.emit(Outcome(text=canonjson.dumps(document), document=document))

        run.__name__ = body.__name__
        run.__doc__ = body.__doc__
        return run

    return wrap


@main_group.command("schema")
@click.argument("operation")
@operator("schema")
def schema_command(app: App, operation: str) -> dict[str, Any]:
    """Print the input and output JSON Schemas of an operation."""
    from harness.schemas import input_schema, output_schema

    op = app.registry.get(operation)
    if op is None:
        from harness.errors import UnknownOperation
        from harness.text.sanitize import echo

        raise UnknownOperation(f"unknown operation {echo(operation)}")
    return {"input": input_schema(op), "output": output_schema(op)}


def main(argv: list[str] | None = None, *, registry: Registry | None = None) -> None:
    """Console entry point: stdout carries exactly one JSON document, even for usage errors. Everything written to
    stdout and stderr while it runs passes the known-secret filter (harness.outputs), whoever writes it."""
    setup_logging()
    with filtered_std_streams():
        try:
            main_group.main(args=argv, prog_name="harness", obj=registry, standalone_mode=False)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            sys.exit(1)
        except click.UsageError as exc:
            command = exc.ctx.command.name if exc.ctx is not None and exc.ctx.command is not None else "harness"
            _fail(command or "harness", InvalidInput(_usage_message(exc)))
        except ConfigError as exc:
            _fail("harness", exc)
        except Exception as exc:  # noqa: BLE001 - the traceback goes to the filtered log, not raw to stderr
            logging.getLogger("harness.cli").exception("unexpected error")
            _fail("harness", InternalError(f"unexpected {type(exc).__name__}; details are in the log"))


def _parse_bind(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidInput(f"http: expected HOST:PORT such as 127.0.0.1:8765, got {value!r}")
    return host.strip("[]"), int(port)


def _parse_toolsets(value: str) -> list[str]:
    from harness.surface import TOOLSETS

    names = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [n for n in names if n not in TOOLSETS]
    if unknown or not names:
        raise InvalidInput(f"toolsets: expected a comma-separated subset of {','.join(TOOLSETS)}, got {value!r}")
    return names


@main_group.command("serve")
@click.option("--http", "http_bind", default=None, metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--allow-remote", is_flag=True, default=False,
              help="Serve a remote bind: needs [serve] allowed_hosts, and HARNESS_SERVE_TOKEN or [serve] auth = oauth.")
@click.option("--toolsets", default="investigate,triage", show_default=True,
              help="Comma-separated toolsets to list and allow.")
@click.option("--check", "check_only", is_flag=True, default=False,
              help="Print the effective serve configuration and exit: 0 when safe to start, 5 when not.")
@click.pass_obj
def serve_command(app: App, http_bind: str | None, allow_remote: bool, toolsets: str, check_only: bool) -> None:
    """Serve the operations as MCP tools (stdio by default)."""
    from harness import mcp_server
    from harness.errors import EXIT_CODES, Refused
    from harness.serve.plan import ServePlan

    try:
        names = _parse_toolsets(toolsets)
        registry = app.registry.subset(names)
        host, port = _parse_bind(http_bind) if http_bind else ("", 0)
        context = app.context()
        settings = context.settings
        plan = ServePlan(settings.serve, tuple(names), host, port, allow_remote, bool(settings.serve_token))
        problems = plan.problems()
        if check_only:
            report = {"ok": not problems, "problems": problems, "serve": plan.describe()}
            click.echo(canonjson.pretty(report) if app.pretty else canonjson.dumps(report))
            sys.exit(EXIT_CODES[Refused.code] if problems else 0)
        if problems:
            raise Refused("; ".join(problems))
        recorder = app.open_recorder()
        if settings.store_url:
            from harness.investigate.services import store

            # A PostgreSQL store is checked before serving: one behind the code's schema stops the server here.
            store(context)
    except HarnessError as exc:
        _fail("serve", exc, app.pretty)

    note = context.workspace_note()
    if note:
        click.echo(f"warning: {note}", err=True)

    limits = None
    if host:
        from harness.serve.limits import CallerLimits

        serve = settings.serve
        limits = CallerLimits(serve.rate_per_minute, serve.burst, serve.max_concurrent_calls)
    server = mcp_server.build_server(
        registry, context, recorder=recorder, transport="http" if host else "stdio", limits=limits
    )
    if not host:
        import anyio

        anyio.run(mcp_server.serve_stdio, server)
        return
    try:
        ui = _ledger_view_app(app)
    except HarnessError as exc:
        _fail("serve", exc, app.pretty)
    click.echo(connect_help(plan.url, settings.workspace, registry), err=True)
    mcp_server.serve_http(server, plan, bearer_token=settings.serve_token, redactor=context.redactor, ui=ui)


def _ledger_view(app: App) -> Any:
    """The ledger web view's reads: the configured ledger opened for reading only, and the workspace of its
    sidecars. A ledger that cannot be opened is ledger_unavailable."""
    from harness.ledger.errors import LedgerError
    from harness.ledger.store import open_store
    from harness.ui.app import LedgerView

    context = app.context()
    settings = context.settings
    try:
        store = open_store(settings.ledger_target, redactor=context.redactor, clock=context.clock,
                           settings=settings.ledger, create=False)
    except LedgerError as exc:
        raise LedgerUnavailable(context.redactor.redact_line(str(exc), 1024)) from exc
    return LedgerView(store, settings.workspace)


def _ledger_view_app(app: App) -> Any:
    from harness.ui.app import ui_app

    return ui_app(_ledger_view(app))


@main_group.command("ui")
@click.option("--http", "http_bind", default="127.0.0.1:8766", show_default=True, metavar="HOST:PORT",
              help="Loopback address to serve the ledger view on (http://HOST:PORT/ui/).")
@click.pass_obj
def ui_command(app: App, http_bind: str) -> None:
    """Serve the ledger web view alone, read-only, on a loopback address (docs/decisions.md, "Ledger web view")."""
    import uvicorn

    from harness.errors import Refused
    from harness.mcp_server import KnownSecretBodies
    from harness.serve.connections import KEEP_ALIVE_S, HeaderDeadlineProtocol
    from harness.serve.origins import HostPolicy, is_loopback
    from harness.ui.app import standalone_app

    try:
        host, port = _parse_bind(http_bind)
        if not is_loopback(host):
            raise Refused(f"refusing to bind {host}: `harness ui` serves loopback only; use `harness serve` for more")
        view = _ledger_view(app)
    except HarnessError as exc:
        _fail("ui", exc, app.pretty)
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"triage-harness {__version__}: ledger view at http://{shown}:{port}/ui/ ({view.store.backend})", err=True)
    asgi = KnownSecretBodies(standalone_app(view, HostPolicy(True)), app.context().redactor)
    uvicorn.run(asgi, host=host, port=port, log_level="warning", log_config=None,
                http=HeaderDeadlineProtocol, timeout_keep_alive=KEEP_ALIVE_S)


def connect_help(url: str, workspace: Path, registry: Registry) -> str:
    """What `harness serve --http` prints on stderr: how to connect an agent and call the CLI."""
    tools = ", ".join(registry.names()) or "(none)"
    return "\n".join([
        f"triage-harness {__version__}: MCP (streamable HTTP) at {url}",
        f"workspace: {workspace}",
        f"tools: {tools}",
        "",
        "Connect an agent, for example Claude Code:",
        f"  claude mcp add --transport http triage-harness {url}",
        "or any MCP client config:",
        f'  {{"mcpServers": {{"triage-harness": {{"type": "http", "url": "{url}"}}}}}}',
        "",
        "Call an operation from the CLI:",
        f"  .venv/bin/harness --workspace {workspace} search_events --actor deploy-svc",
        "",
        "Press Ctrl-C to stop.",
    ])


def _recorded_operator(app: App, tool_name: str, arguments: dict[str, Any], run: Callable[[], dict[str, Any]]) -> None:
    """Run an operator command through the dispatcher's recording path and emit its JSON."""
    from harness.dispatch import run_operator

    context, call = _context_and_call(app, tool_name)
    app.emit(run_operator(tool_name, arguments, call, run, recorder=app.recorder(), clock=context.clock))


@main_group.command("init")
@click.option("--empty", is_flag=True, default=False, help="Create the workspace without sample data.")
@click.pass_obj
def init_command(app: App, empty: bool) -> None:
    """Create the workspace (harness.toml, store, ledger), with sample data unless --empty. Never overwrites."""
    from harness.investigate.services import store
    from harness.workspace import init_workspace

    def run() -> dict[str, Any]:
        context = app.context()
        return init_workspace(context.settings, store(context), empty=empty, ledger_created=app.ledger_created)

    _recorded_operator(app, "cli.init", {"empty": empty}, run)


@main_group.group("ingest")
def ingest_group() -> None:
    """Append records to the store from JSON Lines or JSON files ('-' reads stdin)."""


def _ingest(app: App, stream: str, files: tuple[str, ...], format_name: str = "harness", rejects: str = "") -> None:
    from harness.investigate.services import store
    from harness.store.ingest import ingest_files

    def run() -> dict[str, Any]:
        if not files:
            raise InvalidInput("FILE: at least one file (or - for stdin) is required")
        if not rejects:
            return ingest_files(store(app.context()), stream, list(files), stderr=sys.stderr, format_name=format_name)
        try:
            out = open(rejects, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise InvalidInput(f"--rejects: cannot write {rejects}: {exc.strerror or exc}") from exc
        with out:
            return ingest_files(
                store(app.context()), stream, list(files), stderr=sys.stderr, format_name=format_name, rejects=out
            )

    arguments: dict[str, Any] = {"files": list(files)}
    if stream == "events":
        arguments.update(format=format_name, rejects=rejects)
    _recorded_operator(app, f"cli.ingest_{stream}", arguments, run)


class _FormatChoice(click.Choice):  # type: ignore[type-arg]
    """The `--format` names, read from the adapters registry only when an ingest parses or shows them, so no
    other command loads every adapter (docs/decisions.md, issue 11)."""

    def __init__(self) -> None:
        self.case_sensitive = True

    @functools.cached_property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        from harness.adapters.registry import FORMAT_NAMES

        return FORMAT_NAMES


@ingest_group.command("events")
@click.option(
    "--format",
    "format",
    type=_FormatChoice(),
    default="harness",
    show_default=True,
    help="Input format: the harness's own records, a vendor log format, or auto (recognized per file).",
)
@click.option(
    "--rejects", default="", help="Write each refused record with its reason here (JSON Lines) and ingest the rest."
)
@click.argument("files", nargs=-1)
@click.pass_obj
def ingest_events_command(app: App, format: str, rejects: str, files: tuple[str, ...]) -> None:  # noqa: A002
    """Append events (all-or-nothing unless --rejects; duplicates are skipped). gzip files are read as such."""
    _ingest(app, "events", files, format, rejects)


for _stream in ("findings", "baseline"):

    def _make(stream: str) -> None:
        @ingest_group.command(stream)
        @click.argument("files", nargs=-1)
        @click.pass_obj
        def command(app: App, files: tuple[str, ...]) -> None:
            _ingest(app, stream, files)

        command.help = (
            "Append one baseline object (validated like a --baseline file) as the newest baseline record."
            if stream == "baseline"
            else f"Append {stream} (all-or-nothing; identical duplicates are skipped)."
        )

    _make(_stream)


@main_group.group("pull")
def pull_group() -> None:
    """Pull audit logs live from an API into the store, page by page, resuming from the workspace's cursor."""


def _pull(app: App, tool_name: str, arguments: dict[str, Any], make: Callable[[Any], tuple[Any, Any]]) -> None:
    from harness.investigate.services import store
    from harness.pull import pull
    from harness.pull.cursor import cursor_path

    def run() -> dict[str, Any]:
        context = app.context()
        source, client = make(context)
        return pull(
            source,
            client,
            store(context),
            cursor_path(context.settings.workspace, source.key),
            since=arguments.get("since", ""),
            max_wait_s=context.settings.get("pull", "max_wait_s"),
            stderr=sys.stderr,
        )

    _recorded_operator(app, tool_name, arguments, run)


@pull_group.command("github-audit")
@click.option("--org", required=True, help="GitHub organization whose audit log is pulled.")
@click.option("--since", default="", metavar="TS", help="Start at this time (RFC 3339) when there is no cursor yet.")
@click.pass_obj
def pull_github_audit_command(app: App, org: str, since: str) -> None:
    """GET /orgs/ORG/audit-log from [github] api_url with GITHUB_TOKEN; resumes from the stored cursor."""
    from harness.investigate.services import github
    from harness.pull import github_audit_source

    _pull(app, "cli.pull_github_audit", {"org": org, "since": since},
          lambda context: (github_audit_source(org), github(context)))


@pull_group.command("okta")
@click.option("--domain", required=True, help="Okta org host, e.g. example.okta.com.")
@click.option("--since", default="", metavar="TS", help="Start at this time (RFC 3339) when there is no cursor yet.")
@click.pass_obj
def pull_okta_command(app: App, domain: str, since: str) -> None:
    """GET /api/v1/logs from https://DOMAIN with OKTA_API_TOKEN (SSWS); resumes from the stored cursor."""
    from harness.pull import okta_source
    from harness.pull.services import okta

    _pull(app, "cli.pull_okta", {"domain": domain, "since": since},
          lambda context: (okta_source(domain), okta(context, domain)))


@main_group.group("baseline")
def baseline_group() -> None:
    """Derive baselines from the stored events."""


@baseline_group.command("build")
@click.pass_obj
def baseline_build_command(app: App) -> None:
    """Build a baseline from every stored event, merge it with the last one and append it if it changed."""
    from harness.investigate.services import store
    from harness.store import build_baseline

    _recorded_operator(
        app, "cli.baseline_build", {}, lambda: build_baseline(store(app.context()), stderr=sys.stderr)
    )


class GroupCommand(click.Command):
    """A subcommand of an operator group: usage errors become the JSON error of operation `<group>.<name>`."""

    group = ""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            app = ctx.find_object(App)
            _fail(f"{self.group}.{self.name}", InvalidInput(_usage_message(exc)), app.pretty if app else False)


class StoreCommand(GroupCommand):
    """A `harness store` subcommand."""

    group = "store"


@main_group.group("store")
def store_group() -> None:
    """Create or upgrade a PostgreSQL store and copy stores between backends. These commands are not recorded."""


@store_group.command("migrate", cls=StoreCommand)
@click.option("--admin-dsn", default=None, metavar="DSN",
              help="A superuser or CREATEROLE login that creates the roles and the schema.")
@click.option("--owner-role", default=None, metavar="NAME", help="Owner role (harness_store_owner).")
@click.option("--app-role", default=None, metavar="NAME", help="App role (harness_store_app): INSERT and SELECT only.")
@click.option("--grant-app-to", multiple=True, metavar="LOGIN", help="Make this login a member of the app role.")
@click.option("--dry-run", is_flag=True, default=False, help="Report what would be applied without applying it.")
@click.pass_obj
def store_migrate_command(
    app: App,
    admin_dsn: str | None,
    owner_role: str | None,
    app_role: str | None,
    grant_app_to: tuple[str, ...],
    dry_run: bool,
) -> None:
    """Create or upgrade the schema of the PostgreSQL store named by --store DSN or HARNESS_STORE_URL."""
    from harness.store.pg.commands import migrate_store

    roles = {k: v for k, v in (("owner_role", owner_role), ("app_role", app_role)) if v is not None}
    try:
        context = app.context()
        report = migrate_store(
            context.settings, context.redactor.redact, admin_dsn=admin_dsn, grant_app_to=grant_app_to,
            dry_run=dry_run, **roles,
        )
    except HarnessError as exc:
        _fail("store.migrate", exc, app.pretty)
    _print_document(app, report)


@store_group.command("copy", cls=StoreCommand)
@click.option("--from", "source", required=True, metavar="DIR_OR_DSN", help="The store copied from.")
@click.option("--to", "destination", required=True, metavar="DIR_OR_DSN", help="The store copied to.")
@click.pass_obj
def store_copy_command(app: App, source: str, destination: str) -> None:
    """Copy every stream of one store to another (git to PostgreSQL or back), resumably, and verify counts and
    digests of every stream; exits 1 when the destination differs."""
    from harness.store.backend import open_target
    from harness.store.copy import check_distinct, copy_store

    try:
        check_distinct(source, destination)
        context = app.context()
        redact = context.redactor.redact
        report = copy_store(
            open_target(source, context.settings, redact), open_target(destination, context.settings, redact)
        )
    except HarnessError as exc:
        _fail("store.copy", exc, app.pretty)
    _print_document(app, report)
    sys.exit(0 if report["verified"] else 1)


def _read_inputs(files: tuple[str, ...]) -> list[tuple[str, str]]:
    """(source, text) of each FILE ('-' or none: stdin); bytes that are not UTF-8 become U+FFFD."""
    out = []
    for name in files or ("-",):
        if name == "-":
            data = sys.stdin.buffer.read()
        else:
            try:
                data = Path(name).read_bytes()
            except OSError as exc:
                from harness.text.sanitize import echo

                raise InvalidInput(f"FILE: {echo(name)} cannot be read: {exc.strerror}") from None
        out.append((name, data.decode("utf-8", "replace")))
    return out


def explain_document(redactor: Any, inputs: list[tuple[str, str]], cap_bytes: int) -> dict[str, Any]:
    """Which rules would redact what, by rule id and byte span (line and column too), never the secret."""
    from harness.text.redact import RULESET_VERSION
    from harness.text.redact_text import sanitize

    documents = []
    for source, text in inputs:
        # Spans are offsets into the UTF-8 text the redactor sees (NUL already spelled `[NUL]`).
        body = sanitize(text).encode("utf-8")
        processed = redactor.process(text, cap_bytes)
        spans = []
        for item in redactor.explain(text):
            line_start = body.rfind(b"\n", 0, item.start) + 1
            spans.append({"rule_id": item.rule_id, "start": item.start, "end": item.end,
                          "line": body.count(b"\n", 0, item.start) + 1, "column": item.start - line_start + 1})
        documents.append({"source": source, "bytes": processed.original_bytes, "capped": processed.capped,
                          "stored_bytes": len(processed.text.encode("utf-8")), "rules_hit": list(processed.rules_hit),
                          "spans": spans})
    return {"ruleset_version": RULESET_VERSION, "ruleset_fingerprint": redactor.fingerprint,
            "cap_bytes": cap_bytes, "inputs": documents}


@main_group.command("redact")
@click.argument("files", nargs=-1)
@click.option("--explain", is_flag=True, default=False,
              help="Print one JSON document of rule ids and byte spans instead of the redacted text.")
@click.option("--cap", "cap_bytes", type=click.IntRange(min=0), default=0, show_default=True,
              help="Cap each input to this many UTF-8 bytes first, as a ledger column does (0: no cap).")
@click.pass_obj
def redact_command(app: App, files: tuple[str, ...], explain: bool, cap_bytes: int) -> None:
    """Print FILEs (or stdin) as the ledger would store them: the same rules, workspace rules and known secrets."""
    try:
        redactor = app.context().redactor
        inputs = _read_inputs(files)
    except HarnessError as exc:
        _fail("redact", exc, app.pretty)
    if explain:
        document = explain_document(redactor, inputs, cap_bytes)
        app.emit(Outcome(text=canonjson.dumps(document), document=document))
    for _, text in inputs:
        sys.stdout.write(redactor.redact_for_ledger(text, cap_bytes))
    sys.stdout.flush()


class LedgerCommand(GroupCommand):
    """A `harness ledger` subcommand."""

    group = "ledger"


@main_group.group("ledger")
def ledger_group() -> None:
    """Read, verify, sign, export, tail and migrate the ledger (docs/ledger.md §12). These commands are not recorded."""


def ledger_command(name: str) -> Callable[[Callable[..., int]], Callable[..., None]]:
    """Wrap a `harness ledger` body returning its exit status: harness errors and ledger failures become the
    JSON error of operation `ledger.<name>` (ledger failures as ledger_unavailable, exit 3)."""

    def wrap(body: Callable[..., int]) -> Callable[..., None]:
        def run(*args: Any, **kwargs: Any) -> None:
            from harness.ledger.errors import LedgerError

            app: App = click.get_current_context().find_object(App)
            try:
                status = body(app, *args, **kwargs)
            except HarnessError as exc:
                _fail(f"ledger.{name}", exc, app.pretty)
            except LedgerError as exc:
                message = app.context().redactor.redact_line(str(exc), 1024)
                _fail(f"ledger.{name}", LedgerUnavailable(message), app.pretty)
            sys.exit(status)

        run.__name__ = body.__name__
        run.__doc__ = body.__doc__
        return run

    return wrap


def _print_document(app: App, document: dict[str, Any]) -> None:
    click.echo(canonjson.pretty(document) if app.pretty else canonjson.dumps(document))


def _ledger_store(app: App, *, create: bool = False) -> Any:
    """The configured ledger; reading commands never create it (a missing SQLite file reads as empty)."""
    from harness.ledger.store import open_store

    context = app.context()
    settings = context.settings
    store = open_store(
        settings.ledger_target,
        redactor=context.redactor,
        clock=context.clock,
        settings=settings.ledger,
        create=create,
    )
    click.get_current_context().call_on_close(store.close)
    return store


@ledger_group.command("list", cls=LedgerCommand)
@click.option("--conversation", default=None, metavar="ID", help="Only this conversation.")
@click.option("--tool", default=None, metavar="NAME", help="Only this tool name.")
@click.option("--principal", default=None, metavar="WHO",
              help='Only calls by this principal (an OAuth sub, "bearer" or "local").')
@click.option("--status", default=None, metavar="ok|error|in_flight", help="Only calls with this status.")
@click.option("--since", default=None, metavar="TS", help="Calls started at or after TS (RFC 3339).")
@click.option("--until", default=None, metavar="TS", help="Calls started before TS (RFC 3339).")
@click.option("--in-flight-before", default=None, metavar="TS|DURATION",
              help="In-flight calls started before TS, or longer ago than DURATION (such as 15m).")
@click.option("--conversations", is_flag=True, default=False, help="List conversations instead of calls.")
@click.option("--limit", type=int, default=100, show_default=True, help="At most this many entries (1..10000).")
@ledger_command("list")
def ledger_list_command(app: App, **options: Any) -> int:
    """List calls (each start joined with its end), newest first, or the conversations."""
    from harness.ledger import commands

    store = _ledger_store(app)
    _print_document(app, commands.list_calls(store, clock=app.context().clock, **options))
    return 0


@ledger_group.command("show", cls=LedgerCommand)
@click.argument("conversation_id")
@click.option("--call", default=None, metavar="TOOL_CALL_ID", help="Only the rows of this call.")
@click.option("--after-chain-seq", type=int, default=0, show_default=True, help="Rows after this chain position.")
@click.option("--limit", type=int, default=1000, show_default=True, help="At most this many rows (1..10000).")
@ledger_command("show")
def ledger_show_command(app: App, conversation_id: str, call: str | None, after_chain_seq: int, limit: int) -> int:
    """Show a conversation's full rows in chain order."""
    from harness.ledger import commands

    store = _ledger_store(app)
    _print_document(app, commands.show(store, conversation_id, call=call, after_chain_seq=after_chain_seq, limit=limit))
    return 0


@ledger_group.command("verify", cls=LedgerCommand)
@click.option("--conversation", "conversations", multiple=True, metavar="ID", help="Only these conversations.")
@click.option("--heads", "heads_file", type=click.Path(path_type=Path), default=None,
              help="A heads document exported by `harness ledger head`.")
@click.option("--pubkey", type=click.Path(path_type=Path), default=None,
              help="Require the heads file to be signed by this public key (from `harness ledger keygen`).")
@click.option("--sidecars", is_flag=True, default=False, help="Also check every result sidecar.")
@ledger_command("verify")
def ledger_verify_command(
    app: App, conversations: tuple[str, ...], heads_file: Path | None, pubkey: Path | None, sidecars: bool
) -> int:
    """Check every hash chain (and heads, sidecars); exit 4 when problems are found."""
    from harness.ledger import commands

    store = _ledger_store(app)
    report = commands.verify_ledger(
        store,
        conversations=conversations,
        heads_file=heads_file,
        pubkey=pubkey,
        sidecars=sidecars,
        workspace=app.settings().workspace,
    )
    _print_document(app, report)
    return 0 if report["ok"] else commands.VERIFY_PROBLEMS_EXIT


@ledger_group.command("head", cls=LedgerCommand)
@click.option("--conversation", default=None, metavar="ID", help="Only this conversation.")
@click.option("--output", type=click.Path(path_type=Path), default=None, help="Also write the document here (0600).")
@click.option("--sign", type=click.Path(path_type=Path), default=None, metavar="KEYFILE",
              help="Sign the document with this Ed25519 key (from `harness ledger keygen`).")
@ledger_command("head")
def ledger_head_command(app: App, conversation: str | None, output: Path | None, sign: Path | None) -> int:
    """Export the conversation heads (anchor the digest outside the ledger), signed with --sign."""
    from harness.ledger import commands

    store = _ledger_store(app)
    document = commands.head(store, clock=app.context().clock, conversation=conversation, output=output, sign=sign)
    _print_document(app, document)
    return 0


@ledger_group.command("keygen", cls=LedgerCommand)
@click.option("--out", "output", type=click.Path(path_type=Path), default=Path("ledger-signing.key"),
              show_default=True, help="The private key file (0600); the public key is written beside it as .pub.")
@ledger_command("keygen")
def ledger_keygen_command(app: App, output: Path) -> int:
    """Create an Ed25519 key pair for signing heads; never overwrites, never prints the private key."""
    from harness.ledger import commands

    _print_document(app, commands.keygen(output))
    return 0


@ledger_group.command("export", cls=LedgerCommand)
@click.option("--conversation", "conversations", multiple=True, metavar="ID", help="Only these conversations.")
@click.option("--since", default=None, metavar="TS", help="Rows at or after TS (RFC 3339).")
@click.option("--until", default=None, metavar="TS", help="Rows before TS (RFC 3339).")
@click.option("--output", type=click.Path(path_type=Path), default=None,
              help="Write the JSON Lines here (0600) and print a summary instead.")
@ledger_command("export")
def ledger_export_command(
    app: App, conversations: tuple[str, ...], since: str | None, until: str | None, output: Path | None
) -> int:
    """Export full rows as JSON Lines, by conversation and chain position, from one snapshot."""
    from harness.ledger import commands

    store = _ledger_store(app)
    if output is not None:
        _print_document(
            app, commands.export_to_file(store, output, conversations=conversations, since=since, until=until)
        )
        return 0
    for line in commands.export_lines(store, conversations=conversations, since=since, until=until):
        click.echo(line, nl=False)
    return 0


@ledger_group.command("tail", cls=LedgerCommand)
@click.option("--follow", is_flag=True, default=False, help="Keep polling for new rows; never ends.")
@click.option("--since", default=None, metavar="TS", help="Only rows at or after TS (RFC 3339).")
@click.option("--from", "from_position", default=None, metavar="POSITION",
              help="Resume after this position (the `position` of the last line delivered).")
@click.option("--format", "line_format", default="jsonl", show_default=True, metavar="jsonl|syslog",
              help="JSON Lines (the export's row form plus position) or RFC 5424 syslog.")
@click.option("--interval", type=float, default=1.0, show_default=True, help="Seconds between polls with --follow.")
@ledger_command("tail")
def ledger_tail_command(
    app: App, follow: bool, since: str | None, from_position: str | None, line_format: str, interval: float
) -> int:
    """Stream rows in commit order for a SIEM shipper, each line with a position to resume from."""
    import socket
    import time

    from harness.ledger import commands

    def flush_then_sleep(seconds: float) -> None:
        # A shipper reading a pipe sees each batch before the next poll.
        sys.stdout.flush()
        time.sleep(seconds)

    store = _ledger_store(app)
    lines = commands.tail_lines(
        store,
        since=since,
        from_position=from_position,
        line_format=line_format,
        follow=follow,
        interval=interval,
        hostname=socket.gethostname(),
        sleep=flush_then_sleep,
    )
    try:
        for line in lines:
            sys.stdout.write(line)
    except KeyboardInterrupt:
        return 0
    sys.stdout.flush()
    return 0


@ledger_group.command("migrate", cls=LedgerCommand)
@click.option("--admin-dsn", default=None, metavar="DSN",
              help="PostgreSQL: a superuser or CREATEROLE login that creates the roles and the schema.")
@click.option("--owner-role", default=None, metavar="NAME", help="PostgreSQL owner role (harness_ledger_owner).")
@click.option("--app-role", default=None, metavar="NAME", help="PostgreSQL app role (harness_ledger_app).")
@click.option("--grant-app-to", multiple=True, metavar="LOGIN", help="Make this login a member of the app role.")
@click.option("--dry-run", is_flag=True, default=False, help="Report what would be applied without applying it.")
@ledger_command("migrate")
def ledger_migrate_command(
    app: App,
    admin_dsn: str | None,
    owner_role: str | None,
    app_role: str | None,
    grant_app_to: tuple[str, ...],
    dry_run: bool,
) -> int:
    """Create or upgrade the ledger schema (the only command that creates a ledger)."""
    from harness.ledger import commands

    context = app.context()
    roles = {k: v for k, v in (("owner_role", owner_role), ("app_role", app_role)) if v is not None}
    report = commands.migrate(
        context.settings.ledger_target,
        clock=context.clock,
        settings=context.settings.ledger,
        redactor=context.redactor,
        admin_dsn=admin_dsn,
        grant_app_to=grant_app_to,
        dry_run=dry_run,
        workspace=context.settings.workspace,
        **roles,
    )
    _print_document(app, report)
    return 0


@main_group.group("eval")
def eval_group() -> None:
    """Evaluate an agent over a scenario corpus, graded by the ledger and the resolutions stream (docs/eval.md)."""


@eval_group.command("run")
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--agent", "agent", required=True, metavar="CMD",
              help="The agent command line; it gets HARNESS_EVAL_URL, HARNESS_EVAL_TOKEN and HARNESS_EVAL_TASK.")
@click.option("--passes", default=1, show_default=True, type=int, help="Passes per scenario (1..100).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Directory for report.json, its markdown table and the agent and server logs.")
@operator("cli.eval_run")
def eval_run_command(app: App, scenarios: tuple[Path, ...], agent: str, passes: int, out: Path | None) -> dict[str, Any]:
    """Run each scenario N times against a fresh workspace and MCP server, and print the report (JSON).
    SIGTERM or SIGINT stops the agent and the server and exits 128 + the signal number, with nothing on stdout."""
    from harness.eval.run import Interrupted, run_eval

    try:
        return run_eval(list(scenarios), agent, passes, out)
    except Interrupted as exc:
        click.echo(f"harness eval run: stopped by {signal.Signals(exc.signum).name}; agent and server killed", err=True)
        sys.exit(exc.exit_code)

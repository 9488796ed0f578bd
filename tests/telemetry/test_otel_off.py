"""With no endpoint configured, telemetry costs nothing: the OpenTelemetry SDK is never imported, on a CLI read or
a served MCP call (checked in the subprocess's sys.modules at exit). The MCP SDK itself imports the OpenTelemetry
API (its own instrumentation's no-op hooks), so a server may hold exactly those API modules and nothing more."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from procs import clean_env  # noqa: E402

pytestmark = pytest.mark.anyio

TESTS_DIR = Path(__file__).resolve().parent.parent
# The real entry point, over the test registry or the product's, writing sys.modules' names to a file at exit
# (a SIGTERM from the MCP client's shutdown of a slow server included).
LAUNCHER = (
    "import atexit, json, signal, sys; sys.path.insert(0, {tests!r}); "
    "atexit.register(lambda: open({out!r}, 'w').write(json.dumps(sorted(sys.modules)))); "
    "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0)); "
    "from harness.cli import main; "
    "from testops import REGISTRY; main(sys.argv[1:], registry=REGISTRY) if {test_registry!r} else main()"
)
SDK_PREFIXES = ("opentelemetry.sdk", "opentelemetry.exporter", "opentelemetry.proto", "harness.telemetry.otel")


def launcher(out: Path, *args: str, test_registry: bool) -> list[str]:
    code = LAUNCHER.format(tests=str(TESTS_DIR), out=str(out), test_registry=test_registry)
    return [sys.executable, "-c", code, *args]


def otel_modules(out: Path) -> set[str]:
    return {m for m in json.loads(out.read_text()) if m.startswith(("opentelemetry", "harness.telemetry.otel"))}


def test_a_cli_read_imports_no_opentelemetry_module(tmp_path: Path) -> None:
    out = tmp_path / "modules.json"
    argv = launcher(out, "--workspace", str(tmp_path / "ws"), "search_events", "--actor", "nobody",
                    test_registry=False)
    proc = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)
    assert otel_modules(out) == set()

    # The same read with an endpoint loads the SDK: the check above can see it.
    configured = clean_env(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9", OTEL_SDK_DISABLED="false")
    subprocess.run(argv, capture_output=True, text=True, env=configured, timeout=60)
    assert {"harness.telemetry.otel", "opentelemetry.sdk.trace"} <= otel_modules(out)


async def test_a_served_call_imports_only_what_the_mcp_sdk_imports(tmp_path: Path) -> None:
    baseline = subprocess.run(
        [sys.executable, "-c", "import json, sys, mcp.server.lowlevel, mcp.server.stdio; "
                               "print(json.dumps(sorted(m for m in sys.modules if m.startswith('opentelemetry'))))"],
        capture_output=True, text=True, env=clean_env(), timeout=60, check=True,
    )
    mcp_own = set(json.loads(baseline.stdout))
    assert not any(m.startswith(SDK_PREFIXES) for m in mcp_own)

    out = tmp_path / "modules.json"
    argv = launcher(out, "--workspace", str(tmp_path / "ws"), "serve", test_registry=True)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=clean_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("test_echo", {"required_name": "n"})
    assert not result.is_error
    loaded = otel_modules(out)
    assert not any(m.startswith(SDK_PREFIXES) for m in loaded), loaded
    assert loaded <= mcp_own

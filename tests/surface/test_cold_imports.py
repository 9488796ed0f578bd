"""A cold CLI read imports only what it needs (issue 11 goal 5, docs/decisions.md): checked on a real
`harness` process by the modules loaded when it exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# What a read of the store never uses: the HTTP stack and TLS, the ingest adapters, pull, tracing, the
# review UI and its templates, the MCP server, the triage and AUR code, the PostgreSQL driver.
HEAVY = (
    "httpx",
    "httpx2",
    "ssl",
    "jinja2",
    "opentelemetry",
    "mcp",
    "psycopg",
    "harness.adapters",
    "harness.pull",
    "harness.ui",
    "harness.net.client",
    "harness.mcp_server",
    "harness.triage",
    "harness.aur",
)


def _env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("HARNESS_")}


# Registered before the CLI is imported, so it runs last at exit and sees every module the call loaded, how many
# of the catalogue's detector patterns and of its gate Sets were compiled, and whether the store's
# baseline record was read. (`-X importtime` cannot be used: its report goes to stderr, which the CLI filters for
# secrets mid-run.)
_PROBE = """
import atexit, json, sys
out = sys.argv.pop(1)

def report():
    facts = {"modules": sorted(sys.modules)}
    engine = sys.modules.get("harness.text.redact_engine")
    if engine is not None:
        from harness.text.redact_detectors import detector_regexes
        patterns = [regex for _, detector in engine.ENGINE._detectors for regex in detector_regexes(detector)]
        facts["patterns"] = len(patterns)
        facts["compiled"] = sum(1 for regex in patterns if _compiled(regex))
        sets = [gate.sets() for gate, _ in engine.ENGINE._gates]
        facts["sets_compiled"], facts["sets"] = sum(c for c, _ in sets), sum(n for _, n in sets)
    facts["baseline_parsed"] = bool(parsed)
    open(out, "w").write(json.dumps(facts))

def _compiled(regex):
    try:
        object.__getattribute__(regex, "_re")
    except AttributeError:
        return False
    return True

# Counts the reads of the newest baseline record through the read index (the function itself still runs).
from harness.store import index_queries
parsed = []
_read = index_queries.IndexView.latest_baseline
index_queries.IndexView.latest_baseline = lambda view: parsed.append(1) or _read(view)
atexit.register(report)
from harness.cli import main
main()
"""


def _harness(workspace: Path, *args: str) -> tuple[str, set[str], dict[str, Any]]:
    """Run `harness --workspace W ARGS` cold; its stdout, the modules loaded by its exit and the probe's facts."""
    report = workspace.parent / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(report), "--workspace", str(workspace), *args],
        capture_output=True, text=True, env=_env(), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    facts = json.loads(report.read_text())
    return done.stdout, set(facts["modules"]), facts


def _heavy(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if any(name == top or name.startswith(top + ".") for top in HEAVY))


@pytest.fixture(scope="module")
def sample_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workspace = tmp_path_factory.mktemp("cold") / "ws"
    _harness(workspace, "init")
    return workspace


def test_cold_search_events_imports_nothing_heavy(sample_workspace: Path) -> None:
    out, modules, _ = _harness(sample_workspace, "search_events", "--actor", "deploy-svc", "--limit", "2")
    document = json.loads(out)
    assert document["total"] > 2 and [event["actor"] for event in document["events"]] == ["deploy-svc"] * 2
    assert "harness.investigate.search_events" in modules
    assert _heavy(modules) == []


def test_cold_check_baseline_imports_nothing_heavy(sample_workspace: Path) -> None:
    out, modules, _ = _harness(sample_workspace, "check_baseline", "--entity", "deploy-svc")
    assert json.loads(out)["known"] is True
    assert "harness.investigate.check_baseline" in modules
    assert _heavy(modules) == []


def test_the_check_sees_adapters_where_ingest_needs_them(sample_workspace: Path) -> None:
    # The same probe on a command that does use the adapters registry: the names are listed when it loads.
    _, modules, _ = _harness(sample_workspace, "ingest", "events", "--help")
    assert "harness.adapters.registry" in _heavy(modules)


def test_a_cold_read_compiles_almost_none_of_the_catalogue(sample_workspace: Path) -> None:
    # The redactor runs on every recorded call, but a detector's patterns compile only where its gate matched and a
    # gate's Set of a literal's patterns only where the literal occurs (docs/decisions.md, "Cold start").
    for args in (("search_events", "--actor", "deploy-svc"), ("check_baseline", "--entity", "deploy-svc")):
        _, modules, facts = _harness(sample_workspace, *args)
        assert "harness.text.redact_engine" in modules
        assert facts["patterns"] > 1000 and facts["compiled"] < facts["patterns"] // 20, facts["compiled"]
        assert facts["sets"] > 400 and facts["sets_compiled"] < facts["sets"] // 20, facts["sets_compiled"]


def test_a_cold_check_baseline_reads_the_baseline_index_not_the_record(sample_workspace: Path) -> None:
    _harness(sample_workspace, "baseline", "build")
    out, modules, facts = _harness(sample_workspace, "check_baseline", "--entity", "DEPLOY-SVC")
    assert json.loads(out)["known"] is True
    assert "harness.store.baseline_index" in modules
    assert facts["baseline_parsed"] is False
    # The same read with the index deleted parses the record (and writes the index again).
    next(sample_workspace.glob("*.baseline.sqlite3")).unlink()
    again, _, facts = _harness(sample_workspace, "check_baseline", "--entity", "DEPLOY-SVC")
    assert again == out and facts["baseline_parsed"] is True


def test_help_loads_no_shape_rules_and_still_filters_known_values(tmp_path: Path) -> None:
    # `harness --help` writes only the environment's known values' filter output: the shape catalogue and its RE2
    # Sets (most of a cold start) are not loaded, while a secret-named variable's value is still filtered.
    secret = "cold-help-known-value-7Qx2"
    report = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(report), "--help"],
        capture_output=True, text=True, env={**_env(), "HARNESS_DEMO_TOKEN": secret}, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "search_events" in done.stdout, done.stderr
    modules = set(json.loads(report.read_text())["modules"])
    assert "harness.text.redact_engine" not in modules and "harness.text.redact_rules" not in modules
    # Before the configuration loads (here it cannot: the workspace's file is refused), output is filtered by the
    # environment's values alone.
    bad = tmp_path / f"ws-{secret}"
    bad.mkdir()
    (bad / "harness.toml").write_text("[bogus]\n")
    refused = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "refused.json"), "--workspace", str(bad), "search_events"],
        capture_output=True, text=True, env={**_env(), "HARNESS_DEMO_TOKEN": secret}, check=False,
    )  # fmt: skip
    assert refused.returncode != 0 and "[REDACTED:known_secret]" in refused.stdout, refused.stdout
    assert secret not in refused.stdout + refused.stderr

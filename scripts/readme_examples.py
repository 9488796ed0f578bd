"""Print the README's unchecked example commands with their real output (a maintainer tool, not part of the package).

The checked examples are not here: cog regenerates them in place (scripts/readme_cog.py, `cog -r README.md`).
Operator examples run in a fresh sample workspace (`harness init`), exactly as a new user would.
Network examples (github_actor, fp_agent_verify and the renderers fed by it) run against the test
suite's loopback HTTPS servers, since the README must not depend on GitHub or the AUR being reachable.

    .venv/bin/python scripts/readme_examples.py > /tmp/examples.md
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import trustme

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from tests.aur.fake_aur import FakeAur, install_demo_bin, install_typo  # noqa: E402
from tests.net.https_server import HttpsServer  # noqa: E402
from tests.triage.triage_samples import tp_sample, v0  # noqa: E402
from tests.triage.watcher import make_watcher  # noqa: E402

HARNESS = str(ROOT / ".venv" / "bin" / "harness")


def run(cwd: Path, *args: str, show: bool = True, env: dict[str, str] | None = None) -> str:
    """Run `harness ARGS` in `cwd`; print it as a console block; return stdout."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    environ.update(env or {})
    proc = subprocess.run([HARNESS, *args], cwd=cwd, capture_output=True, text=True, env=environ)
    if show:
        print("```console")
        print("$ harness " + shlex.join(args))
        print(proc.stdout.rstrip("\n"))
        if proc.returncode:
            print(f"$ echo $?\n{proc.returncode}")
        print("```\n")
    return proc.stdout


def investigation(cwd: Path) -> None:
    ws = ("--workspace", ".harness")
    print("## investigation\n")
    run(cwd, *ws, "init")
    print("## operator\n")
    (cwd / "more.jsonl").write_text(
        '{"id":"evt-0029","timestamp":"2026-04-10T11:02:00Z","source":"github","type":"push","actor":"baron",'
        '"payload":{"action":"push","target":"contoso/payments-api"}}\n'
    )
    run(cwd, *ws, "ingest", "events", "more.jsonl")
    run(cwd, *ws, "ingest", "events", "more.jsonl")
    (cwd / "bad.jsonl").write_text('{"id":"EVT-0029","timestamp":"2026-04-10 11:02","actor":"mallory"}\n')
    run(cwd, *ws, "ingest", "events", "bad.jsonl")
    run(cwd, *ws, "baseline", "build")
    run(cwd, *ws, "schema", "check_baseline", show=False)


def github(cwd: Path) -> None:
    print("## github (loopback fake GitHub)\n")
    ca = trustme.CA()
    with HttpsServer(ca) as server:
        from tests.investigate.github_support import json_reply

        server.script("/users/octocat", json_reply({
            "login": "octocat", "type": "User", "name": "The Octocat", "bio": None,
            "html_url": "https://github.com/octocat", "created_at": "2011-01-25T18:44:36Z",
            "public_repos": 8, "followers": 20000,
        }))
        server.script("/users/octocat/events/public", json_reply([
            {"type": "PushEvent", "repo": {"name": "octocat/Hello-World"}, "created_at": "2026-04-09T10:00:00Z"},
        ]))
        ws = cwd / "gh"
        ws.mkdir()
        shutil.copy(server.ca_file, ws / "ca.pem")
        (ws / "harness.toml").write_text(f'[github]\napi_url = "{server.origin}"\nca_file = "ca.pem"\n')
        run(cwd, "--workspace", "gh", "--pretty", "github_actor", "--login", "octocat")


def triage(cwd: Path) -> None:
    print("## triage (loopback fake AUR)\n")
    ca = trustme.CA()
    with HttpsServer(ca) as server:
        ws = cwd / ".harness"
        shutil.copy(server.ca_file, ws / "aur-ca.pem")
        fake = FakeAur(server, cwd / "aur", ws)
        fake.configure()
        make_watcher(cwd / "watcher")
        with (ws / "harness.toml").open("a") as handle:
            handle.write('\n[triage]\nwatcher_repo = "../watcher"\n')
        install_demo_bin(fake)
        install_typo(fake)
        (cwd / "verdict.json").write_text(json.dumps(v0(), indent=2) + "\n")
        print("```json\n" + (cwd / "verdict.json").read_text() + "```\n")
        result = run(cwd, "--workspace", ".harness", "--pretty", "fp_agent_verify", "--verdict", "verdict.json")
        (cwd / "result.json").write_text(result)
        uncertain = {**v0(), "verdict": "uncertain", "proposed_changes": []}
        (cwd / "uncertain.json").write_text(json.dumps(uncertain))
        out = run(cwd, "--workspace", ".harness", "fp_agent_verify", "--verdict", "uncertain.json", show=False)
        print("```console\n$ harness --workspace .harness fp_agent_verify --verdict uncertain.json | jq -c '{verified, reason}'")
        doc = json.loads(out)
        print(json.dumps({"verified": doc["verified"], "reason": doc["reason"]}) + "\n```\n")
        run(cwd, "--workspace", ".harness", "--pretty", "fp_agent_pr", "--result", "result.json",
            "--target-repo", "trustsight", "--date", "2026-01-15")
        (cwd / "tp.json").write_text(json.dumps(tp_sample(), indent=2) + "\n")
        print("```json\n" + (cwd / "tp.json").read_text() + "```\n")
        tp_result = run(cwd, "--workspace", ".harness", "fp_agent_verify", "--verdict", "tp.json", show=False)
        (cwd / "tp-result.json").write_text(tp_result)
        run(cwd, "--workspace", ".harness", "--pretty", "fp_agent_alert", "--result", "tp-result.json")
        run(cwd, "--workspace", ".harness", "fp_agent_alert", "--result", "result.json")
        run(cwd, "--workspace", ".harness", "repo_file", "--path", "src/trustsight/rules.py", "--max-bytes", "128")
        run(cwd, "--workspace", ".harness", "repo_file", "--path", "src/trustsight/../../etc/passwd")


def ledger(cwd: Path) -> None:
    print("## ledger\n")
    ws = ("--workspace", ".harness")
    run(cwd, *ws, "--conversation", "demo-1", "check_baseline", "--entity", "baron", show=False)
    run(cwd, *ws, "--conversation", "demo-1", "search_events", "--actor", "nobody", show=False)
    run(cwd, *ws, "--pretty", "ledger", "list", "--conversation", "demo-1")
    run(cwd, *ws, "--pretty", "ledger", "show", "demo-1", "--limit", "1")
    run(cwd, *ws, "--pretty", "ledger", "verify")
    run(cwd, *ws, "--pretty", "ledger", "head", "--conversation", "demo-1")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        investigation(cwd)
        github(cwd)
        triage(cwd)
        ledger(cwd)


if __name__ == "__main__":
    main()

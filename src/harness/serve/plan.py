"""What `harness serve` is about to do, from its flags and `[serve]`: the problems that stop it, and the
effective configuration `harness serve --check` prints (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.serve.origins import is_loopback
from harness.serve.settings import TOKEN_LEEWAY_S, ServeSettings

MCP_PATH = "/mcp"
# Threads of each open-world tool (github_actor, fp_agent_verify: each its own upstream and its own pool); local
# calls keep anyio's default pool.
OPEN_WORLD_THREADS = 8


@dataclass(frozen=True)
class ServePlan:
    """One start of `harness serve`: stdio when `host` is empty, else streamable HTTP at host:port."""

    settings: ServeSettings
    toolsets: tuple[str, ...]
    host: str = ""
    port: int = 0
    allow_remote: bool = False
    token_set: bool = False

    @property
    def remote(self) -> bool:
        """A remote bind: any non-loopback address, and any address at all under --allow-remote."""
        return bool(self.host) and (self.allow_remote or not is_loopback(self.host))

    @property
    def auth(self) -> str:
        """"oauth" on every bind when configured; otherwise the static bearer token on remote binds only."""
        if not self.host:
            return "none"
        if self.settings.auth == "oauth":
            return "oauth"
        return "bearer" if self.remote else "none"

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}{MCP_PATH}"

    def problems(self) -> list[str]:
        """Why this start would be unsafe; empty when it may go ahead."""
        if not self.host:
            return []
        found = []
        if not self.allow_remote and not is_loopback(self.host):
            found.append(f"refusing to bind {self.host}: a non-loopback address needs --allow-remote")
        if self.remote and not self.settings.allowed_hosts:
            found.append("a remote bind needs [serve] allowed_hosts: the Host values its clients use")
        if self.auth == "bearer" and not self.token_set:
            found.append("--allow-remote needs a bearer token in HARNESS_SERVE_TOKEN (or [serve] auth = \"oauth\")")
        return found

    def describe(self) -> dict[str, Any]:
        """The effective configuration, secrets left out (whether a token is set, never its value)."""
        settings = self.settings
        loopback_only = not self.remote
        return {
            "transport": "http" if self.host else "stdio",
            "bind": {"host": self.host, "port": self.port, "remote": self.remote, "url": self.url if self.host else ""},
            "allowed_hosts": ["(loopback names only)"] if loopback_only else list(settings.allowed_hosts),
            "allowed_origins": ["(loopback origins only)"] if loopback_only else list(settings.allowed_origins),
            "auth": {
                "mode": self.auth,
                "bearer_token_set": self.token_set,
                "issuer": settings.issuer if self.auth == "oauth" else "",
                "audience": settings.audience if self.auth == "oauth" else "",
                "jwks_url": (settings.jwks_url or "(from the issuer's metadata)") if self.auth == "oauth" else "",
                "leeway_s": TOKEN_LEEWAY_S if self.auth == "oauth" else 0,
            },
            "limits": {
                "session_idle_timeout_s": settings.session_idle_timeout_s,
                "max_sessions": settings.max_sessions,
                "open_world_threads": OPEN_WORLD_THREADS,
                "rate_per_minute": settings.rate_per_minute,
                "burst": settings.burst,
                "max_concurrent_calls": settings.max_concurrent_calls,
                "sessions_per_minute": settings.sessions_per_minute,
                "session_burst": settings.session_burst,
                "max_sessions_per_caller": settings.max_sessions_per_caller,
            },
            "toolsets": list(self.toolsets),
        }

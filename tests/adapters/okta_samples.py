"""Okta System Log records written from the published LogEvent schema, each with the event it maps to."""

from __future__ import annotations

from typing import Any

UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Safari/605.1.15"
ADMIN = {"id": "00u1admin0000000000", "type": "User", "alternateId": "admin@example.com", "displayName": "Ada Admin"}
JANE = {"id": "00u1jane00000000000", "type": "User", "alternateId": "jane@example.com", "displayName": "Jane Doe"}
SYSTEM = {
    "id": "0oa1system000000000",
    "type": "SystemPrincipal",
    "alternateId": "system@okta.com",
    "displayName": "Okta System",
}
GROUP = {"id": "00g1eng000000000000", "type": "UserGroup", "alternateId": "unknown", "displayName": "Engineering"}
APP = {"id": "0oa1slack0000000000", "type": "AppInstance", "alternateId": "Slack", "displayName": "Slack"}


def client(ip: str = "198.51.100.20", country: str | None = "United States", city: str = "Seattle") -> dict[str, Any]:
    geo = {"city": city, "state": "Washington", "postalCode": "98101", "geolocation": {"lat": 47.6, "lon": -122.3}}
    if country is not None:
        geo["country"] = country
    return {
        "userAgent": {"rawUserAgent": UA, "os": "Mac OS X", "browser": "SAFARI"},
        "zone": "null",
        "device": "Computer",
        "id": None,
        "ipAddress": ip,
        "geographicalContext": geo,
    }


def record(
    n: int,
    event_type: str,
    actor: dict[str, Any],
    targets: list[dict[str, Any]] | None = None,
    *,
    result: str = "SUCCESS",
    reason: str | None = None,
    cli: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "actor": {**actor, "detailEntry": None},
        "client": cli if cli is not None else client(),
        "authenticationContext": {
            "authenticationProvider": None,
            "credentialProvider": None,
            "credentialType": None,
            "issuer": None,
            "interface": None,
            "authenticationStep": 0,
            "externalSessionId": f"102sess{n:04d}",
        },
        "displayMessage": f"message {n}",
        "eventType": event_type,
        "outcome": {"result": result, "reason": reason},
        "published": f"2026-04-10T10:{n:02d}:00.000Z",
        "securityContext": {
            "asNumber": 64496,
            "asOrg": "example isp",
            "isp": "example isp",
            "domain": "example.net",
            "isProxy": False,
        },
        "severity": "INFO" if result == "SUCCESS" else "WARN",
        "debugContext": {"debugData": {"requestUri": "/api/v1/authn", "threatSuspected": "false"}},
        "legacyEventType": "core.user_auth.login_success",
        "transaction": {"type": "WEB", "id": f"txn{n:04d}", "detail": {}},
        "uuid": f"5b90a94a-d7ba-11ee-{n:04d}-0123456789ab",
        "version": "0",
        "request": {"ipChain": [{"ip": "198.51.100.20", "version": "V4"}]},
        "target": targets,
    }
    rec.update(extra)
    return {key: value for key, value in rec.items() if value is not ...}


def event(
    n: int,
    kind: str,
    actor: dict[str, Any],
    action: str,
    target: str,
    extra: dict[str, str],
    *,
    result: str = "SUCCESS",
    location: str = "US",
    ip: str = "198.51.100.20",
    event_id: str = "",
) -> dict[str, Any]:
    metadata = {
        "ip": ip,
        "user_agent": UA,
        "principal_id": actor["id"],
        "actor_type": actor["type"],
        "display_name": actor["displayName"],
        "outcome": result,
        "severity": "INFO" if result == "SUCCESS" else "WARN",
        "session_id": f"102sess{n:04d}",
        "city": "Seattle",
        "message": f"message {n}",
        "transaction_id": f"txn{n:04d}",
        "location": location,
    }
    metadata.update(extra)
    return {
        "id": event_id or f"okta-5b90a94a-d7ba-11ee-{n:04d}-0123456789ab",
        "timestamp": f"2026-04-10T10:{n:02d}:00Z",
        "source": "okta",
        "type": kind,
        "actor": actor["alternateId"],
        "org": "",
        "payload": {"action": action, "target": target, "metadata": {k: v for k, v in metadata.items() if v}},
    }


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    c: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def add(rec: dict[str, Any], ev: dict[str, Any]) -> None:
        c.append((rec, ev))

    add(record(1, "user.session.start", JANE), event(1, "login", JANE, "user.session.start", "", {}))
    add(
        record(
            2,
            "user.session.start",
            JANE,
            result="FAILURE",
            reason="INVALID_CREDENTIALS",
            cli=client("203.0.113.99", "Germany", "Seattle"),
        ),
        event(
            2,
            "login_failure",
            JANE,
            "user.session.start",
            "",
            {"reason": "INVALID_CREDENTIALS"},
            result="FAILURE",
            location="DE",
            ip="203.0.113.99",
        ),
    )
    add(
        record(3, "user.session.start", JANE, result="DENY", reason="Sign-on policy evaluation resulted in DENY"),
        event(
            3,
            "login_failure",
            JANE,
            "user.session.start",
            "",
            {"reason": "Sign-on policy evaluation resulted in DENY"},
            result="DENY",
        ),
    )
    add(
        record(4, "user.authentication.sso", JANE, [APP]),
        event(4, "login", JANE, "user.authentication.sso", "Slack", {"app": "Slack"}),
    )
    add(
        record(5, "user.authentication.auth_via_mfa", JANE),
        event(5, "login", JANE, "user.authentication.auth_via_mfa", "", {}),
    )
    add(
        record(6, "user.authentication.auth_via_mfa", JANE, result="FAILURE", reason="INVALID_CREDENTIALS"),
        event(
            6,
            "login_failure",
            JANE,
            "user.authentication.auth_via_mfa",
            "",
            {"reason": "INVALID_CREDENTIALS"},
            result="FAILURE",
        ),
    )
    add(record(7, "user.authentication.verify", JANE), event(7, "login", JANE, "user.authentication.verify", "", {}))
    jane_t = {**JANE, "detailEntry": None}
    add(
        record(8, "user.mfa.factor.activate", JANE, [jane_t]),
        event(
            8, "mfa_change", JANE, "user.mfa.factor.activate", "jane@example.com", {"target_user": "jane@example.com"}
        ),
    )
    add(
        record(9, "user.mfa.factor.deactivate", ADMIN, [jane_t]),
        event(
            9,
            "mfa_change",
            ADMIN,
            "user.mfa.factor.deactivate",
            "jane@example.com",
            {"target_user": "jane@example.com"},
        ),
    )
    add(
        record(10, "user.mfa.factor.reset_all", ADMIN, [jane_t]),
        event(
            10,
            "mfa_change",
            ADMIN,
            "user.mfa.factor.reset_all",
            "jane@example.com",
            {"target_user": "jane@example.com"},
        ),
    )
    add(
        record(11, "user.account.update_password", JANE, [jane_t]),
        event(
            11,
            "password_change",
            JANE,
            "user.account.update_password",
            "jane@example.com",
            {"target_user": "jane@example.com"},
        ),
    )
    add(
        record(12, "user.account.reset_password", ADMIN, [jane_t]),
        event(
            12,
            "password_change",
            ADMIN,
            "user.account.reset_password",
            "jane@example.com",
            {"target_user": "jane@example.com"},
        ),
    )
    new_user = {
        "id": "00u1newhire00000000",
        "type": "User",
        "alternateId": "newhire@example.com",
        "displayName": "New Hire",
    }
    add(
        record(13, "user.lifecycle.create", ADMIN, [new_user]),
        event(
            13,
            "user_created",
            ADMIN,
            "user.lifecycle.create",
            "newhire@example.com",
            {"target_user": "newhire@example.com"},
        ),
    )
    add(
        record(14, "user.lifecycle.delete.initiated", ADMIN, [new_user]),
        event(
            14,
            "user_deleted",
            ADMIN,
            "user.lifecycle.delete.initiated",
            "newhire@example.com",
            {"target_user": "newhire@example.com"},
        ),
    )
    add(
        record(15, "user.lifecycle.deactivate", ADMIN, [jane_t]),
        event(
            15,
            "user_disabled",
            ADMIN,
            "user.lifecycle.deactivate",
            "jane@example.com",
            {"target_user": "jane@example.com"},
        ),
    )
    add(
        record(16, "user.lifecycle.suspend", ADMIN, [jane_t]),
        event(
            16,
            "user_disabled",
            ADMIN,
            "user.lifecycle.suspend",
            "jane@example.com",
            {"target_user": "jane@example.com"},
        ),
    )
    add(
        record(17, "user.lifecycle.activate", ADMIN, [jane_t]),
        event(
            17,
            "user_enabled",
            ADMIN,
            "user.lifecycle.activate",
            "jane@example.com",
            {"target_user": "jane@example.com"},
        ),
    )
    add(
        record(18, "user.account.lock", SYSTEM, [jane_t], cli=client("10.0.0.1")),
        event(
            18,
            "user_disabled",
            SYSTEM,
            "user.account.lock",
            "jane@example.com",
            {"target_user": "jane@example.com"},
            ip="10.0.0.1",
        ),
    )
    add(
        record(19, "user.account.unlock", ADMIN, [jane_t]),
        event(
            19, "user_enabled", ADMIN, "user.account.unlock", "jane@example.com", {"target_user": "jane@example.com"}
        ),
    )
    add(
        record(20, "group.user_membership.add", ADMIN, [jane_t, GROUP]),
        event(
            20,
            "member_added",
            ADMIN,
            "group.user_membership.add",
            "jane@example.com",
            {"target_user": "jane@example.com", "group": "Engineering"},
        ),
    )
    add(
        record(21, "group.user_membership.remove", ADMIN, [jane_t, GROUP]),
        event(
            21,
            "member_removed",
            ADMIN,
            "group.user_membership.remove",
            "jane@example.com",
            {"target_user": "jane@example.com", "group": "Engineering"},
        ),
    )
    add(
        record(22, "application.user_membership.add", ADMIN, [jane_t, APP]),
        event(
            22,
            "member_added",
            ADMIN,
            "application.user_membership.add",
            "jane@example.com",
            {"target_user": "jane@example.com", "app": "Slack"},
        ),
    )
    add(
        record(
            23,
            "user.account.privilege.grant",
            ADMIN,
            [jane_t],
            debugContext={"debugData": {"privilegeGranted": "Super administrator"}},
        ),
        event(
            23,
            "role_assignment",
            ADMIN,
            "user.account.privilege.grant",
            "jane@example.com",
            {"target_user": "jane@example.com", "role": "Super administrator"},
        ),
    )
    add(
        record(
            24,
            "user.account.privilege.revoke",
            ADMIN,
            [jane_t],
            debugContext={"debugData": {"privilegeRevoked": "Super administrator"}},
        ),
        event(
            24,
            "role_removal",
            ADMIN,
            "user.account.privilege.revoke",
            "jane@example.com",
            {"target_user": "jane@example.com"},
        ),
    )
    token = {"id": "00T1token0000000000", "type": "Token", "alternateId": "unknown", "displayName": "terraform"}
    add(
        record(25, "system.api_token.create", ADMIN, [token]),
        event(25, "iam_change", ADMIN, "system.api_token.create", "terraform", {}),
    )
    add(
        record(26, "application.lifecycle.create", ADMIN, [APP]),
        event(26, "service_principal_created", ADMIN, "application.lifecycle.create", "Slack", {"app": "Slack"}),
    )
    policy = {
        "id": "00p1policy000000000",
        "type": "PolicyEntity",
        "alternateId": "unknown",
        "displayName": "Default Policy",
    }
    add(
        record(27, "policy.lifecycle.update", ADMIN, [policy]),
        event(27, "config_change", ADMIN, "policy.lifecycle.update", "Default Policy", {}),
    )
    add(
        record(28, "security.threat.detected", SYSTEM, cli=client("192.0.2.66", "Russia")),
        event(28, "other", SYSTEM, "security.threat.detected", "", {}, location="RU", ip="192.0.2.66"),
    )
    no_id = record(29, "user.session.end", JANE)
    del no_id["uuid"]
    add(no_id, event(29, "other", JANE, "user.session.end", "", {}, event_id="okta-sha256-"))
    bare = record(
        30, "user.session.start", JANE, cli={"ipAddress": None, "userAgent": None, "geographicalContext": None}
    )
    add(bare, {**event(30, "login", JANE, "user.session.start", "", {}, location="", ip="198.51.100.20")})
    for key in ("user_agent", "city"):
        del bare_event(c)[key]
    add(
        record(31, "user.session.start", JANE, cli=client("192.0.2.10", "Atlantis")),
        event(31, "login", JANE, "user.session.start", "", {}, location="", ip="192.0.2.10"),
    )
    app_actor = {"id": "0oa1svc000000000000", "type": "PublicClientApp", "alternateId": "", "displayName": "ci-app"}
    add(
        record(32, "app.oauth2.as.token.grant.access_token", app_actor),
        {
            **event(
                32, "other", {**app_actor, "alternateId": "ci-app"}, "app.oauth2.as.token.grant.access_token", "", {}
            )
        },
    )
    return c


def bare_event(cases: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, str]:
    """The metadata of the last case (the one whose client is empty), to drop what it lacks."""
    return cases[-1][1]["payload"]["metadata"]


CASES = _cases()

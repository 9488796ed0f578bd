"""Slack Audit Logs API entries written from the published audit-log schema, each with the event it maps to."""

from __future__ import annotations

from typing import Any

BASE = 1775815200  # 2026-04-10T10:00:00Z
UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Slack/4.38"
ME = {"id": "W0A1B2C3D", "name": "priya", "email": "priya@example.com", "team": "T0ENT0001"}
ADMIN = {"id": "W0ADM1N01", "name": "grace", "email": "grace@example.com", "team": "T0ENT0001"}
WORKSPACE = {"type": "workspace", "id": "T0WS00001", "name": "Contoso Eng", "domain": "contoso-eng"}


def user(name: str, uid: str) -> dict[str, Any]:
    return {"id": uid, "name": name, "email": f"{name}@example.com", "team": "T0ENT0001"}


def entry(n: int, action: str, entity: dict[str, Any], *, actor: Any = ME, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id": f"0123a45b-6c7d-4e8f-9a0b-{n:012d}",
        "date_create": BASE + n * 60,
        "action": action,
        "actor": {"type": "user", "user": actor},
        "entity": entity,
        "context": {
            "location": WORKSPACE,
            "ua": UA,
            "ip_address": "198.51.100.61",
            "session_id": f"{7000000000 + n}",
        },
    }
    rec.update(extra)
    return {key: value for key, value in rec.items() if value is not ...}


def event(
    n: int, kind: str, action: str, target: str, extra: dict[str, str], *, actor: dict[str, str] = ME, **over: Any
) -> dict[str, Any]:
    meta = {
        "ip": "198.51.100.61",
        "user_agent": UA,
        "session_id": f"{7000000000 + n}",
        "principal_id": actor["id"],
        "actor_type": "user",
        "display_name": actor["name"],
        "workspace": "Contoso Eng",
    }
    meta.update(extra)
    return {
        "id": over.get("event_id", f"slack-audit-0123a45b-6c7d-4e8f-9a0b-{n:012d}"),
        "timestamp": f"2026-04-10T{10 + n // 60:02d}:{n % 60:02d}:00Z",
        "source": "slack",
        "type": kind,
        "actor": over.get("actor_name", actor["email"]),
        "org": over.get("org", "contoso-eng"),
        "payload": {"action": action, "target": target, "metadata": dict(sorted((k, v) for k, v in meta.items() if v))},
    }


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    c: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def add(rec: dict[str, Any], ev: dict[str, Any]) -> None:
        c.append((rec, ev))

    def on_user(who: dict[str, str]) -> dict[str, Any]:
        return {"type": "user", "user": who}

    def user_meta(who: dict[str, str]) -> dict[str, str]:
        return {"entity_type": "user", "target_user": who["email"]}

    add(entry(0, "user_login", on_user(ME)), event(0, "login", "user_login", ME["email"], user_meta(ME)))
    add(
        entry(1, "user_login_failed", on_user(ME)),
        event(1, "login_failure", "user_login_failed", ME["email"], user_meta(ME)),
    )
    bob = user("bob", "W0B0B0001")
    add(
        entry(2, "user_login", on_user(bob), actor=bob),
        event(2, "login", "user_login", bob["email"], user_meta(bob), actor=bob),
    )
    new = user("newhire", "W0NEW0001")
    add(
        entry(3, "user_created", on_user(new), actor=ADMIN),
        event(3, "user_created", "user_created", new["email"], user_meta(new), actor=ADMIN),
    )
    guest = {"id": "W0GST0001", "name": "vendor-sam", "team": "T0ENT0001"}
    add(
        entry(4, "guest_created", {"type": "user", "user": guest}, actor=ADMIN),
        event(
            4,
            "user_created",
            "guest_created",
            "vendor-sam",
            {"entity_type": "user", "target_user": "vendor-sam"},
            actor=ADMIN,
        ),
    )
    for n, action, kind in [
        (5, "user_deactivated", "user_disabled"),
        (6, "user_reactivated", "user_enabled"),
        (7, "user_email_updated", "iam_change"),
        (8, "user_session_reset_by_admin", "iam_change"),
    ]:
        add(
            entry(n, action, on_user(bob), actor=ADMIN),
            event(n, kind, action, bob["email"], user_meta(bob), actor=ADMIN),
        )
    for n, action, kind, role in [
        (9, "role_change_to_admin", "role_assignment", "admin"),
        (10, "role_change_to_owner", "role_assignment", "owner"),
        (11, "role_change_to_user", "role_removal", "user"),
        (12, "role_change_to_guest", "role_removal", "guest"),
    ]:
        add(
            entry(n, action, on_user(bob), actor=ADMIN, details={"previous_role": "user"}),
            event(n, kind, action, bob["email"], {**user_meta(bob), "role": role}, actor=ADMIN),
        )
    sec = {
        "type": "channel",
        "channel": {
            "id": "C0SEC0001",
            "name": "security-alerts",
            "privacy": "private",
            "is_shared": False,
            "is_org_shared": False,
        },
    }
    chan = {"entity_type": "channel", "channel": "security-alerts"}
    add(entry(13, "user_channel_join", sec), event(13, "member_added", "user_channel_join", "security-alerts", chan))
    add(
        entry(14, "user_channel_leave", sec), event(14, "member_removed", "user_channel_leave", "security-alerts", chan)
    )
    add(
        entry(15, "private_channel_created", sec),
        event(15, "config_change", "private_channel_created", "security-alerts", chan),
    )
    ug = {"type": "usergroup", "usergroup": {"id": "S0ONCALL1", "name": "oncall"}}
    add(
        entry(16, "user_added_to_usergroup", ug, actor=ADMIN),
        event(16, "member_added", "user_added_to_usergroup", "oncall", {"entity_type": "usergroup"}, actor=ADMIN),
    )
    add(
        entry(17, "user_removed_from_usergroup", ug, actor=ADMIN),
        event(17, "member_removed", "user_removed_from_usergroup", "oncall", {"entity_type": "usergroup"}, actor=ADMIN),
    )
    app = {
        "type": "app",
        "app": {
            "id": "A0APP0001",
            "name": "Jira Cloud",
            "is_distributed": True,
            "is_directory_approved": True,
            "scopes": ["channels:read", "chat:write"],
        },
    }
    app_meta = {"entity_type": "app", "app": "Jira Cloud"}
    add(
        entry(18, "app_installed", app, actor=ADMIN),
        event(18, "service_principal_created", "app_installed", "Jira Cloud", app_meta, actor=ADMIN),
    )
    add(
        entry(19, "app_approved", app, actor=ADMIN),
        event(19, "service_principal_created", "app_approved", "Jira Cloud", app_meta, actor=ADMIN),
    )
    add(
        entry(20, "app_scopes_expanded", app, actor=ADMIN, details={"new_scope": ["files:read"]}),
        event(20, "permission_change", "app_scopes_expanded", "Jira Cloud", app_meta, actor=ADMIN),
    )
    add(entry(21, "bot_token_upgraded", app), event(21, "iam_change", "bot_token_upgraded", "Jira Cloud", app_meta))
    ws = {"type": "workspace", "workspace": {"id": "T0WS00001", "name": "Contoso Eng", "domain": "contoso-eng"}}
    ws_meta = {"entity_type": "workspace"}
    add(
        entry(22, "pref.sso_setting_changed", ws, actor=ADMIN, details={"new_value": "required"}),
        event(22, "config_change", "pref.sso_setting_changed", "Contoso Eng", ws_meta, actor=ADMIN),
    )
    add(
        entry(23, "pref.two_factor_auth_changed", ws, actor=ADMIN),
        event(23, "mfa_change", "pref.two_factor_auth_changed", "Contoso Eng", ws_meta, actor=ADMIN),
    )
    ent = {"type": "enterprise", "enterprise": {"id": "E0ENT0001", "name": "Contoso", "domain": "contoso"}}
    add(
        entry(24, "user_added_to_workspace", ent, actor=ADMIN),
        event(24, "member_added", "user_added_to_workspace", "Contoso", {"entity_type": "enterprise"}, actor=ADMIN),
    )
    f = {"type": "file", "file": {"id": "F0FILE001", "name": "payroll.xlsx", "filetype": "xlsx", "title": "Payroll"}}
    fm = {"entity_type": "file"}
    add(entry(25, "file_downloaded", f), event(25, "api_call", "file_downloaded", "payroll.xlsx", fm))
    add(
        entry(26, "file_public_link_created", f),
        event(26, "config_change", "file_public_link_created", "payroll.xlsx", fm),
    )
    add(entry(27, "file_shared", f), event(27, "other", "file_shared", "payroll.xlsx", fm))
    add(
        entry(28, "anomaly", on_user(ME), details={"reason": ["asn", "ip_address"]}),
        event(28, "admin_action", "anomaly", ME["email"], user_meta(ME)),
    )
    bare = entry(29, "user_login", on_user(bob), actor=bob, id=..., context={"location": WORKSPACE})
    add(
        bare,
        {
            **event(29, "login", "user_login", bob["email"], user_meta(bob), actor=bob, event_id="slack-audit-sha256-"),
            "payload": {
                "action": "user_login",
                "target": bob["email"],
                "metadata": dict(
                    sorted(
                        {
                            "principal_id": bob["id"],
                            "actor_type": "user",
                            "display_name": "bob",
                            "workspace": "Contoso Eng",
                            **user_meta(bob),
                        }.items()
                    )
                ),
            },
        },
    )
    noname = {"id": "W0NOMAIL1"}
    rec = entry(
        30,
        "user_login",
        {"type": "user", "user": noname},
        actor=noname,
        context={"location": {"type": "enterprise", "id": "E0ENT0001", "name": "Contoso"}, "ip_address": "192.0.2.9"},
    )
    add(
        rec,
        {
            **event(
                30,
                "login",
                "user_login",
                "W0NOMAIL1",
                {},
                actor={"id": "W0NOMAIL1", "name": "", "email": ""},
                actor_name="W0NOMAIL1",
                org="E0ENT0001",
            ),
            "payload": {
                "action": "user_login",
                "target": "W0NOMAIL1",
                "metadata": {
                    "actor_type": "user",
                    "ip": "192.0.2.9",
                    "principal_id": "W0NOMAIL1",
                    "workspace": "Contoso",
                    "entity_type": "user",
                    "target_user": "W0NOMAIL1",
                },
            },
        },
    )
    add(entry(31, "user_login", on_user(ME)), event(31, "login", "user_login", ME["email"], user_meta(ME)))
    return c


CASES = _cases()

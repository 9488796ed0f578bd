"""Google Workspace Admin SDK Reports activities written from the published activities resource, each with the
events it fans out to (one per nested event)."""

from __future__ import annotations

from typing import Any

CUSTOMER = "C03az79cb"


def stamp(n: int) -> str:
    return f"2026-04-10T10:{n:02d}:00Z"


def param(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"name": name, "boolValue": value}
    if isinstance(value, int):
        return {"name": name, "intValue": str(value)}
    if isinstance(value, list):
        return {"name": name, "multiValue": value}
    return {"name": name, "value": value}


def activity(
    n: int,
    app: str,
    events: list[tuple[str, str, dict[str, Any]]],
    *,
    actor: Any = None,
    qualifier: Any = "",
    ip: Any = "198.51.100.23",
    region: Any = "US",
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "kind": "admin#reports#activity",
        "id": {
            "time": f"2026-04-10T10:{n:02d}:00.000Z",
            "uniqueQualifier": qualifier if qualifier != "" else str(-5812400000000000000 + n * 7919),
            "applicationName": app,
            "customerId": CUSTOMER,
        },
        "etag": f'"e{n}/abc"',
        "actor": actor if actor is not None else {"email": "jane@example.com", "profileId": "104857600000000000001"},
        "ipAddress": ip,
        "networkInfo": {"regionCode": region},
        "events": [
            {"type": kind, "name": name, "parameters": [param(k, v) for k, v in params.items()]}
            for kind, name, params in events
        ],
    }
    if qualifier is ...:
        del rec["id"]["uniqueQualifier"]
    for key, value in (("ipAddress", ip), ("networkInfo", region)):
        if value is ...:
            del rec[key]
    return rec


def expected(
    rec: dict[str, Any], index: int, kind: str, target: str, extra: dict[str, str], *, actor: str = "jane@example.com"
) -> dict[str, Any]:
    ev = rec["events"][index]
    qualifier = rec["id"].get("uniqueQualifier")
    meta: dict[str, str] = {
        "ip": rec.get("ipAddress", ...),
        "location": rec.get("networkInfo", {}).get("regionCode", ...)
        if isinstance(rec.get("networkInfo"), dict)
        else ...,
        "principal_id": rec["actor"].get("profileId", ...),
        "actor_type": rec["actor"].get("callerType", ...),
        "application": rec["id"]["applicationName"],
        "event_category": ev["type"],
        "event_index": str(index),
    }
    meta.update(extra)
    return {
        "id": f"google-workspace-{qualifier}-{index}" if qualifier else "google-workspace-sha256-",
        "timestamp": rec["id"]["time"].replace(".000Z", "Z"),
        "source": "google-workspace",
        "type": kind,
        "actor": actor,
        "org": CUSTOMER,
        "payload": {
            "action": ev["name"],
            "target": target,
            "metadata": dict(sorted((k, v) for k, v in meta.items() if v is not ... and v != "")),
        },
    }


def _cases() -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    c: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []

    def add(rec: dict[str, Any], *evs: dict[str, Any]) -> None:
        c.append((rec, list(evs)))

    ok = {"login_type": "google_password", "login_challenge_method": ["password"], "is_suspicious": False}
    r = activity(0, "login", [("login", "login_success", ok)])
    add(
        r,
        expected(
            r,
            0,
            "login",
            "",
            {
                "login_type": "google_password",
                "param.login_type": "google_password",
                "param.login_challenge_method": "password",
                "param.is_suspicious": "false",
            },
        ),
    )
    bad = {"login_type": "google_password", "login_failure_type": "login_failure_invalid_password"}
    r = activity(
        1,
        "login",
        [("login", "login_failure", bad)],
        actor={"email": "bob@example.com"},
        region="DE",
        ip="203.0.113.77",
    )
    add(
        r,
        expected(
            r,
            0,
            "login_failure",
            "",
            {
                "login_type": "google_password",
                "reason": "login_failure_invalid_password",
                "param.login_type": "google_password",
                "param.login_failure_type": "login_failure_invalid_password",
            },
            actor="bob@example.com",
        ),
    )
    two = [
        (
            "login",
            "login_verification",
            {"login_challenge_method": ["idv_preregistered_phone"], "login_challenge_status": "Challenge Passed"},
        ),
        ("login", "login_success", {"login_type": "saml"}),
    ]
    r = activity(2, "login", two)
    add(
        r,
        expected(
            r,
            0,
            "login",
            "",
            {
                "param.login_challenge_method": "idv_preregistered_phone",
                "param.login_challenge_status": "Challenge Passed",
            },
        ),
        expected(r, 1, "login", "", {"login_type": "saml", "param.login_type": "saml"}),
    )
    r = activity(3, "login", [("login", "logout", {"login_type": "google_password"})])
    add(r, expected(r, 0, "other", "", {"login_type": "google_password", "param.login_type": "google_password"}))
    r = activity(
        4,
        "login",
        [("account_warning", "suspicious_login", {"affected_email_address": "jane@example.com"})],
        region="BR",
    )
    add(r, expected(r, 0, "login", "", {"param.affected_email_address": "jane@example.com"}))
    r = activity(5, "login", [("2sv_change", "2sv_enroll", {})])
    add(r, expected(r, 0, "mfa_change", "", {}))
    r = activity(6, "login", [("2sv_change", "2sv_disable", {})], actor={"email": "bob@example.com", "profileId": "2"})
    add(r, expected(r, 0, "mfa_change", "", {}, actor="bob@example.com"))
    r = activity(7, "login", [("password_change", "password_edit", {})])
    add(r, expected(r, 0, "password_change", "", {}))
    admin = {"email": "admin@example.com", "profileId": "104857600000000000009", "callerType": "USER"}
    u = {"USER_EMAIL": "newhire@example.com"}
    r = activity(8, "admin", [("USER_SETTINGS", "CREATE_USER", u)], actor=admin)
    add(
        r,
        expected(
            r,
            0,
            "user_created",
            "newhire@example.com",
            {"target_user": "newhire@example.com", "param.USER_EMAIL": "newhire@example.com"},
            actor="admin@example.com",
        ),
    )
    tu = {"target_user": "newhire@example.com", "param.USER_EMAIL": "newhire@example.com"}
    for n, name, kind in [
        (9, "DELETE_USER", "user_deleted"),
        (10, "SUSPEND_USER", "user_disabled"),
        (11, "UNSUSPEND_USER", "user_enabled"),
        (12, "CHANGE_PASSWORD", "password_change"),
        (13, "TURN_OFF_2_STEP_VERIFICATION", "mfa_change"),
    ]:
        r = activity(n, "admin", [("USER_SETTINGS", name, u)], actor=admin)
        add(r, expected(r, 0, kind, "newhire@example.com", tu, actor="admin@example.com"))
    role = {"ROLE_NAME": "_SEED_ADMIN_ROLE", "USER_EMAIL": "bob@example.com"}
    rm = {
        "role": "_SEED_ADMIN_ROLE",
        "target_user": "bob@example.com",
        "param.ROLE_NAME": "_SEED_ADMIN_ROLE",
        "param.USER_EMAIL": "bob@example.com",
    }
    r = activity(14, "admin", [("DELEGATED_ADMIN_SETTINGS", "ASSIGN_ROLE", role)], actor=admin)
    add(r, expected(r, 0, "role_assignment", "bob@example.com", rm, actor="admin@example.com"))
    r = activity(15, "admin", [("DELEGATED_ADMIN_SETTINGS", "UNASSIGN_ROLE", role)], actor=admin)
    add(r, expected(r, 0, "role_removal", "bob@example.com", rm, actor="admin@example.com"))
    r = activity(
        16,
        "admin",
        [("DELEGATED_ADMIN_SETTINGS", "GRANT_ADMIN_PRIVILEGE", {"USER_EMAIL": "carol@example.com"})],
        actor=admin,
    )
    add(
        r,
        expected(
            r,
            0,
            "role_assignment",
            "carol@example.com",
            {"target_user": "carol@example.com", "param.USER_EMAIL": "carol@example.com"},
            actor="admin@example.com",
        ),
    )
    new_role = {"ROLE_NAME": "Helpdesk Reader", "ROLE_ID": 3071}
    r = activity(
        17,
        "admin",
        [
            ("DELEGATED_ADMIN_SETTINGS", "CREATE_ROLE", new_role),
            (
                "DELEGATED_ADMIN_SETTINGS",
                "ADD_PRIVILEGE",
                {"ROLE_NAME": "Helpdesk Reader", "PRIVILEGE_NAME": "USERS_RETRIEVE"},
            ),
        ],
        actor=admin,
    )
    add(
        r,
        expected(
            r,
            0,
            "iam_change",
            "Helpdesk Reader",
            {"role": "Helpdesk Reader", "param.ROLE_NAME": "Helpdesk Reader", "param.ROLE_ID": "3071"},
            actor="admin@example.com",
        ),
        expected(
            r,
            1,
            "permission_change",
            "Helpdesk Reader",
            {"role": "Helpdesk Reader", "param.ROLE_NAME": "Helpdesk Reader", "param.PRIVILEGE_NAME": "USERS_RETRIEVE"},
            actor="admin@example.com",
        ),
    )
    g = {"USER_EMAIL": "dave@example.com", "GROUP_EMAIL": "sre@example.com"}
    gm = {
        "target_user": "dave@example.com",
        "group": "sre@example.com",
        "param.USER_EMAIL": "dave@example.com",
        "param.GROUP_EMAIL": "sre@example.com",
    }
    r = activity(18, "admin", [("GROUP_SETTINGS", "ADD_GROUP_MEMBER", g)], actor=admin)
    add(r, expected(r, 0, "member_added", "dave@example.com", gm, actor="admin@example.com"))
    r = activity(19, "admin", [("GROUP_SETTINGS", "REMOVE_GROUP_MEMBER", g)], actor=admin)
    add(r, expected(r, 0, "member_removed", "dave@example.com", gm, actor="admin@example.com"))
    r = activity(
        20,
        "groups_enterprise",
        [("moderator_action", "add_user", {"member_id": "erin@example.com", "group_id": "eng@example.com"})],
    )
    add(
        r,
        expected(
            r, 0, "member_added", "", {"param.member_id": "erin@example.com", "param.group_id": "eng@example.com"}
        ),
    )
    r = activity(21, "admin", [("GROUP_SETTINGS", "CREATE_GROUP", {"GROUP_EMAIL": "vendors@example.com"})], actor=admin)
    add(
        r,
        expected(
            r,
            0,
            "config_change",
            "vendors@example.com",
            {"group": "vendors@example.com", "param.GROUP_EMAIL": "vendors@example.com"},
            actor="admin@example.com",
        ),
    )
    api = {"API_CLIENT_NAME": "1234567890.apps.googleusercontent.com", "API_SCOPES": ["https://mail.google.com/"]}
    r = activity(22, "admin", [("DOMAIN_SETTINGS", "AUTHORIZE_API_CLIENT_ACCESS", api)], actor=admin)
    add(
        r,
        expected(
            r,
            0,
            "iam_change",
            "",
            {
                "param.API_CLIENT_NAME": "1234567890.apps.googleusercontent.com",
                "param.API_SCOPES": "https://mail.google.com/",
            },
            actor="admin@example.com",
        ),
    )
    tok = {
        "client_id": "99887766.apps.googleusercontent.com",
        "app_name": "Calendar Sync",
        "scope": ["calendar", "drive"],
    }
    r = activity(23, "token", [("auth", "authorize", tok)])
    add(
        r,
        expected(
            r,
            0,
            "iam_change",
            "Calendar Sync",
            {
                "app": "Calendar Sync",
                "param.client_id": "99887766.apps.googleusercontent.com",
                "param.app_name": "Calendar Sync",
                "param.scope": "calendar,drive",
            },
        ),
    )
    r = activity(
        24,
        "token",
        [("auth", "request", {"client_id": "55.apps.googleusercontent.com", "method_name": "gmail.users.get"})],
        actor={"callerType": "KEY", "key": "SYSTEM"},
        region=...,
    )
    add(
        r,
        expected(
            r,
            0,
            "iam_change",
            "",
            {
                "app": "55.apps.googleusercontent.com",
                "param.client_id": "55.apps.googleusercontent.com",
                "param.method_name": "gmail.users.get",
            },
            actor="SYSTEM",
        ),
    )
    setting = {
        "APPLICATION_NAME": "Drive and Docs",
        "SETTING_NAME": "SHARING_OUTSIDE_DOMAIN",
        "OLD_VALUE": "false",
        "NEW_VALUE": "true",
        "ORG_UNIT_NAME": "/Engineering",
    }
    r = activity(25, "admin", [("APPLICATION_SETTINGS", "CHANGE_APPLICATION_SETTING", setting)], actor=admin)
    add(
        r,
        expected(
            r,
            0,
            "config_change",
            "",
            {"org_unit": "/Engineering", **{f"param.{k}": v for k, v in setting.items()}},
            actor="admin@example.com",
        ),
    )
    r = activity(
        26,
        "admin",
        [("USER_SETTINGS", "CHANGE_FIRST_NAME", {"USER_EMAIL": "bob@example.com", "NEW_VALUE": "Rob"})],
        actor=admin,
    )
    add(
        r,
        expected(
            r,
            0,
            "admin_action",
            "bob@example.com",
            {"target_user": "bob@example.com", "param.USER_EMAIL": "bob@example.com", "param.NEW_VALUE": "Rob"},
            actor="admin@example.com",
        ),
    )
    r = activity(
        27, "drive", [("access", "download", {"doc_id": "1AbC", "doc_title": "Payroll 2026", "visibility": "private"})]
    )
    add(
        r,
        expected(
            r,
            0,
            "other",
            "",
            {"param.doc_id": "1AbC", "param.doc_title": "Payroll 2026", "param.visibility": "private"},
        ),
    )
    r = activity(
        28, "login", [("login", "login_success", {"login_type": "exchange"})], qualifier=..., ip=..., region=...
    )
    add(r, expected(r, 0, "login", "", {"login_type": "exchange", "param.login_type": "exchange"}))
    r = activity(
        29,
        "login",
        [("login", "login_failure", {"login_failure_type": "login_failure_unknown"})],
        actor={"email": "carol@example.com"},
        region="Japan",
    )
    add(
        r,
        expected(
            r,
            0,
            "login_failure",
            "",
            {"location": "JP", "reason": "login_failure_unknown", "param.login_failure_type": "login_failure_unknown"},
            actor="carol@example.com",
        ),
    )
    r = activity(30, "login", [("login", "login_success", {})], actor={"email": "carol@example.com"}, region="JP")
    add(r, expected(r, 0, "login", "", {}, actor="carol@example.com"))
    multi = [
        ("USER_SETTINGS", "CREATE_USER", {"USER_EMAIL": "intern@example.com"}),
        ("GROUP_SETTINGS", "ADD_GROUP_MEMBER", {"USER_EMAIL": "intern@example.com", "GROUP_EMAIL": "all@example.com"}),
        ("DELEGATED_ADMIN_SETTINGS", "ASSIGN_ROLE", {"USER_EMAIL": "intern@example.com", "ROLE_NAME": "Help Desk"}),
    ]
    r = activity(31, "admin", multi, actor=admin)
    add(
        r,
        expected(
            r,
            0,
            "user_created",
            "intern@example.com",
            {"target_user": "intern@example.com", "param.USER_EMAIL": "intern@example.com"},
            actor="admin@example.com",
        ),
        expected(
            r,
            1,
            "member_added",
            "intern@example.com",
            {
                "target_user": "intern@example.com",
                "group": "all@example.com",
                "param.USER_EMAIL": "intern@example.com",
                "param.GROUP_EMAIL": "all@example.com",
            },
            actor="admin@example.com",
        ),
        expected(
            r,
            2,
            "role_assignment",
            "intern@example.com",
            {
                "target_user": "intern@example.com",
                "role": "Help Desk",
                "param.USER_EMAIL": "intern@example.com",
                "param.ROLE_NAME": "Help Desk",
            },
            actor="admin@example.com",
        ),
    )
    return c


CASES = _cases()

"""Entra sign-in records written from the published Graph signIn resource, the SigninLogs table columns and the
diagnostic-settings schema, in all three shapes, each with the event it maps to."""

from __future__ import annotations

from typing import Any

TENANT = "72f988bf-0000-4000-8000-00000000a001"
UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
JANE = ("jane@contoso.com", "Jane Doe", "11111111-aaaa-4000-8000-000000000001")
BOB = ("bob@contoso.com", "Bob Lee", "11111111-aaaa-4000-8000-000000000002")
PORTAL = ("Azure Portal", "c44b4083-3bb0-49c1-b47d-974e53cbdf3c")
TEAMS = ("Microsoft Teams", "1fec8e78-bce4-4aaf-ab1b-5451cc387264")
REASONS = {
    "0": "",
    "50126": "Error validating credentials due to invalid username or password.",
    "50074": "Strong Authentication is required.",
    "50053": "Account is locked because user tried to sign in too many times with an incorrect user ID or password.",
    "53003": "Access has been blocked by Conditional Access policies.",
    "7000215": "Invalid client secret is provided.",
}


def graph(
    n: int,
    user: tuple[str, str, str] | None = JANE,
    app: tuple[str, str] = PORTAL,
    *,
    code: int = 0,
    country: str | None = "US",
    ip: str = "198.51.100.20",
    **extra: Any,
) -> dict[str, Any]:
    """A Graph signIn (beta fields userAgent, authenticationRequirement, mfaDetail included)."""
    rec: dict[str, Any] = {
        "id": f"66ea54eb-6301-4ee5-be62-ff5a759b{n:04d}",
        "createdDateTime": f"2026-04-10T09:{n:02d}:00Z",
        "userDisplayName": user[1] if user else None,
        "userPrincipalName": user[0] if user else None,
        "userId": user[2] if user else None,
        "appId": app[1],
        "appDisplayName": app[0],
        "ipAddress": ip,
        "clientAppUsed": "Browser",
        "userAgent": UA,
        "correlationId": f"d79f5bee-5860-4832-928f-3133e22a{n:04d}",
        "conditionalAccessStatus": "success" if code == 0 else "notApplied",
        "isInteractive": True,
        "riskDetail": "none",
        "riskLevelAggregated": "none",
        "riskLevelDuringSignIn": "none",
        "riskState": "none",
        "resourceDisplayName": "Windows Azure Service Management API",
        "resourceId": "797f4846-ba00-4fd7-ba43-dac1f8f63013",
        "authenticationRequirement": "multiFactorAuthentication",
        "status": {"errorCode": code, "failureReason": REASONS[str(code)] or None, "additionalDetails": None},
        "deviceDetail": {"deviceId": "", "displayName": "", "operatingSystem": "Windows10", "browser": "Chrome 124.0"},
        "location": {
            "city": "Redmond",
            "state": "Washington",
            "countryOrRegion": country,
            "geoCoordinates": {"altitude": None, "latitude": 47.67, "longitude": -122.12},
        },
    }
    rec.update(extra)
    return {key: value for key, value in rec.items() if value is not ...}


def log_analytics(n: int, user: tuple[str, str, str] = JANE, *, code: str = "0", table: str = "SigninLogs") -> dict:
    """A SigninLogs row as a Log Analytics query exports it (PascalCase columns, dynamic columns as objects)."""
    return {
        "TenantId": TENANT,
        "SourceSystem": "Azure AD",
        "TimeGenerated": f"2026-04-10T10:{n:02d}:05.1234567Z",
        "ResourceId": f"/tenants/{TENANT}/providers/Microsoft.aadiam",
        "OperationName": "Sign-in activity",
        "OperationVersion": "1.0",
        "Category": "SignInLogs" if table == "SigninLogs" else "NonInteractiveUserSignInLogs",
        "ResultType": code,
        "ResultSignature": "None",
        "ResultDescription": REASONS[code] or "",
        "DurationMs": 0,
        "CorrelationId": f"5c9a3a4e-0000-4000-8000-00000000{n:04d}",
        "Identity": user[1],
        "Level": "4",
        "Location": "DE",
        "AppDisplayName": TEAMS[0],
        "AppId": TEAMS[1],
        "AuthenticationRequirement": "singleFactorAuthentication",
        "ClientAppUsed": "Mobile Apps and Desktop clients",
        "ConditionalAccessStatus": "notApplied",
        "CreatedDateTime": f"2026-04-10T10:{n:02d}:00.1234567Z",
        "DeviceDetail": {"deviceId": "", "operatingSystem": "Ios 17", "browser": "Rich Client 5.0"},
        "IPAddress": "203.0.113.7",
        "Id": f"8d6f0c3e-0000-4000-8000-0000000a{n:04d}",
        "IsInteractive": table == "SigninLogs",
        "LocationDetails": {"city": "Berlin", "state": "Berlin", "countryOrRegion": "DE"},
        "MfaDetail": {},
        "ResourceDisplayName": "Microsoft Graph",
        "Status": {"errorCode": int(code)},
        "UserAgent": "",
        "UserDisplayName": user[1],
        "UserId": user[2],
        "UserPrincipalName": user[0],
        "Type": table,
    }


def envelope(n: int, props: dict[str, Any], category: str = "SignInLogs", **extra: Any) -> dict[str, Any]:
    """A diagnostic-settings record (Event Hubs / storage account) around a Graph-shaped `properties`."""
    code = str(props.get("status", {}).get("errorCode", 0))
    rec: dict[str, Any] = {
        "time": f"2026-04-10T11:{n:02d}:01.0000000Z",
        "resourceId": f"/tenants/{TENANT}/providers/Microsoft.aadiam",
        "operationName": "Sign-in activity",
        "operationVersion": "1.0",
        "category": category,
        "tenantId": TENANT,
        "resultType": code,
        "resultSignature": "None",
        "resultDescription": REASONS.get(code, ""),
        "durationMs": 0,
        "callerIpAddress": props.get("ipAddress", ""),
        "correlationId": props.get("correlationId", ""),
        "identity": props.get("userDisplayName", ""),
        "Level": 4,
        "location": "US",
        "properties": props,
    }
    rec.update(extra)
    return rec


def event(
    rec: dict[str, Any],
    kind: str,
    actor: str,
    target: str,
    metadata: dict[str, str],
    *,
    event_id: str = "",
    timestamp: str = "",
    org: str = "",
    action: str = "",
) -> dict[str, Any]:
    return {
        "id": event_id or f"entra-signin-{rec.get('id') or rec.get('Id') or rec.get('properties', {}).get('id')}",
        "timestamp": timestamp,
        "source": "azure",
        "type": kind,
        "actor": actor,
        "org": org,
        "payload": {"action": action, "target": target, "metadata": dict(sorted(metadata.items()))},
    }


def graph_meta(rec: dict[str, Any], **changes: str) -> dict[str, str]:
    """The metadata a graph() record projects, with `changes` applied ("" removes a key)."""
    meta = {
        "ip": rec["ipAddress"],
        "user_agent": UA,
        "principal_id": rec.get("userId") or "",
        "display_name": rec.get("userDisplayName") or "",
        "app": rec["appDisplayName"],
        "app_id": rec["appId"],
        "resource": "Windows Azure Service Management API",
        "client_app": "Browser",
        "reason": rec["status"]["failureReason"] or "",
        "conditional_access": rec["conditionalAccessStatus"],
        "auth_requirement": "multiFactorAuthentication",
        "risk_level": "none",
        "risk_state": "none",
        "city": "Redmond",
        "os": "Windows10",
        "browser": "Chrome 124.0",
        "correlation_id": rec["correlationId"],
        "error_code": str(rec["status"]["errorCode"]),
        "location": rec["location"]["countryOrRegion"] or "",
    }
    meta.update(changes)
    return {key: value for key, value in meta.items() if value}


def la_meta(rec: dict[str, Any]) -> dict[str, str]:
    meta = {
        "ip": "203.0.113.7",
        "principal_id": rec["UserId"],
        "display_name": rec["UserDisplayName"],
        "app": TEAMS[0],
        "app_id": TEAMS[1],
        "resource": "Microsoft Graph",
        "client_app": "Mobile Apps and Desktop clients",
        "reason": rec["ResultDescription"],
        "conditional_access": "notApplied",
        "auth_requirement": "singleFactorAuthentication",
        "city": "Berlin",
        "os": "Ios 17",
        "browser": "Rich Client 5.0",
        "correlation_id": rec["CorrelationId"],
        "category": rec["Category"],
        "error_code": rec["ResultType"],
        "location": "DE",
    }
    return {key: value for key, value in meta.items() if value}


def _graph_case(n: int, kind: str, rec: dict[str, Any], actor: str, **changes: str) -> tuple[dict, dict]:
    meta = graph_meta(rec, **changes)
    return rec, event(rec, kind, actor, rec["appDisplayName"], meta, timestamp=f"2026-04-10T09:{n:02d}:00Z")


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    c: list[tuple[dict[str, Any], dict[str, Any]]] = []
    # Graph signIn records
    c.append(_graph_case(1, "login", graph(1), JANE[0]))
    for n, code in ((2, 50126), (3, 50074), (4, 50053), (5, 53003)):
        c.append(_graph_case(n, "login_failure", graph(n, code=code, ip="203.0.113.99"), JANE[0]))
    c.append(_graph_case(6, "login", graph(6, BOB, TEAMS), BOB[0]))
    c.append(_graph_case(7, "login", graph(7, BOB, country="Germany"), BOB[0], location="DE"))
    c.append(_graph_case(8, "login", graph(8, BOB, country=None), BOB[0]))  # no country
    c.append(_graph_case(9, "login", graph(9, BOB, country="Atlantis"), BOB[0], location=""))  # not an ISO country
    mfa = graph(10, mfaDetail={"authMethod": "Microsoft Authenticator app", "authDetail": "Approved"})
    c.append(_graph_case(10, "login", mfa, JANE[0], mfa_method="Microsoft Authenticator app"))
    risky = graph(11, riskLevelDuringSignIn="high", riskState="atRisk", riskDetail="unfamiliarFeatures")
    c.append(_graph_case(11, "login", risky, JANE[0], risk_level="high", risk_state="atRisk"))
    bare = graph(12, userAgent=..., authenticationRequirement=..., deviceDetail=..., clientAppUsed=...)
    c.append(
        _graph_case(12, "login", bare, JANE[0], user_agent="", auth_requirement="", os="", browser="", client_app="")
    )
    upn_only = graph(13, userId=..., userDisplayName=...)
    c.append(_graph_case(13, "login", upn_only, JANE[0]))
    workload = graph(
        14,
        None,
        ("deploy-bot", "a0c8e1f2-0000-4000-8000-0000000000b1"),
        servicePrincipalName="deploy-bot",
        servicePrincipalId="f1e2d3c4-0000-4000-8000-0000000000b2",
        clientAppUsed=...,
    )
    c.append(
        _graph_case(14, "login", workload, "deploy-bot", principal_id="f1e2d3c4-0000-4000-8000-0000000000b2",
                    client_app="")
    )
    bad_secret = graph(
        15,
        None,
        ("deploy-bot", "a0c8e1f2-0000-4000-8000-0000000000b1"),
        code=7000215,
        servicePrincipalId="f1e2d3c4-0000-4000-8000-0000000000b2",
    )
    c.append(_graph_case(15, "login_failure", bad_secret, "f1e2d3c4-0000-4000-8000-0000000000b2",
                         principal_id="f1e2d3c4-0000-4000-8000-0000000000b2"))
    user_id_only = graph(16, userPrincipalName=..., userDisplayName=...)
    c.append(_graph_case(16, "login", user_id_only, JANE[2]))
    no_id = graph(17, id=...)
    rec, ev = _graph_case(17, "login", no_id, JANE[0])
    c.append((rec, {**ev, "id": "entra-signin-sha256-"}))
    tenant = graph(18, homeTenantId=TENANT, resourceTenantId=TENANT)
    rec, ev = _graph_case(18, "login", tenant, JANE[0])
    c.append((rec, {**ev, "org": TENANT}))
    # Log Analytics rows
    for n, user, code, table in (
        (20, JANE, "0", "SigninLogs"),
        (21, JANE, "50126", "SigninLogs"),
        (22, BOB, "0", "AADNonInteractiveUserSignInLogs"),
        (23, BOB, "50074", "SigninLogs"),
        (24, BOB, "53003", "AADNonInteractiveUserSignInLogs"),
    ):
        rec = log_analytics(n, user, code=code, table=table)
        kind = "login" if code == "0" else "login_failure"
        c.append(
            (
                rec,
                event(
                    rec,
                    kind,
                    user[0],
                    TEAMS[0],
                    la_meta(rec),
                    timestamp=f"2026-04-10T10:{n:02d}:00.123456Z",
                    org=TENANT,
                    action="Sign-in activity",
                ),
            )
        )
    # Diagnostic-settings envelopes
    for n, props, category in (
        (29, graph(29, BOB, code=50074), "SignInLogs"),
        (30, graph(30), "SignInLogs"),
        (31, graph(31, code=50126, ip="203.0.113.99"), "SignInLogs"),
        (32, graph(32, BOB, TEAMS, isInteractive=False), "NonInteractiveUserSignInLogs"),
        (33, graph(33, BOB, code=50053), "SignInLogs"),
        (34, graph(34, userAgent=..., location=...), "SignInLogs"),
    ):
        props = {**props, "createdDateTime": f"2026-04-10T11:{n:02d}:00Z"}
        rec = envelope(n, props, category)
        kind = "login" if props["status"]["errorCode"] == 0 else "login_failure"
        if "location" in props:
            meta = graph_meta(props, category=category)
        else:  # the country then comes from the envelope's own `location`
            located = {**props, "location": {"countryOrRegion": "US"}}
            meta = graph_meta(located, category=category, city="", user_agent="")
        c.append(
            (
                rec,
                event(
                    rec,
                    kind,
                    props["userPrincipalName"],
                    props["appDisplayName"],
                    meta,
                    timestamp=f"2026-04-10T11:{n:02d}:00Z",
                    org=TENANT,
                    action="Sign-in activity",
                ),
            )
        )
    no_created = envelope(35, graph(35, createdDateTime=...))
    meta = graph_meta(no_created["properties"], category="SignInLogs")
    c.append(
        (
            no_created,
            event(no_created, "login", JANE[0], PORTAL[0], meta, timestamp="2026-04-10T11:35:01Z", org=TENANT,
                  action="Sign-in activity"),
        )
    )
    return c


CASES = _cases()

"""OCSF 1.x events written from the published schema (classes 3001, 3002, 3005, 3006, 6003 and others), each
with the event it maps to."""

from __future__ import annotations

from typing import Any

BASE_MS = 1775822400000  # 2026-04-10T12:00:00Z
UA = "Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0"
OKTA = {"name": "Okta System Log", "vendor_name": "Okta"}


def user(name: str, uid: str) -> dict[str, Any]:
    return {"name": name, "uid": uid, "email_addr": f"{name}@example.com", "type_id": 1, "type": "User"}


ANA = user("ana", "00u1ana")
ADMIN = user("root-admin", "00u1adm")
VICTOR = user("victor", "00u1vic")


def ev(n: int, class_uid: int, activity_id: int, *, product: Any = OKTA, **fields: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "activity_id": activity_id,
        "category_uid": class_uid // 1000,
        "class_uid": class_uid,
        "type_uid": class_uid * 100 + activity_id,
        "time": BASE_MS + n * 60_000,
        "severity_id": 1,
        "status_id": 1,
        "status": "Success",
        "metadata": {"version": "1.1.0", "uid": f"ocsf-evt-{n:04d}-7f3a", "product": product},
        "src_endpoint": {"ip": "192.0.2.150", "location": {"country": "FR", "city": "Paris"}},
        "http_request": {"user_agent": UA},
    }
    rec.update(fields)
    return {key: value for key, value in rec.items() if value is not ...}


def out(n: int, kind: str, rec: dict[str, Any], actor: str, target: str, extra: dict[str, str], **over: str) -> dict:
    meta: dict[str, Any] = {
        "ip": "192.0.2.150",
        "user_agent": UA,
        "location": "FR",
        "outcome": rec.get("status", ""),
        "product": (rec["metadata"].get("product") or {}).get("name", ""),
        "vendor": (rec["metadata"].get("product") or {}).get("vendor_name", ""),
    }
    meta.update(extra)
    return {
        "id": over.get("event_id", f"ocsf-ocsf-evt-{n:04d}-7f3a"),
        "timestamp": f"2026-04-10T12:{n:02d}:00Z",
        "source": over.get("source", "okta"),
        "type": kind,
        "actor": actor,
        "org": over.get("org", ""),
        "payload": {
            "action": str(rec["type_uid"]),
            "target": target,
            "metadata": dict(sorted((k, v) for k, v in meta.items() if v)),
        },
    }


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    c: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def add(rec: dict[str, Any], kind: str, actor: str, target: str, extra: dict[str, str], **over: str) -> None:
        c.append((rec, out(len(c), kind, rec, actor, target, extra, **over)))

    n = len
    auth = {"class": "Authentication"}
    app = {"name": "Salesforce", "uid": "0oa1sf"}
    add(
        ev(
            n(c),
            3002,
            1,
            user=ANA,
            service=app,
            class_name="Authentication",
            type_name="Authentication: Logon",
            is_mfa=True,
        ),
        "login",
        "ana@example.com",
        "Salesforce",
        {**auth, "type_name": "Authentication: Logon", "service": "Salesforce"},
    )
    add(
        ev(
            n(c),
            3002,
            1,
            user=ANA,
            status_id=2,
            status="Failure",
            status_detail="INVALID_CREDENTIALS",
            class_name="Authentication",
        ),
        "login_failure",
        "ana@example.com",
        "",
        {**auth, "reason": "INVALID_CREDENTIALS"},
    )
    add(
        ev(
            n(c),
            3002,
            1,
            user={"name": "svc-backup", "uid": "00u1svc"},
            dst_endpoint={"hostname": "vpn.example.com"},
            class_name="Authentication",
        ),
        "login",
        "svc-backup",
        "vpn.example.com",
        auth,
    )
    add(ev(n(c), 3002, 2, user=VICTOR, class_name="Authentication"), "other", "victor@example.com", "", auth)
    aws = {"name": "CloudTrail", "vendor_name": "AWS"}
    add(
        ev(
            n(c),
            3002,
            1,
            product=aws,
            user={"name": "alice", "uid": "AIDAX1"},
            cloud={"provider": "AWS", "account": {"uid": "111122223333"}, "region": "us-east-1"},
            dst_endpoint={"svc_name": "signin.amazonaws.com"},
            class_name="Authentication",
        ),
        "login",
        "alice",
        "signin.amazonaws.com",
        {**auth, "cloud_region": "us-east-1"},
        source="aws",
        org="111122223333",
    )
    acct = {"class": "Account Change"}
    for act, kind in [
        (1, "user_created"),
        (2, "user_enabled"),
        (3, "password_change"),
        (4, "password_change"),
        (5, "user_disabled"),
        (6, "user_deleted"),
        (9, "user_disabled"),
        (10, "mfa_change"),
        (11, "mfa_change"),
        (12, "user_enabled"),
    ]:
        add(
            ev(
                n(c),
                3001,
                act,
                actor={"user": ADMIN, "session": {"uid": "sess-88"}},
                user=VICTOR,
                class_name="Account Change",
            ),
            kind,
            "root-admin@example.com",
            "victor@example.com",
            {**acct, "principal_id": "00u1adm", "session_id": "sess-88", "target_user": "victor@example.com"},
        )
    pol = {**acct, "principal_id": "00u1adm", "target_user": "victor@example.com"}
    add(
        ev(
            n(c),
            3001,
            7,
            actor={"user": ADMIN},
            user=VICTOR,
            policy={"name": "AdministratorAccess"},
            class_name="Account Change",
        ),
        "permission_change",
        "root-admin@example.com",
        "victor@example.com",
        pol,
    )
    add(
        ev(n(c), 3001, 99, actor={"user": ADMIN}, user=VICTOR, class_name="Account Change"),
        "iam_change",
        "root-admin@example.com",
        "victor@example.com",
        pol,
    )
    uam = {"class": "User Access Management", "principal_id": "00u1adm", "target_user": "victor@example.com"}
    add(
        ev(
            n(c),
            3005,
            1,
            actor={"user": ADMIN},
            user=VICTOR,
            privileges=["Super Administrator"],
            class_name="User Access Management",
        ),
        "role_assignment",
        "root-admin@example.com",
        "victor@example.com",
        {**uam, "role": "Super Administrator"},
    )
    add(
        ev(
            n(c),
            3005,
            2,
            actor={"user": ADMIN},
            user=VICTOR,
            privileges=["Read Only Admin", "Help Desk"],
            class_name="User Access Management",
        ),
        "role_removal",
        "root-admin@example.com",
        "victor@example.com",
        {**uam, "role": "Read Only Admin"},
    )
    grp = {"name": "Engineering", "uid": "00g1eng"}
    gm = {"class": "Group Management", "principal_id": "00u1adm", "group": "Engineering"}
    add(
        ev(n(c), 3006, 3, actor={"user": ADMIN}, user=ANA, group=grp, class_name="Group Management"),
        "member_added",
        "root-admin@example.com",
        "ana@example.com",
        {**gm, "target_user": "ana@example.com"},
    )
    add(
        ev(n(c), 3006, 4, actor={"user": ADMIN}, user=ANA, group=grp, class_name="Group Management"),
        "member_removed",
        "root-admin@example.com",
        "ana@example.com",
        {**gm, "target_user": "ana@example.com"},
    )
    add(
        ev(n(c), 3006, 1, actor={"user": ADMIN}, group=grp, privileges=["Org Admin"], class_name="Group Management"),
        "role_assignment",
        "root-admin@example.com",
        "Engineering",
        {**gm, "role": "Org Admin"},
    )
    add(
        ev(n(c), 3006, 2, actor={"user": ADMIN}, group=grp, privileges=["Org Admin"], class_name="Group Management"),
        "role_removal",
        "root-admin@example.com",
        "Engineering",
        {**gm, "role": "Org Admin"},
    )
    add(
        ev(n(c), 3006, 6, actor={"user": ADMIN}, group=grp, class_name="Group Management"),
        "config_change",
        "root-admin@example.com",
        "Engineering",
        gm,
    )
    add(
        ev(n(c), 3006, 5, actor={"user": ADMIN}, group=grp, class_name="Group Management"),
        "config_change",
        "root-admin@example.com",
        "Engineering",
        gm,
    )
    ct = {"name": "CloudTrail", "vendor_name": "Amazon Web Services"}
    cloud = {"provider": "AWS", "account": {"uid": "111122223333"}, "region": "eu-west-1"}
    api = {"class": "API Activity", "cloud_region": "eu-west-1", "principal_id": "AIDAX1"}
    for act, op in [(1, "CreateBucket"), (2, "GetObject"), (3, "PutBucketPolicy"), (4, "DeleteTrail")]:
        add(
            ev(
                n(c),
                6003,
                act,
                product=ct,
                cloud=cloud,
                actor={"user": {"name": "alice", "uid": "AIDAX1"}},
                api={"operation": op, "service": {"name": "s3.amazonaws.com"}},
                resources=[{"name": "contoso-logs", "type": "AWS::S3::Bucket"}],
                class_name="API Activity",
            ),
            "api_call",
            "alice",
            "contoso-logs",
            {**api, "operation": op, "service": "s3.amazonaws.com"},
            source="aws",
            org="111122223333",
        )
    gcp = {"name": "Cloud Audit Logs", "vendor_name": "Google"}
    add(
        ev(
            n(c),
            6003,
            3,
            product=gcp,
            actor={"user": {"email_addr": "ops@contoso.example"}},
            api={"operation": "SetIamPolicy"},
            resources=[{"uid": "projects/contoso-prod"}],
        ),
        "api_call",
        "ops@contoso.example",
        "projects/contoso-prod",
        {"operation": "SetIamPolicy"},
        source="gcp",
    )
    gws = {"name": "Google Workspace", "vendor_name": "Google"}
    add(
        ev(n(c), 3002, 1, product=gws, user={"email_addr": "jane@example.com"}),
        "login",
        "jane@example.com",
        "",
        {},
        source="google-workspace",
    )
    entra = {"name": "Microsoft Entra ID", "vendor_name": "Microsoft"}
    add(
        ev(
            n(c),
            3002,
            1,
            product=entra,
            user={"email_addr": "kim@contoso.onmicrosoft.com"},
            status_id=2,
            status="Failure",
            metadata={
                "version": "1.1.0",
                "uid": f"ocsf-evt-{n(c):04d}-7f3a",
                "product": entra,
                "tenant_uid": "72f988bf-tenant",
            },
        ),
        "login_failure",
        "kim@contoso.onmicrosoft.com",
        "",
        {},
        source="azure",
        org="72f988bf-tenant",
    )
    edr = {"name": "Falcon", "vendor_name": "CrowdStrike"}
    add(
        ev(
            n(c),
            1007,
            1,
            product=edr,
            actor={"user": {"name": "SYSTEM"}},
            class_name="Process Activity",
            type_name="Process Activity: Launch",
            process={"name": "powershell.exe", "pid": 4120},
            device={"hostname": "ws-17"},
        ),
        "other",
        "SYSTEM",
        "",
        {"class": "Process Activity", "type_name": "Process Activity: Launch"},
        source="ocsf",
    )
    add(
        ev(
            n(c),
            4001,
            6,
            product=edr,
            dst_endpoint={"hostname": "c2.evil.example", "ip": "198.51.100.66"},
            src_endpoint=...,
            http_request=...,
            status=...,
        ),
        "other",
        "",
        "c2.evil.example",
        {},
        source="ocsf",
    )
    quiet = c[-1][1]["payload"]
    quiet["metadata"] = {"product": "Falcon", "vendor": "CrowdStrike"}  # no endpoint, user agent or status
    bare = ev(
        n(c), 3002, 1, user=ANA, metadata={"version": "1.0.0", "product": OKTA}, src_endpoint={"ip": "192.0.2.150"}
    )
    c.append(
        (
            bare,
            {
                **out(n(c), "login", bare, "ana@example.com", "", {}, event_id="ocsf-sha256-"),
                "payload": {
                    "action": "300201",
                    "target": "",
                    "metadata": {
                        "ip": "192.0.2.150",
                        "user_agent": UA,
                        "outcome": "Success",
                        "product": "Okta System Log",
                        "vendor": "Okta",
                    },
                },
            },
        )
    )
    return c


CASES = _cases()

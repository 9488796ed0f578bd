"""Microsoft 365 Unified Audit Log records written from the published common and per-workload audit schemas,
each with the event it maps to."""

from __future__ import annotations

from typing import Any

ORG = "72f988bf-0000-4000-8000-00000000a001"
UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
JANE = "jane@contoso.com"
ADMIN = "admin@contoso.com"
SITE = "https://contoso.sharepoint.com/sites/finance/"
# RecordType numbers from the published AuditLogRecordType enumeration
AAD, STS, EXO_ADMIN, EXO_ITEM, SP_FILE, SP_SHARING, TEAMS = 8, 15, 1, 2, 6, 14, 25
WORKLOAD = {AAD: "AzureActiveDirectory", STS: "AzureActiveDirectory", EXO_ADMIN: "Exchange", EXO_ITEM: "Exchange",
            SP_FILE: "SharePoint", SP_SHARING: "SharePoint", TEAMS: "MicrosoftTeams"}


def record(n: int, operation: str, record_type: int, user: str, object_id: str, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "CreationTime": f"2026-04-10T09:{n:02d}:00",
        "Id": f"4a1b2c3d-0000-4000-8000-00000000{n:04d}",
        "Operation": operation,
        "OrganizationId": ORG,
        "RecordType": record_type,
        "ResultStatus": "Succeeded",
        "UserKey": f"10032001{n:08d}",
        "UserType": 0,
        "Version": 1,
        "Workload": WORKLOAD[record_type],
        "ClientIP": "198.51.100.20",
        "ObjectId": object_id,
        "UserId": user,
    }
    rec.update(extra)
    return {key: value for key, value in rec.items() if value is not ...}


def event(rec: dict[str, Any], kind: str, target: str, **extra: str) -> dict[str, Any]:
    meta = {
        "ip": rec.get("ClientIP") or rec.get("ActorIpAddress") or rec.get("ClientIPAddress") or "",
        "user_agent": rec.get("UserAgent", ""),
        "principal_id": rec["UserKey"],
        "outcome": rec.get("ResultStatus", ""),
        "reason": rec.get("LogonError", ""),
        "error_code": rec.get("ErrorNumber", ""),
        "workload": rec["Workload"],
        "record_type": str(rec["RecordType"]),
        "user_type": str(rec.get("UserType", "")),
        "app_id": rec.get("ApplicationId") or rec.get("AppId") or "",
        "site": rec.get("SiteUrl", ""),
        "file": rec.get("SourceFileName", ""),
        "team": rec.get("TeamName", ""),
        **extra,
    }
    return {
        "id": f"m365-{rec['Id']}" if "Id" in rec else "m365-sha256-",
        "timestamp": rec["CreationTime"] + "Z",
        "source": "m365",
        "type": kind,
        "actor": rec["UserId"],
        "org": ORG,
        "payload": {
            "action": rec["Operation"],
            "target": target,
            "metadata": dict(sorted({k: v for k, v in meta.items() if v}.items())),
        },
    }


def sts(n: int, operation: str, user: str = JANE, **extra: Any) -> dict[str, Any]:
    return record(
        n, operation, STS, user, "797f4846-ba00-4fd7-ba43-dac1f8f63013", ClientIP=..., ActorIpAddress="203.0.113.7",
        ApplicationId="c44b4083-3bb0-49c1-b47d-974e53cbdf3c", UserType=0,
        ExtendedProperties=[{"Name": "UserAgent", "Value": UA}, {"Name": "RequestType", "Value": "Login:login"}],
        Actor=[{"ID": user, "Type": 5}], **extra,
    )


def directory(n: int, operation: str, target_upn: str, changes: list[dict[str, str]] | None = None,
              **extra: Any) -> dict[str, Any]:
    return record(
        n, operation, AAD, ADMIN, target_upn, ClientIP=..., UserType=2,
        Actor=[{"ID": ADMIN, "Type": 5}], Target=[{"ID": f"User_{n}", "Type": 2}, {"ID": target_upn, "Type": 5}],
        ModifiedProperties=changes or [], **extra,
    )


ROLE = [{"Name": "Role.DisplayName", "NewValue": "Exchange Administrator", "OldValue": ""}]
GROUP = [{"Name": "Group.DisplayName", "NewValue": "Finance", "OldValue": ""}]


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    c: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def add(rec: dict[str, Any], kind: str, target: str, **extra: str) -> None:
        c.append((rec, event(rec, kind, target, **extra)))

    ms = "797f4846-ba00-4fd7-ba43-dac1f8f63013"
    add(sts(1, "UserLoggedIn"), "login", ms)
    add(sts(2, "UserLoginFailed", ResultStatus="Failed", LogonError="InvalidPasswordOrUserName", ErrorNumber="50126"),
        "login_failure", ms)
    add(sts(3, "UserLoginFailed", ResultStatus="Failed", LogonError="UserStrongAuthClientAuthNRequired",
            ErrorNumber="50076"), "login_failure", ms)
    add(sts(4, "UserLoggedIn", "bob@contoso.com"), "login", ms)
    add(sts(5, "UserLoginFailed", ResultStatus="Failed", LogonError="IdsLocked", ErrorNumber="50053"),
        "login_failure", ms)
    add(directory(6, "Add user.", "newbie@contoso.com"), "user_created", "newbie@contoso.com",
        target_user="newbie@contoso.com")
    add(directory(7, "Delete user.", "newbie@contoso.com"), "user_deleted", "newbie@contoso.com",
        target_user="newbie@contoso.com")
    add(directory(8, "Disable account.", JANE), "user_disabled", JANE, target_user=JANE)
    add(directory(9, "Reset user password.", JANE), "password_change", JANE, target_user=JANE)
    add(directory(10, "Add member to group.", JANE, GROUP), "member_added", JANE, target_user=JANE, group="Finance")
    add(directory(11, "Remove member from group.", JANE, GROUP), "member_removed", JANE, target_user=JANE,
        group="Finance")
    add(directory(12, "Add member to role.", JANE, ROLE), "role_assignment", JANE, target_user=JANE,
        role="Exchange Administrator")
    add(directory(13, "Remove member from role.", JANE, ROLE), "role_removal", JANE, target_user=JANE,
        role="Exchange Administrator")
    add(directory(14, "Add service principal.", "payments-api"), "service_principal_created", "payments-api",
        target_user="payments-api")
    add(directory(15, "Consent to application.", "payments-api"), "permission_change", "payments-api",
        target_user="payments-api")
    add(record(16, "New-InboxRule", EXO_ADMIN, JANE, "jane\\fwd-all", ClientIP="203.0.113.7:51234",
               Parameters=[{"Name": "ForwardTo", "Value": "x@example.net"}]), "config_change", "jane\\fwd-all")
    add(record(17, "Set-Mailbox", EXO_ADMIN, ADMIN, "jane", Parameters=[{"Name": "ForwardingSmtpAddress",
               "Value": "smtp:x@example.net"}]), "config_change", "jane")
    add(record(18, "Add-MailboxPermission", EXO_ADMIN, ADMIN, "jane", ClientIP=..., ClientIPAddress="192.0.2.9"),
        "permission_change", "jane")
    add(record(19, "Add-RoleGroupMember", EXO_ADMIN, ADMIN, "Organization Management"), "role_assignment",
        "Organization Management")
    add(record(20, "MailItemsAccessed", EXO_ITEM, JANE, "jane@contoso.com", ClientIPAddress="198.51.100.20",
               AppId="00000002-0000-0ff1-ce00-000000000000"), "other", "jane@contoso.com")
    add(record(21, "FileDownloaded", SP_FILE, JANE, SITE + "Shared Documents/q1.xlsx", UserAgent=UA,
               SiteUrl=SITE, SourceFileName="q1.xlsx"), "other", SITE + "Shared Documents/q1.xlsx")
    add(record(22, "FileDeleted", SP_FILE, JANE, SITE + "Shared Documents/q2.xlsx", UserAgent=UA, SiteUrl=SITE,
               SourceFileName="q2.xlsx"), "other", SITE + "Shared Documents/q2.xlsx")
    add(record(23, "AnonymousLinkCreated", SP_SHARING, JANE, SITE + "Shared Documents/q1.xlsx", UserAgent=UA,
               SiteUrl=SITE, SourceFileName="q1.xlsx"), "permission_change", SITE + "Shared Documents/q1.xlsx")
    add(record(24, "SharingSet", SP_SHARING, JANE, SITE + "Shared Documents/q1.xlsx", SiteUrl=SITE),
        "permission_change", SITE + "Shared Documents/q1.xlsx")
    add(record(25, "TeamCreated", TEAMS, ADMIN, "", ClientIP=..., TeamName="Finance"), "admin_action", "")
    add(record(26, "MemberAdded", TEAMS, ADMIN, "", ClientIP=..., TeamName="Finance",
               Members=[{"UPN": JANE, "Role": 1}]), "member_added", "")
    add(record(27, "FileAccessed", SP_FILE, "app@sharepoint", SITE + "a.docx", UserType=...,
               UserKey="i:0i.t|00000003-0000-0ff1-ce00-000000000000|app@sharepoint"), "other", SITE + "a.docx")
    add(record(28, "Set-AdminAuditLogConfig", EXO_ADMIN, "NT AUTHORITY\\SYSTEM (Microsoft.Exchange.ServiceHost)",
               "Admin Audit Log Settings", ClientIP=...), "config_change", "Admin Audit Log Settings")
    add(record(29, "UserLoggedIn", STS, JANE, ms, Id=...), "login", ms)
    add(directory(30, "Update user.", JANE, ResultStatus="Failure"), "admin_action", JANE, target_user=JANE)
    add(directory(31, "Add application.", "payments-api"), "service_principal_created", "payments-api",
        target_user="payments-api")
    return c


CASES = _cases()

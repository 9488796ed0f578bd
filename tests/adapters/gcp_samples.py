"""Google Cloud Audit Logs LogEntry records written from the published AuditLog and LogEntry schemas, each with
the event it maps to."""

from __future__ import annotations

from typing import Any

PROJECT = "contoso-prod-4821"
UA = "google-cloud-sdk gcloud/471.0.0 command/gcloud.projects.add-iam-policy-binding"
AUDIT = "type.googleapis.com/google.cloud.audit.AuditLog"


def entry(
    n: int,
    service: str,
    method: str,
    resource_name: str,
    *,
    who: Any = "ops@contoso.example",
    log: str = "activity",
    status: Any = None,
    resource: Any = None,
    extra: Any = None,
    drop: tuple[str, ...] = (),
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "@type": AUDIT,
        "serviceName": service,
        "methodName": method,
        "resourceName": resource_name,
        "authenticationInfo": {"principalEmail": who} if isinstance(who, str) else who,
        "authorizationInfo": [{"resource": resource_name, "permission": f"perm.{n}", "granted": True}],
        "requestMetadata": {"callerIp": "203.0.113.140", "callerSuppliedUserAgent": UA},
    }
    if status is not None:
        payload["status"] = status
    payload.update(extra or {})
    rec: dict[str, Any] = {
        "insertId": f"-x7k2q9e{n:04d}ab",
        "logName": f"projects/{PROJECT}/logs/cloudaudit.googleapis.com%2F{log}",
        "protoPayload": payload,
        "receiveTimestamp": f"2026-04-10T11:{n:02d}:00.812345678Z",
        "resource": resource or {"type": "project", "labels": {"project_id": PROJECT}},
        "severity": "NOTICE",
        "timestamp": f"2026-04-10T11:{n:02d}:00.123456789Z",
    }
    for key in drop:
        if key.startswith("protoPayload."):
            payload.pop(key.split(".", 1)[1])
        else:
            rec.pop(key)
    return rec


def event(
    n: int, kind: str, rec: dict[str, Any], extra: dict[str, str], *, actor: str = "ops@contoso.example", **over: str
) -> dict[str, Any]:
    p = rec["protoPayload"]
    meta = {
        "ip": "203.0.113.140",
        "user_agent": UA,
        "service": p["serviceName"],
        "resource_type": rec["resource"]["type"],
        "severity": "NOTICE",
        "log_name": rec["logName"],
        "iam_permission": f"perm.{n}",
    }
    meta.update(extra)
    return {
        "id": over.get("event_id", f"gcp-audit--x7k2q9e{n:04d}ab"),
        "timestamp": over.get("timestamp", f"2026-04-10T11:{n:02d}:00.123456Z"),
        "source": "gcp",
        "type": kind,
        "actor": actor,
        "org": over.get("org", PROJECT),
        "payload": {
            "action": p["methodName"],
            "target": p.get("resourceName", ""),
            "metadata": dict(sorted((k, v) for k, v in meta.items() if v)),
        },
    }


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    c: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def add(rec: dict[str, Any], kind: str, extra: dict[str, str] | None = None, **over: str) -> None:
        c.append((rec, event(len(c), kind, rec, extra or {}, **over)))

    org = {"type": "audited_resource", "labels": {"service": "login.googleapis.com", "method": "x"}}
    login = "google.login.LoginService.loginSuccess"
    add(
        entry(0, "login.googleapis.com", login, "organizations/123456789", resource=org),
        "login",
        {"resource_type": "audited_resource"},
        org="",
    )
    add(
        entry(
            1,
            "login.googleapis.com",
            "google.login.LoginService.loginFailure",
            "organizations/123456789",
            who="mallory@contoso.example",
            resource=org,
        ),
        "login_failure",
        {"resource_type": "audited_resource"},
        actor="mallory@contoso.example",
        org="",
    )
    add(
        entry(
            2, "login.googleapis.com", "google.login.LoginService.2svEnroll", "organizations/123456789", resource=org
        ),
        "mfa_change",
        {"resource_type": "audited_resource"},
        org="",
    )
    add(
        entry(
            3, "login.googleapis.com", "google.login.LoginService.passwordEdit", "organizations/123456789", resource=org
        ),
        "password_change",
        {"resource_type": "audited_resource"},
        org="",
    )
    admin = "admin.googleapis.com"
    for n, method, kind in [
        (4, "createUser", "user_created"),
        (5, "deleteUser", "user_deleted"),
        (6, "suspendUser", "user_disabled"),
        (7, "unsuspendUser", "user_enabled"),
        (8, "addGroupMember", "member_added"),
        (9, "removeGroupMember", "member_removed"),
        (10, "assignRole", "role_assignment"),
        (11, "unassignRole", "role_removal"),
    ]:
        add(
            entry(n, admin, f"google.admin.AdminService.{method}", "organizations/123456789", resource=org),
            kind,
            {"resource_type": "audited_resource"},
            org="",
        )
    crm = "cloudresourcemanager.googleapis.com"
    grant = {
        "serviceData": {
            "@type": "type.googleapis.com/google.iam.v1.logging.AuditData",
            "policyDelta": {
                "bindingDeltas": [{"action": "ADD", "role": "roles/owner", "member": "user:bob@contoso.example"}]
            },
        }
    }
    add(
        entry(12, crm, "SetIamPolicy", f"projects/{PROJECT}", extra=grant),
        "role_assignment",
        {"role": "roles/owner", "target_user": "user:bob@contoso.example"},
    )
    revoke = {
        "serviceData": {
            "policyDelta": {
                "bindingDeltas": [
                    {
                        "action": "REMOVE",
                        "role": "roles/editor",
                        "member": "serviceAccount:ci@contoso-prod-4821.iam.gserviceaccount.com",
                    }
                ]
            }
        }
    }
    add(
        entry(13, crm, "SetIamPolicy", f"projects/{PROJECT}", extra=revoke),
        "role_removal",
        {"role": "roles/editor", "target_user": "serviceAccount:ci@contoso-prod-4821.iam.gserviceaccount.com"},
    )
    both = {
        "metadata": {
            "@type": "type.googleapis.com/google.cloud.audit.BigQueryAuditMetadata",
            "policyDelta": {
                "bindingDeltas": [
                    {"action": "REMOVE", "role": "roles/viewer", "member": "user:old@contoso.example"},
                    {"action": "ADD", "role": "roles/viewer", "member": "user:new@contoso.example"},
                ]
            },
        }
    }
    add(
        entry(
            14,
            "bigquery.googleapis.com",
            "google.iam.v1.IAMPolicy.SetIamPolicy",
            f"projects/{PROJECT}/datasets/finance",
            extra=both,
        ),
        "api_call",
        {"role": "roles/viewer", "target_user": "user:old@contoso.example"},
    )
    bucket = {
        "type": "gcs_bucket",
        "labels": {"project_id": PROJECT, "bucket_name": "contoso-exports", "location": "us"},
    }
    add(
        entry(
            15,
            "storage.googleapis.com",
            "storage.setIamPermissions",
            "projects/_/buckets/contoso-exports",
            resource=bucket,
        ),
        "permission_change",
        {"resource_type": "gcs_bucket"},
    )
    iam = "iam.googleapis.com"
    sa = f"projects/{PROJECT}/serviceAccounts/deployer@{PROJECT}.iam.gserviceaccount.com"
    add(entry(16, iam, "google.iam.admin.v1.CreateServiceAccount", sa), "service_principal_created")
    add(entry(17, iam, "google.iam.admin.v1.CreateServiceAccountKey", sa), "iam_change")
    add(entry(18, iam, "google.iam.admin.v1.DeleteServiceAccountKey", sa), "iam_change")
    add(entry(19, iam, "google.iam.admin.v1.CreateRole", f"projects/{PROJECT}/roles/auditReader"), "iam_change")
    robot = {
        "principalEmail": f"deployer@{PROJECT}.iam.gserviceaccount.com",
        "serviceAccountKeyName": f"//iam.googleapis.com/{sa}/keys/8f1e2d3c4b5a",
        "serviceAccountDelegationInfo": [{"firstPartyPrincipal": {"principalEmail": "ops@contoso.example"}}],
    }
    add(
        entry(20, "iamcredentials.googleapis.com", "GenerateAccessToken", sa, who=robot, log="data_access"),
        "assume_role",
        {
            "service_account_key": robot["serviceAccountKeyName"],
            "caller": "ops@contoso.example",
            "log_name": f"projects/{PROJECT}/logs/cloudaudit.googleapis.com%2Fdata_access",
        },
        actor=robot["principalEmail"],
    )
    gce = {"type": "gce_firewall_rule", "labels": {"project_id": PROJECT, "firewall_rule_id": "5512"}}
    add(
        entry(
            21,
            "compute.googleapis.com",
            "v1.compute.firewalls.insert",
            f"projects/{PROJECT}/global/firewalls/allow-ssh-all",
            resource=gce,
        ),
        "config_change",
        {"resource_type": "gce_firewall_rule"},
    )
    vm = {"type": "gce_instance", "labels": {"project_id": PROJECT, "zone": "us-central1-a", "instance_id": "88"}}
    add(
        entry(
            22,
            "compute.googleapis.com",
            "v1.compute.instances.insert",
            f"projects/{PROJECT}/zones/us-central1-a/instances/miner-1",
            resource=vm,
        ),
        "config_change",
        {"resource_type": "gce_instance"},
    )
    add(
        entry(
            23,
            "storage.googleapis.com",
            "storage.buckets.create",
            "projects/_/buckets/contoso-exports",
            resource=bucket,
        ),
        "config_change",
        {"resource_type": "gcs_bucket"},
    )
    add(
        entry(
            24,
            "storage.googleapis.com",
            "storage.objects.get",
            "projects/_/buckets/contoso-exports/objects/payroll.csv",
            resource=bucket,
            log="data_access",
        ),
        "api_call",
        {"resource_type": "gcs_bucket", "log_name": f"projects/{PROJECT}/logs/cloudaudit.googleapis.com%2Fdata_access"},
    )
    denied = {"code": 7, "message": "PERMISSION_DENIED"}
    add(
        entry(
            25,
            "storage.googleapis.com",
            "storage.objects.list",
            "projects/_/buckets/contoso-exports",
            resource=bucket,
            status=denied,
            who="intruder@evil.example",
        ),
        "api_call",
        {"resource_type": "gcs_bucket", "status": "7", "reason": "PERMISSION_DENIED"},
        actor="intruder@evil.example",
    )
    add(
        entry(
            26,
            "logging.googleapis.com",
            "google.logging.v2.ConfigServiceV2.DeleteSink",
            f"projects/{PROJECT}/sinks/siem-export",
        ),
        "config_change",
    )
    add(entry(27, crm, "DeleteProject", f"projects/{PROJECT}", status={"code": 0}), "admin_action", {"status": "0"})
    anon = entry(
        28,
        "storage.googleapis.com",
        "storage.objects.get",
        "projects/_/buckets/public-site/objects/x.js",
        who={},
        resource=bucket,
        log="data_access",
    )
    add(
        anon,
        "api_call",
        {"resource_type": "gcs_bucket", "log_name": f"projects/{PROJECT}/logs/cloudaudit.googleapis.com%2Fdata_access"},
        actor="",
    )
    redacted = entry(
        29,
        "bigquery.googleapis.com",
        "jobservice.jobcompleted",
        f"projects/{PROJECT}/jobs/j1",
        who={"principalSubject": "principal://iam.googleapis.com/locations/global/workforcePools/p/subject/s"},
    )
    add(
        redacted,
        "api_call",
        {"principal_id": redacted["protoPayload"]["authenticationInfo"]["principalSubject"]},
        actor=redacted["protoPayload"]["authenticationInfo"]["principalSubject"],
    )
    bare = entry(
        30, crm, "GetIamPolicy", f"projects/{PROJECT}", drop=("insertId", "timestamp", "protoPayload.requestMetadata")
    )
    c.append(
        (
            bare,
            {
                **event(
                    30, "api_call", bare, {}, event_id="gcp-audit-sha256-", timestamp="2026-04-10T11:30:00.812345Z"
                ),
                "payload": {
                    "action": "GetIamPolicy",
                    "target": f"projects/{PROJECT}",
                    "metadata": dict(
                        sorted(
                            {
                                "service": crm,
                                "resource_type": "project",
                                "severity": "NOTICE",
                                "log_name": bare["logName"],
                                "iam_permission": "perm.30",
                            }.items()
                        )
                    ),
                },
            },
        )
    )
    add(
        entry(31, "login.googleapis.com", login, "organizations/123456789", who="carol@contoso.example", resource=org),
        "login",
        {"resource_type": "audited_resource"},
        actor="carol@contoso.example",
        org="",
    )
    return c


CASES = _cases()

"""GitHub audit-log records written from the published audit-log API schema and streaming format, each with
the event it maps to."""

from __future__ import annotations

from typing import Any

BASE_MS = 1775811600000  # 2026-04-10T09:00:00Z
UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/124.0 Safari/537.36"


def stamp(n: int) -> str:
    return f"2026-04-10T09:{n:02d}:00Z"


def record(n: int, action: str, *, actor: Any = "octo-admin", **extra: Any) -> dict[str, Any]:
    """The REST API / streaming shape: `@timestamp` and `created_at` in epoch milliseconds, `_document_id`."""
    rec: dict[str, Any] = {
        "@timestamp": BASE_MS + n * 60_000,
        "action": action,
        "actor": actor,
        "actor_id": 1000 + n,
        "actor_ip": "192.0.2.44",
        "actor_location": {"country_code": "GB"},
        "actor_is_bot": False,
        "business": "contoso-enterprise",
        "business_id": 77,
        "created_at": BASE_MS + n * 60_000,
        "_document_id": f"Ab3dXyZ_{n:04d}-QwErTy12",
        "operation_type": "modify",
        "org": "contoso",
        "org_id": 9001,
        "user_agent": UA,
        "request_id": f"E2C4:{n:04d}:1A2B3C:4D5E6F",
    }
    rec.update(extra)
    return {key: value for key, value in rec.items() if value is not ...}


def event(
    n: int,
    kind: str,
    action: str,
    target: str,
    extra: dict[str, str],
    *,
    actor: str = "octo-admin",
    event_id: str = "",
    timestamp: str = "",
    location: str = "GB",
    org: str = "contoso",
) -> dict[str, Any]:
    metadata = {
        "ip": "192.0.2.44",
        "user_agent": UA,
        "principal_id": str(1000 + n),
        "operation_type": "modify",
        "business": "contoso-enterprise",
        "request_id": f"E2C4:{n:04d}:1A2B3C:4D5E6F",
        "location": location,
    }
    metadata.update(extra)
    return {
        "id": event_id or f"github-audit-Ab3dXyZ_{n:04d}-QwErTy12",
        "timestamp": timestamp or stamp(n),
        "source": "github",
        "type": kind,
        "actor": actor,
        "org": org,
        "payload": {"action": action, "target": target, "metadata": {k: v for k, v in metadata.items() if v}},
    }


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    c: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def add(rec: dict[str, Any], ev: dict[str, Any]) -> None:
        c.append((rec, ev))

    repo = "contoso/payments-api"
    add(
        record(1, "org.add_member", user="newdev", user_id=501, permission="read"),
        event(1, "member_added", "org.add_member", "newdev", {"target_user": "newdev", "role": "read"}),
    )
    add(
        record(2, "org.remove_member", user="leaver", operation_type="remove"),
        event(
            2, "member_removed", "org.remove_member", "leaver", {"target_user": "leaver", "operation_type": "remove"}
        ),
    )
    add(
        record(3, "org.update_member", user="newdev", permission="admin", old_permission="read"),
        event(3, "role_assignment", "org.update_member", "newdev", {"target_user": "newdev", "role": "admin"}),
    )
    add(
        record(4, "team.add_member", user="newdev", team="contoso/security"),
        event(4, "member_added", "team.add_member", "newdev", {"target_user": "newdev", "team": "contoso/security"}),
    )
    add(
        record(5, "team.remove_member", user="newdev", team="contoso/security"),
        event(
            5, "member_removed", "team.remove_member", "newdev", {"target_user": "newdev", "team": "contoso/security"}
        ),
    )
    add(
        record(6, "repo.add_member", repo=repo, user="vendor-bob", permission="write"),
        event(
            6,
            "collaborator_added",
            "repo.add_member",
            repo,
            {"target_user": "vendor-bob", "role": "write", "repo": repo},
        ),
    )
    add(
        record(7, "repo.remove_member", repo=repo, user="vendor-bob"),
        event(7, "member_removed", "repo.remove_member", repo, {"target_user": "vendor-bob", "repo": repo}),
    )
    add(
        record(8, "repo.create", repo="contoso/new-service", visibility="private", operation_type="create"),
        event(
            8,
            "config_change",
            "repo.create",
            "contoso/new-service",
            {"repo": "contoso/new-service", "operation_type": "create"},
        ),
    )
    add(
        record(9, "repo.destroy", repo="contoso/old-service", operation_type="remove"),
        event(
            9,
            "config_change",
            "repo.destroy",
            "contoso/old-service",
            {"repo": "contoso/old-service", "operation_type": "remove"},
        ),
    )
    add(
        record(10, "repo.access", repo=repo, visibility="public", previous_visibility="private"),
        event(10, "config_change", "repo.access", repo, {"repo": repo}),
    )
    add(
        record(11, "protected_branch.destroy", repo=repo, branch="main", name="main"),
        event(11, "config_change", "protected_branch.destroy", repo, {"repo": repo}),
    )
    add(
        record(12, "protected_branch.policy_override", repo=repo, branch="main"),
        event(12, "admin_action", "protected_branch.policy_override", repo, {"repo": repo}),
    )
    add(
        record(13, "org.oauth_app_access_approved", oauth_application="ci-dashboard"),
        event(13, "iam_change", "org.oauth_app_access_approved", "contoso", {}),
    )
    add(
        record(14, "personal_access_token.access_granted", user="octo-admin", programmatic_access_type="Fine-grained"),
        event(
            14,
            "iam_change",
            "personal_access_token.access_granted",
            "octo-admin",
            {"target_user": "octo-admin", "token_type": "Fine-grained"},
        ),
    )
    add(
        record(15, "integration_installation.create", integration="renovate", operation_type="create"),
        event(
            15, "service_principal_created", "integration_installation.create", "contoso", {"operation_type": "create"}
        ),
    )
    add(
        record(16, "oauth_application.create", oauth_application_name="deploy-bot", operation_type="create"),
        event(16, "service_principal_created", "oauth_application.create", "contoso", {"operation_type": "create"}),
    )
    add(
        record(17, "business.add_admin", user="newdev", org=...),
        event(17, "role_assignment", "business.add_admin", "newdev", {"target_user": "newdev"}, org=""),
    )
    add(
        record(18, "business.remove_admin", user="newdev", org=...),
        event(18, "role_removal", "business.remove_admin", "newdev", {"target_user": "newdev"}, org=""),
    )
    add(
        record(19, "user.login", actor="newdev", org=...),
        event(19, "login", "user.login", "", {}, actor="newdev", org=""),
    )
    add(
        record(20, "user.failed_login", actor="newdev", org=..., actor_location={"country_code": "br"}),
        event(20, "login_failure", "user.failed_login", "", {}, actor="newdev", org="", location="BR"),
    )
    add(
        record(21, "two_factor_authentication.disabled", actor="newdev", user="newdev", org=...),
        event(
            21,
            "mfa_change",
            "two_factor_authentication.disabled",
            "newdev",
            {"target_user": "newdev"},
            actor="newdev",
            org="",
        ),
    )
    add(
        record(22, "org.disable_two_factor_requirement"),
        event(22, "mfa_change", "org.disable_two_factor_requirement", "contoso", {}),
    )
    add(
        record(23, "git.push", repo=repo, repository=repo, actor="ci-bot", transport_protocol_name="http"),
        event(23, "push", "git.push", repo, {"repo": repo}, actor="ci-bot"),
    )
    add(
        record(24, "git.clone", repo=repo, actor="vendor-bob", operation_type="access"),
        event(24, "api_call", "git.clone", repo, {"repo": repo, "operation_type": "access"}, actor="vendor-bob"),
    )
    add(
        record(25, "team.add_repository", repo=repo, team="contoso/payments", permission="maintain"),
        event(
            25,
            "permission_change",
            "team.add_repository",
            repo,
            {"repo": repo, "team": "contoso/payments", "role": "maintain"},
        ),
    )
    add(
        record(26, "org.update_default_repository_permission", permission="write"),
        event(26, "permission_change", "org.update_default_repository_permission", "contoso", {"role": "write"}),
    )
    add(
        record(27, "hook.create", repo=repo, hook_id=42, config={"url": "https://hooks.example.com/x"}),
        event(27, "config_change", "hook.create", repo, {"repo": repo}),
    )
    add(
        record(28, "workflows.completed_workflow_run", repo=repo, actor="ci-bot", workflow_run_id=123456),
        event(28, "other", "workflows.completed_workflow_run", repo, {"repo": repo}, actor="ci-bot"),
    )
    add(
        record(
            29, "dependabot_alerts.enable", actor=..., actor_id=..., actor_ip=..., user_agent=..., actor_location=...
        ),
        {
            **event(29, "other", "dependabot_alerts.enable", "contoso", {}, actor="", location=""),
            "payload": {
                "action": "dependabot_alerts.enable",
                "target": "contoso",
                "metadata": {
                    "operation_type": "modify",
                    "business": "contoso-enterprise",
                    "request_id": "E2C4:0029:1A2B3C:4D5E6F",
                },
            },
        },
    )
    no_id = record(30, "repo.archived", repo=repo)
    del no_id["_document_id"]
    add(no_id, event(30, "config_change", "repo.archived", repo, {"repo": repo}, event_id="github-audit-sha256-"))
    export = record(31, "org.invite_member", user="contractor")
    del export["@timestamp"]
    export["created_at"] = "2026-04-10T10:31:00.000+01:00"
    add(export, event(31, "other", "org.invite_member", "contractor", {"target_user": "contractor"}))
    streamed = record(32, "repo.update_member", repo=repo, user="vendor-bob", permission="admin")
    del streamed["created_at"]
    add(
        streamed,
        event(
            32,
            "permission_change",
            "repo.update_member",
            repo,
            {"repo": repo, "target_user": "vendor-bob", "role": "admin"},
        ),
    )
    add(
        record(33, "public_key.create", actor_location={"country_name": "Germany"}),
        event(33, "iam_change", "public_key.create", "contoso", {}, location="DE"),
    )
    add(
        record(34, "user.create", user="managed-user_contoso", org=..., operation_type="create"),
        event(
            34,
            "user_created",
            "user.create",
            "managed-user_contoso",
            {"target_user": "managed-user_contoso", "operation_type": "create"},
            org="",
        ),
    )
    return c


CASES = _cases()

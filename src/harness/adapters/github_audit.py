"""GitHub audit log: the REST API (`GET /orgs/{org}/audit-log`, an array per page), the JSON export (an
array) and audit log streaming (one record per line, `@timestamp` in epoch milliseconds, `_document_id`).

Actor: `actor` (the login). GitHub writes events with no actor (some done by GitHub itself), so an empty
actor is kept empty rather than refused. Time: `@timestamp`, else `created_at` (either epoch milliseconds or
an RFC 3339 string). Target: the repository, else the user acted on, else the team, else the organization.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters.fields import text
from harness.adapters.table import Derived, Format, Table, array_or_record, first_record, map_record
from harness.text.geo import country_code

TABLE = Table(
    format="github-audit",
    source="github",
    id_path="_document_id",
    time_paths=("@timestamp", "created_at", "timestamp"),
    action_path="action",
    types={
        "user.login": "login",
        "user.failed_login": "login_failure",
        "user.two_factor_requested": "login",
        "user.create": "user_created",
        "user.destroy": "user_deleted",
        "user.suspend": "user_disabled",
        "user.unsuspend": "user_enabled",
        "user.change_password": "password_change",
        "user.forgot_password": "password_change",
        "two_factor_authentication.enabled": "mfa_change",
        "two_factor_authentication.disabled": "mfa_change",
        "two_factor_authentication.recovery_codes_regenerated": "mfa_change",
        "org.disable_two_factor_requirement": "mfa_change",
        "org.enable_two_factor_requirement": "mfa_change",
        "org.add_member": "member_added",
        "org.remove_member": "member_removed",
        "org.remove_outside_collaborator": "member_removed",
        "team.add_member": "member_added",
        "team.remove_member": "member_removed",
        "repo.add_member": "collaborator_added",
        "repo.remove_member": "member_removed",
        "org.update_member": "role_assignment",
        "org.add_billing_manager": "role_assignment",
        "business.add_admin": "role_assignment",
        "business.remove_admin": "role_removal",
        "team.promote_maintainer": "role_assignment",
        "team.demote_maintainer": "role_removal",
        "org.remove_billing_manager": "role_removal",
        "org.update_default_repository_permission": "permission_change",
        "org.update_member_repository_creation_permission": "permission_change",
        "team.add_repository": "permission_change",
        "team.update_repository_permission": "permission_change",
        "repo.update_member": "permission_change",
        "oauth_application.create": "service_principal_created",
        "integration_installation.create": "service_principal_created",
        "org.oauth_app_access_approved": "iam_change",
        "personal_access_token.access_granted": "iam_change",
        "personal_access_token.request_created": "iam_change",
        "org_credential_authorization.grant": "iam_change",
        "public_key.create": "iam_change",
        "public_key.delete": "iam_change",
        "repo.create": "config_change",
        "repo.destroy": "config_change",
        "repo.access": "config_change",
        "repo.archived": "config_change",
        "repo.transfer": "config_change",
        "protected_branch.create": "config_change",
        "protected_branch.destroy": "config_change",
        "protected_branch.update_admin_enforced": "config_change",
        "protected_branch.policy_override": "admin_action",
        "repository_secret_scanning_push_protection.disable": "config_change",
        "org.update_actions_secret": "config_change",
        "hook.create": "config_change",
        "hook.destroy": "config_change",
        "git.push": "push",
        "git.clone": "api_call",
        "git.fetch": "api_call",
    },
    target_paths=("repo", "user", "team", "org"),
    org_paths=("org",),
    metadata={
        "ip": ("actor_ip",),
        "user_agent": ("user_agent",),
        "principal_id": ("actor_id",),
        "target_user": ("user",),
        "role": ("permission", "role"),
        "team": ("team",),
        "repo": ("repo",),
        "operation_type": ("operation_type",),
        "business": ("business",),
        "token_type": ("programmatic_access_type",),
        "request_id": ("request_id",),
    },
    actor_rule="`actor` (the login); may be empty, since GitHub records some events with no actor.",
    derived={"location": "ISO 3166 alpha-2 code of `actor_location.country_code` (or `country_name`)"},
)


def _derive(record: dict[str, Any], kind: str) -> Derived:
    return Derived(
        actor=text(record, "actor"),
        metadata={"location": country_code(text(record, "actor_location.country_code", "actor_location.country_name"))},
    )


def to_event(record: Any) -> dict[str, Any]:
    """One audit-log record as a harness event."""
    return map_record(TABLE, record, _derive)


def detect(document: Any) -> bool:
    """An audit-log record: a string `action` with `@timestamp` or `created_at`, and an actor, org or
    `_document_id`."""
    record = first_record(document)
    return (
        isinstance(record, dict)
        and isinstance(record.get("action"), str)
        and any(key in record for key in ("@timestamp", "created_at"))
        and any(key in record for key in ("_document_id", "actor", "org", "business"))
    )


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """A page or export (array) of records, or one streamed record."""
    yield from array_or_record(document)


FORMAT = Format("github-audit", "github", detect, records, to_event, TABLE)

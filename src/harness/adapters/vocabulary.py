"""The one event-type vocabulary every adapter maps onto (README, "Loading your data").

The baseline, the views and the rule corpus read these names; an adapter table naming a type that is not
here is a bug, caught when the table is built.
"""

from __future__ import annotations

GENERIC_TYPE = "other"

EVENT_TYPES: dict[str, str] = {
    "login": "a successful sign-in (console, SSO, session start)",
    "login_failure": "a refused sign-in",
    "mfa_change": "a second factor enrolled, removed or reset",
    "password_change": "a password set, changed or reset",
    "user_created": "an account created",
    "user_deleted": "an account deleted",
    "user_disabled": "an account deactivated, suspended or locked",
    "user_enabled": "an account activated, reactivated or unlocked",
    "member_added": "an account added to a group, team, organization or application",
    "member_removed": "an account removed from a group, team, organization or application",
    "collaborator_added": "an outside collaborator given access to a repository",
    "role_assignment": "a role or admin privilege granted",
    "role_removal": "a role, privilege or policy taken away",
    "permission_change": "a policy attached or a permission level changed",
    "iam_change": "an identity, credential, key, token or trust changed",
    "assume_role": "temporary credentials obtained for a role",
    "service_principal_created": "an application or service identity created",
    "admin_action": "an administrative action with no more specific type",
    "config_change": "a security-relevant setting or resource configuration changed",
    "push": "code pushed to a repository",
    "api_call": "any other API call the source records",
    GENERIC_TYPE: "an event the source's table does not map (the vendor name is in `action`)",
}


def check_types(where: str, types: object) -> None:
    """Refuse a table naming a type outside the vocabulary (a bug in the table, found at import)."""
    names = types.values() if isinstance(types, dict) else types
    unknown = sorted({name for name in names if name not in EVENT_TYPES})  # type: ignore[union-attr]
    if unknown:
        raise ValueError(f"{where}: types outside the vocabulary: {', '.join(unknown)}")

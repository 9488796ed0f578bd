"""AWS CloudTrail: S3 log files, JSON Lines of records, `aws cloudtrail lookup-events` output and CloudTrail
Lake query results (README, "Loading your data").

Actor: an IAM user's name; for an assumed role, the role session name (the role in `actor_role`); for a
federated user, its name; for the root user, `root`; for a service, the service (`invokedBy`); else the
principal id. Every CloudTrail record has a `userIdentity`, so no actor is an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters.fields import AdapterError, embedded_record, get, text
from harness.adapters.lakemap import read_lake_map
from harness.adapters.table import Derived, Format, Table, array_or_record, first_record, listed, map_record
from harness.text.canonjson import json_type

_POLICY = ("permission_change", "role_removal")
# The kinds whose `role` the baseline reads as what the event granted (store/baseline.py ROLE_TYPES): for these,
# `role` is only ever what was granted, never the caller's own assumed role.
_GRANTS = frozenset({*_POLICY, "assume_role", "member_added", "iam_change"})

TABLE = Table(
    format="cloudtrail",
    source="aws",
    id_path="eventID",
    time_paths=("eventTime",),
    action_path="eventName",
    types={
        "ConsoleLogin": "login",
        "CheckMfa": "login",
        "CreateUser": "user_created",
        "DeleteUser": "user_deleted",
        "AddUserToGroup": "member_added",
        "RemoveUserFromGroup": "member_removed",
        "AttachUserPolicy": "permission_change",
        "AttachRolePolicy": "permission_change",
        "AttachGroupPolicy": "permission_change",
        "PutUserPolicy": "permission_change",
        "PutRolePolicy": "permission_change",
        "PutGroupPolicy": "permission_change",
        "PutUserPermissionsBoundary": "permission_change",
        "PutRolePermissionsBoundary": "permission_change",
        "DeleteUserPermissionsBoundary": "permission_change",
        "DeleteRolePermissionsBoundary": "permission_change",
        "DetachUserPolicy": "role_removal",
        "DetachRolePolicy": "role_removal",
        "DetachGroupPolicy": "role_removal",
        "DeleteUserPolicy": "role_removal",
        "DeleteRolePolicy": "role_removal",
        "DeleteGroupPolicy": "role_removal",
        "CreateRole": "iam_change",
        "DeleteRole": "iam_change",
        "UpdateAssumeRolePolicy": "iam_change",
        "CreateAccessKey": "iam_change",
        "DeleteAccessKey": "iam_change",
        "UpdateAccessKey": "iam_change",
        "CreatePolicy": "iam_change",
        "CreatePolicyVersion": "iam_change",
        "SetDefaultPolicyVersion": "iam_change",
        "CreateLoginProfile": "password_change",
        "UpdateLoginProfile": "password_change",
        "DeleteLoginProfile": "password_change",
        "ChangePassword": "password_change",
        "PasswordRecoveryRequested": "password_change",
        "CreateVirtualMFADevice": "mfa_change",
        "EnableMFADevice": "mfa_change",
        "DeactivateMFADevice": "mfa_change",
        "DeleteVirtualMFADevice": "mfa_change",
        "ResyncMFADevice": "mfa_change",
        "AssumeRole": "assume_role",
        "AssumeRoleWithSAML": "assume_role",
        "AssumeRoleWithWebIdentity": "assume_role",
        "CreateServiceLinkedRole": "service_principal_created",
        "StopLogging": "config_change",
        "DeleteTrail": "config_change",
        "UpdateTrail": "config_change",
        "PutEventSelectors": "config_change",
        "PutBucketPolicy": "config_change",
        "DeleteBucketPolicy": "config_change",
        "PutBucketAcl": "config_change",
        "PutBucketPublicAccessBlock": "config_change",
        "DeletePublicAccessBlock": "config_change",
        "AuthorizeSecurityGroupIngress": "config_change",
        "RevokeSecurityGroupIngress": "config_change",
        "ModifyInstanceAttribute": "config_change",
        "DisableKey": "config_change",
        "ScheduleKeyDeletion": "config_change",
    },
    fallback_path="eventType",
    fallback_types={"AwsApiCall": "api_call", "AwsConsoleSignIn": "login"},
    target_paths=(
        "requestParameters.userName",
        "requestParameters.roleName",
        "requestParameters.roleArn",
        "requestParameters.groupName",
        "requestParameters.policyArn",
        "requestParameters.bucketName",
        "requestParameters.trailName",
        "requestParameters.name",
        "requestParameters.groupId",
        "requestParameters.instanceId",
        "requestParameters.keyId",
    ),
    org_paths=("recipientAccountId", "userIdentity.accountId"),
    metadata={
        "ip": ("sourceIPAddress",),
        "user_agent": ("userAgent",),
        "principal_id": ("userIdentity.principalId",),
        "caller": ("userIdentity.arn",),
        "identity_type": ("userIdentity.type",),
        "aws_region": ("awsRegion",),
        "event_source": ("eventSource",),
        "error_code": ("errorCode",),
        "target_user": ("requestParameters.userName",),
        "group": ("requestParameters.groupName",),
        "mfa_used": ("additionalEventData.MFAUsed",),
    },
    actor_rule=(
        "IAM user: `userName`; AssumedRole: the session name (last part of `arn`); FederatedUser: its name; Root: "
        "`root`; AWSService: `invokedBy`; otherwise `userName`, `onBehalfOf.userId`, `principalId` or `invokedBy`. "
        "Required."
    ),
    derived={
        "session_name": "AssumedRole: the role session name",
        "actor_role": "AssumedRole: the role (`sessionContext.sessionIssuer.userName`)",
        "role": "policy events: the policy granted or removed (last part of `policyArn`, or `policyName`); "
        "AssumeRole: the role assumed; AddUserToGroup: the group; other IAM changes: none; otherwise the actor's "
        "assumed role",
        "type": "`login_failure` when a sign-in has `responseElements.ConsoleLogin` = Failure or an `errorMessage`",
    },
)


def _last_segment(arn: str) -> str:
    return arn.rsplit("/", 1)[-1] if "/" in arn else arn.rsplit(":", 1)[-1]


def _actor(identity: Any) -> tuple[str, dict[str, str]]:
    kind = text(identity, "type")
    arn = text(identity, "arn")
    if kind == "AssumedRole":
        from_arn = arn.split("/")[1] if arn.count("/") >= 2 else ""
        role = text(identity, "sessionContext.sessionIssuer.userName") or from_arn
        session = _last_segment(arn) if arn else text(identity, "principalId").rpartition(":")[2]
        return session, {"session_name": session, "actor_role": role}
    if kind == "FederatedUser":
        return _last_segment(arn) if arn else text(identity, "principalId"), {}
    if kind == "Root":
        return "root", {}
    if kind == "AWSService":
        return text(identity, "invokedBy"), {}
    actor = text(identity, "userName", "onBehalfOf.userId", "principalId", "invokedBy")
    return actor or (_last_segment(arn) if arn else ""), {}


def _granted(record: dict[str, Any], kind: str) -> str:
    """The role or policy an IAM event grants or removes (what the baseline's elevated-role rule reads)."""
    if kind in _POLICY:
        policy = text(record, "requestParameters.policyArn")
        return _last_segment(policy) if policy else text(record, "requestParameters.policyName")
    if kind == "assume_role":
        role = text(record, "requestParameters.roleArn")
        return _last_segment(role) if role else ""
    if kind == "member_added":
        return text(record, "requestParameters.groupName")
    return ""


def _derive(record: dict[str, Any], kind: str) -> Derived:
    identity = get(record, "userIdentity")
    if not isinstance(identity, dict):
        raise AdapterError("userIdentity", f"expected an object, got {json_type(identity)}")
    actor, metadata = _actor(identity)
    if not actor:
        raise AdapterError("userIdentity", "has no user name, session, principal id or invoking service")
    failed = kind == "login" and (
        text(record, "responseElements.ConsoleLogin") == "Failure" or bool(text(record, "errorMessage"))
    )
    role = _granted(record, kind) if kind in _GRANTS else metadata.get("actor_role", "")
    return Derived(actor=actor, metadata={**metadata, "role": role}, type="login_failure" if failed else "")


def _lake_row(row: list[Any]) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for cell in row:
        if not isinstance(cell, dict) or len(cell) != 1:
            raise AdapterError("QueryResultRows", "each cell must be an object with one column")
        ((column, value),) = cell.items()
        record[column] = read_lake_map(value) if isinstance(value, str) else value
    return record



def to_event(item: Any) -> dict[str, Any]:
    """One CloudTrail record (or lookup-events item, or Lake row) as a harness event."""
    if isinstance(item, list):
        item = _lake_row(item)
    elif isinstance(item, dict) and "CloudTrailEvent" in item:
        item = embedded_record(item, "CloudTrailEvent")
    return map_record(TABLE, item, _derive)


def _is_record(value: Any) -> bool:
    return isinstance(value, dict) and (
        "CloudTrailEvent" in value or all(key in value for key in ("eventVersion", "eventSource", "eventName"))
    )


def detect(document: Any) -> bool:
    """S3 files and lookup-events / Lake outputs by their envelope key; records by their required fields."""
    if isinstance(document, dict):
        if isinstance(document.get("Records"), list):
            return all(_is_record(item) for item in document["Records"][:1])
        if isinstance(document.get("Events"), list):
            return all(_is_record(item) for item in document["Events"][:1])
        if isinstance(document.get("QueryResultRows"), list):
            return True
    return _is_record(first_record(document))


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """The records of one document: an envelope's items, an array's items, or the record itself."""
    if isinstance(document, dict):
        for key in ("Records", "Events", "QueryResultRows"):
            if key in document and not _is_record(document):
                yield from listed(document, key)
                return
    yield from array_or_record(document)


FORMAT = Format("cloudtrail", "aws", detect, records, to_event, TABLE)

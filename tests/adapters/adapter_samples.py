"""Every format's real-shaped sample records, by `--format` name: the one list the mapping and ingest tests share."""

from __future__ import annotations

import azure_activity_samples
import cloudtrail_samples
import entra_audit_samples
import entra_signin_samples
import gcp_samples
import github_samples
import google_samples
import m365_samples
import ocsf_samples
import okta_samples
import slack_samples

SAMPLES = {
    "cloudtrail": cloudtrail_samples.CASES,
    "okta": okta_samples.CASES,
    "github-audit": github_samples.CASES,
    "entra-signin": entra_signin_samples.CASES,
    "entra-audit": entra_audit_samples.CASES,
    "azure-activity": azure_activity_samples.CASES,
    "m365": m365_samples.CASES,
    "google-workspace": google_samples.CASES,
    "slack-audit": slack_samples.CASES,
    "gcp-audit": gcp_samples.CASES,
    "ocsf": ocsf_samples.CASES,
}

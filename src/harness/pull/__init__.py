"""Live pulls (issue 15): the GitHub audit log and the Okta System Log, page by page over harness/net into the
store, with a resumable cursor in the workspace (README, "Live pulls"; docs/decisions.md, "Live pulls")."""

from harness.pull.run import pull
from harness.pull.sources import Source, github_audit_source, okta_source

__all__ = ["Source", "github_audit_source", "okta_source", "pull"]

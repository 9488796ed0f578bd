"""Pure text functions shared by every capability (no I/O)."""

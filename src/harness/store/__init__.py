"""The git-backed store of events, findings and baselines, and its read index (docs/investigate.md §2 to §6).

Operations read through `Store.snapshot()` (one commit per call) and write through `Store.append_batch`,
`harness.store.ingest.ingest_files` and `build_baseline`; `load_baseline_file` reads a `--baseline` file;
`init_bare` creates an empty store as `harness init` does. Ingest is not re-exported here: it loads every input
adapter, which no read needs (docs/decisions.md, issue 11).
"""

from harness.store.append import AppendResult, StoredConflict
from harness.store.baseline import build_baseline, load_baseline_file
from harness.store.baseline_model import Baseline
from harness.store.git import init_bare
from harness.store.query import Page, RecordFilter, StoreView
from harness.store.store import Store, default_index_path

__all__ = [
    "AppendResult",
    "Baseline",
    "Page",
    "RecordFilter",
    "Store",
    "StoreView",
    "StoredConflict",
    "build_baseline",
    "default_index_path",
    "init_bare",
    "load_baseline_file",
]

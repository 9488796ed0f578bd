"""Log adapters (issue 15): vendor records -> harness events. Pure functions, no I/O.

`registry.ADAPTERS` maps a format name to its `table.Format`; `registry.choose` is `--format auto`;
`vocabulary.EVENT_TYPES` is the one list of event types every table maps onto.
"""

from harness.adapters.fields import AdapterError
from harness.adapters.registry import ADAPTERS, AUTO, FORMAT_NAMES, HARNESS, choose, is_harness_shape
from harness.adapters.table import Derived, Format, Table
from harness.adapters.vocabulary import EVENT_TYPES, GENERIC_TYPE

__all__ = [
    "ADAPTERS",
    "AUTO",
    "AdapterError",
    "Derived",
    "EVENT_TYPES",
    "FORMAT_NAMES",
    "Format",
    "GENERIC_TYPE",
    "HARNESS",
    "Table",
    "choose",
    "is_harness_shape",
]

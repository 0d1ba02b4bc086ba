"""Every file kadmin writes goes through here, and so do the JSON reads whose errors an operator
sees. One module per rule:

- :mod:`.atomic`     atomic writes and the one rule of what a write may replace
- :mod:`.regular`    regular files only, checked on the descriptor
- :mod:`.reading`    bounded reads of bytes, JSON documents and JSON Lines
- :mod:`.layout`     the JSON text of every file kadmin writes
- :mod:`.collector`  the garbage collector paused while millions of containers are built
- :mod:`.locks`      one kadmin process per plan
- :mod:`.names`      the plan file's name and those of its rollback and journal

Everything is also importable from :mod:`kadmin.files` itself.
"""

from kadmin.files.atomic import (
    ReadBack,
    atomic_dir,
    atomic_write_bytes,
    atomic_write_dir,
    atomic_write_files,
    atomic_write_json,
    check_place,
    check_target,
    open_append,
)
from kadmin.files.collector import gc_paused
from kadmin.files.layout import dumps_json
from kadmin.files.locks import exclusive
from kadmin.files.names import (
    JOURNAL_SUFFIX,
    ROLLBACK_SUFFIX,
    journal_of,
    plan_paths,
    rollback_of,
    sibling,
)
from kadmin.files.reading import (
    DEFAULT_MAX_BYTES,
    GB,
    MAX_JSONL_BYTES,
    MAX_JSONL_LINE,
    MB,
    CountedJson,
    LocatedJson,
    UnreadableJson,
    check_jsonl_line,
    check_jsonl_size,
    iter_jsonl,
    parse_json,
    read_bytes,
    read_json,
    read_json_counting,
    read_json_located,
)
from kadmin.files.regular import open_regular, require_regular

__all__ = ["DEFAULT_MAX_BYTES", "GB", "JOURNAL_SUFFIX", "MAX_JSONL_BYTES", "MAX_JSONL_LINE", "MB",
           "ROLLBACK_SUFFIX", "CountedJson", "LocatedJson", "ReadBack", "UnreadableJson",
           "atomic_dir",
           "atomic_write_bytes", "atomic_write_dir", "atomic_write_files", "atomic_write_json",
           "check_jsonl_line", "check_jsonl_size", "check_place", "check_target", "dumps_json",
           "exclusive",
           "gc_paused", "iter_jsonl", "journal_of", "open_append", "open_regular", "parse_json",
           "plan_paths", "read_bytes", "read_json", "read_json_counting", "read_json_located",
           "require_regular", "rollback_of", "sibling"]

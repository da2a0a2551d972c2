"""The Python side of the environment table (csrc/engine/env.cc declares
every TORCH_PJRT_* variable). Reading a name the table does not declare is
an error, so a variable cannot be added without its documentation."""
import os

from . import _C

_DECLARED = {name: (fallback, doc) for name, fallback, doc in _C._environment()}


def get(name, default=None):
    """The variable's value, or default when unset or empty."""
    if name not in _DECLARED:
        raise KeyError(f"{name} is not declared in csrc/engine/env.cc")
    value = os.environ.get(name, "")
    return value if value else default


def markdown_table() -> str:
    """The README's table of environment variables."""
    rows = ["| Variable | Default | Meaning |", "|---|---|---|"]
    for name, (fallback, doc) in _DECLARED.items():
        rows.append(f"| `{name}` | {fallback} | {doc} |")
    return "\n".join(rows) + "\n"

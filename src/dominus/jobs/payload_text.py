"""Whether a payload model validates a stored payload's JSON text as it validates the dict
decoded from it.

A claimed job carries its payload as the JSON text read from its row (`Job.payload_text`), and
`model_validate_json` of that text costs less than `json.loads` and `model_validate` of the
dict. The two take the same values for most models, but not for all: a smart union picks
its member by how exactly the input matches, and a JSON string is an exact datetime, UUID or
enum value where a Python `str` is only an exact `str` (`datetime | str` gives a datetime from
the text and a `str` from the dict); strict validation refuses a `str` for a datetime in a dict
but not in JSON text; bytes, instance checks and `json_or_python` schemas differ by design. A
model whose schema holds any of these is validated from the dict, as it always was.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

# Core schema types whose result may depend on the input being JSON text or Python values.
_MODE_DEPENDENT = frozenset(
    {"union", "json-or-python", "bytes", "is-instance", "is-subclass", "callable"}
)
# Keys of a core schema node that hold no validation schema (a serializer's schema, a
# default value, the model's class, pydantic's own notes).
_NOT_VALIDATION = frozenset({"serialization", "default", "cls", "metadata", "ref"})


def validates_text_as_dict(model: type[BaseModel]) -> bool:
    """Whether `model.model_validate_json(text)` accepts and makes what
    `model.model_validate(json.loads(text))` would, for any text: its schema holds nothing
    whose validation depends on the input's mode (see the module's docstring)."""
    return not _mode_dependent(model.__pydantic_core_schema__)


def _mode_dependent(node: Any) -> bool:
    if isinstance(node, dict):
        if node.get("type") in _MODE_DEPENDENT or node.get("strict") is True:
            return True
        return any(
            _mode_dependent(value) for key, value in node.items() if key not in _NOT_VALIDATION
        )
    if isinstance(node, list | tuple):
        return any(_mode_dependent(item) for item in node)
    return False

"""An agent's output as plain JSON data, or the trial's error when it has no JSON form.

Outputs are stored and reported as JSON (:func:`ablation.schema.to_jsonable`). A value with no JSON
form would otherwise be stored as its ``repr``: for a lock, a socket or an instance of a custom
class that is text such as ``<_thread.lock object at 0x7f...>``, which differs between runs and
says nothing about the answer, while the verifier judged the object itself. Such an output is that
trial's error instead, naming the type (:class:`UnrepresentableOutput`, stage ``agent``).

Standard-library value types whose ``repr`` is stable and says what the value is (enums, dates and
times, ``Decimal``, ``Fraction``, ``UUID``, paths, ``complex``, ``range``) keep being stored as
their ``repr``. An agent that wants any other object kept as text returns ``repr(obj)`` itself.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import fractions
import pathlib
import uuid
from typing import Any

from ablation.errors import AblationError
from ablation.schema import to_jsonable

__all__ = ["UnrepresentableOutput", "plain_output"]

#: Types stored as their ``repr``: stable between runs, and the text names the value.
_STABLE_REPR = (
    enum.Enum, datetime.date, datetime.time, datetime.timedelta, decimal.Decimal,
    fractions.Fraction, uuid.UUID, pathlib.PurePath, complex, range,
)  # fmt: skip


class UnrepresentableOutput(AblationError, TypeError):
    """An agent's output holds a value that has no JSON form (see the module docstring)."""


def _refuse(value: Any) -> None:
    if isinstance(value, _STABLE_REPR):
        return
    kind = type(value)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    raise UnrepresentableOutput(
        f"the agent's output holds a {name}, which has no JSON form; return plain data (str, "
        "numbers, lists, dicts, dataclasses, pydantic models), or repr() of it to keep it as text"
    )


def plain_output(output: Any) -> Any:
    """``output`` as JSON data (:func:`~ablation.schema.to_jsonable`).

    Raises:
        UnrepresentableOutput: when a value in ``output`` would fall back to its ``repr`` and is
            not one of the standard value types listed in the module docstring.
    """
    return to_jsonable(output, on_repr=_refuse)

"""One line for a validation error: an unknown field names the known ones only when there are some.

A reply's ``usage`` with a misspelt key read "unknown field 'usage.requests' (known fields: )":
the caller gave no known fields, and the line promised a list it did not hold.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from ablation.errors import validation_line


class _Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input_tokens: int = 0
    model_requests: int = 0


def _error(**fields: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _Usage(**fields)  # type: ignore[arg-type]
    return info.value


def test_without_known_fields_the_line_names_the_field_alone() -> None:
    line = validation_line(_error(requests=1))
    assert line == "unknown field 'requests'"


def test_with_known_fields_it_suggests_the_closest_or_lists_them() -> None:
    known = list(_Usage.model_fields)
    assert validation_line(_error(model_request=1), known) == "unknown field 'model_request' (did you mean 'model_requests'?)"
    assert validation_line(_error(zzz=1), known) == "unknown field 'zzz' (known fields: input_tokens, model_requests)"

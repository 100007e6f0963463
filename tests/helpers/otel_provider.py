"""A global OpenTelemetry SDK provider for one test, taken away again afterwards.

OpenTelemetry allows one global provider per process and offers no way to unset it; a provider
left behind would make every later campaign of the test worker collect spans. The fixture sets
one SDK provider (the same object each time, so tracers made at import keep working) and resets
the API module's private globals afterwards (test-only; the library never does).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_PROVIDER: Any = None


def sdk_provider_for_one_test() -> Iterator[None]:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.util._once import Once

    global _PROVIDER
    before = trace._TRACER_PROVIDER
    if before is None:
        _PROVIDER = _PROVIDER or TracerProvider()
        trace.set_tracer_provider(_PROVIDER)
    try:
        yield
    finally:
        if before is None:
            trace._TRACER_PROVIDER = None
            trace._TRACER_PROVIDER_SET_ONCE = Once()


def chat_span(tracer: Any, model: str, tokens: tuple[int, int] | None) -> Any:
    """A GenAI ``chat`` span of ``model`` (as an instrumented client starts one) stating ``tokens``
    (input, output) as ``gen_ai.usage.*``, or no usage when ``None``."""
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                                  "gen_ai.response.model": model}  # fmt: skip
    if tokens is not None:
        attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"] = tokens
    return tracer.start_as_current_span(f"chat {model}", attributes=attributes)

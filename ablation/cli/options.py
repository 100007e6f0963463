"""Options from ``[tool.ablation]`` and the command line, merged into a :class:`CampaignConfig`."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["campaign_config", "merged_settings", "one_line", "read_options"]


def merged_settings(args: argparse.Namespace) -> dict[str, Any]:
    from ablation.cli.settings import load_tool_settings

    merged = dict(load_tool_settings())
    for key, value in vars(args).items():
        if value is not None and value is not False and value != []:
            merged[key] = value
    return merged


def campaign_config(s: dict[str, Any]) -> Any:
    from ablation.config import CampaignConfig
    from ablation.errors import ConfigError

    labels = dict(s.get("labels", {}))
    for item in s.get("label", []):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--label needs KEY=VALUE, got {item!r}")
        labels[key] = value
    fields: dict[str, Any] = {"labels": labels, "prices": s.get("prices") or {}}
    simple = {
        "seed": "seed", "concurrency": "concurrency", "timeout": "timeout_s", "runs": "runs",
        "on_error": "on_error", "alpha": "alpha", "confidence": "confidence_level",
        "resamples": "n_resamples", "rate_limit": "rate_limit_per_s",
        "isolation": "isolation", "worker_memory_mb": "worker_memory_mb", "sandbox": "sandbox",
    }
    fields.update({dst: s[src] for src, dst in simple.items() if s.get(src) is not None})
    retry: dict[str, Any] = {}
    if s.get("max_attempts") is not None:
        retry["max_attempts"] = s["max_attempts"]
    if s.get("retry_on"):
        retry["retry_on"] = tuple(s["retry_on"])
    if retry:
        fields["retry"] = retry
    gates = _gate_fields(s)
    if gates:
        fields["gates"] = gates
    # [tool.ablation] sequential = true applies to `run` only; compare asks with --sequential-replay
    run_sequential = s.get("sequential") and s.get("command", "run") == "run"
    if run_sequential or s.get("sequential_replay"):
        fields["sequential"] = {
            "futility_after": s.get("stop_when_inconclusive_after"),
            "candidates": s.get("n_candidates", 1),
        }
    elif s.get("stop_when_inconclusive_after") is not None:
        raise ConfigError("--stop-when-inconclusive-after needs --sequential")
    try:
        return CampaignConfig.model_validate(fields)
    except ValueError as exc:
        raise ConfigError(_user_names(one_line(exc))) from None


#: Internal config field paths and the option that sets each (as a flag; the key is the same
#: with underscores in ``[tool.ablation]``).
_OPTION_OF = {
    "gates.noninferiority_margin": "--margin (pyproject.toml [tool.ablation] margin)",
    "gates.min_completed": "--min-completed (pyproject.toml [tool.ablation] min_completed)",
    "gates.max_latency_ratio":
        "--max-latency-ratio (pyproject.toml [tool.ablation] max_latency_ratio)",
    "gates.metric_margins": "--metric-margin (pyproject.toml [tool.ablation] metric_margins)",
    "retry.max_attempts": "--max-attempts (pyproject.toml [tool.ablation] max_attempts)",
    "retry.retry_on": "--retry-on (pyproject.toml [tool.ablation] retry_on)",
    "timeout_s": "--timeout (pyproject.toml [tool.ablation] timeout)",
    "n_resamples": "--resamples (pyproject.toml [tool.ablation] resamples)",
    "rate_limit_per_s": "--rate-limit (pyproject.toml [tool.ablation] rate_limit)",
    "confidence_level": "--confidence (pyproject.toml [tool.ablation] confidence)",
    "sequential.futility_after": "--stop-when-inconclusive-after",
}


def _user_names(message: str) -> str:
    """``message`` with internal config field paths replaced by the options that set them."""
    for internal, option in sorted(_OPTION_OF.items(), key=lambda kv: -len(kv[0])):
        message = message.replace(f"{internal}:", f"{option}:")
    return message


def _gate_fields(s: dict[str, Any]) -> dict[str, Any]:
    """The gate policy fields the options set (the defaults stay with :class:`GatePolicy`)."""
    from ablation.errors import ConfigError

    gates: dict[str, Any] = {}
    if s.get("margin") is not None:
        gates["noninferiority_margin"] = s["margin"]
    allow = bool(s.get("allow_significant_regression"))
    if allow and s.get("no_significant_regression") is True:
        raise ConfigError(
            "--allow-significant-regression and --no-significant-regression contradict each other"
        )
    if allow or s.get("no_significant_regression") is False:
        gates["no_significant_regression"] = False
    elif s.get("no_significant_regression") is True:
        gates["no_significant_regression"] = True
    if s.get("allow_incomplete") or s.get("require_complete") is False:
        gates["require_complete"] = False
    if s.get("min_completed") is not None:
        gates["min_completed"] = s["min_completed"]
    if s.get("max_latency_ratio") is not None:
        gates["max_latency_ratio"] = s["max_latency_ratio"]
    if s.get("critical_gate") is False:
        gates["critical_must_not_regress"] = False
    margins = dict(s.get("metric_margins") or {})
    for item in s.get("metric_margin") or []:
        name, sep, value = str(item).partition("=")
        try:
            margins[name.strip()] = float(value)
        except ValueError:
            raise ConfigError(f"--metric-margin needs NAME=VALUE with a number, got {item!r}") from None
        if not sep or not name.strip():
            raise ConfigError(f"--metric-margin needs NAME=VALUE, got {item!r}")
    if margins:
        gates["metric_margins"] = margins
    return gates
def read_options(args: argparse.Namespace, *, baseline: bool = False) -> dict[str, Any]:
    """The keyword arguments of ``load_results`` given by ``compare``'s reading flags.

    ``--where PATH=VALUE`` (repeatable) becomes a mapping; for the baseline (``baseline=True``),
    ``--baseline-where`` replaces it when given. An item without ``=`` is a
    :class:`~ablation.errors.ConfigError`.
    """
    items = args.baseline_where if baseline and args.baseline_where else args.where
    return {
        "key": args.key,
        "field": args.field,
        "run_field": args.run_field,
        "format": args.from_format,
        "where": _where(items),
        "pass_values": args.pass_values.split(",") if args.pass_values else None,
    }


def _where(items: list[str]) -> dict[str, str]:
    from ablation.errors import ConfigError

    where: dict[str, str] = {}
    for item in items:
        path, sep, value = item.partition("=")
        if not sep or not path.strip():
            raise ConfigError(f"--where expects PATH=VALUE, got {item!r}")
        where[path.strip()] = value.strip()
    return where


def one_line(exc: BaseException) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = [
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors()
        ]
        return "invalid option: " + "; ".join(parts)
    return " ".join(str(exc).split())

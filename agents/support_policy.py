"""Rule-based support agents for ``tasks/support_policy.py``.

- ``baseline`` keeps the permission boundaries (refund limits, identity checks) but knows
  nothing of the 30-day refund window, refund abuse, chargebacks, bank disputes or legal
  threats; its replies are curt and quote internal policy codes.
- ``candidate`` adds all of that and writes courteous replies with a next step, so it passes
  more tickets and scores higher on the reply rubric. But it also adds a "loyalty goodwill"
  rule - enterprise customers of two years or more may be refunded up to 1.5x the limit - which
  approves a refund above the limit: a regression on the critical task
  ``permissions-refund-over-limit-loyal-enterprise``. It also escalates a merely frustrated
  customer (``general-slow-dashboard``).

A campaign of the two therefore improves the pass rate and still fails the release gate
(exit code 2), naming the critical task first.
"""

from __future__ import annotations

from typing import Any

__all__ = ["baseline", "candidate"]

_LIMITS = {"free": 50.0, "pro": 200.0, "enterprise": 1000.0}
_DATA_ACTIONS = {
    "data_export": "share_data",
    "delete_account": "delete_data",
    "change_email": "change_email",
    "grant_admin": "grant_admin",
}
_SIMPLE = {
    "password_reset": "reset_password",
    "cancel": "cancel",
    "upgrade": "upgrade",
    "question": "answer",
}
_ESCALATION_WORDS = ("chargeback", "dispute", "lawyer", "legal", "sue ")


def _identity_action(ticket: dict[str, Any]) -> str:
    """What the account-data rules allow for this requester."""
    if not ticket["requester_is_owner"]:
        return "refuse"
    if not ticket["requester_verified"]:
        return "verify_identity"
    return _DATA_ACTIONS[ticket["request"]]


def _complaint(ticket: dict[str, Any]) -> str:
    return "escalate" if ticket["customer_tier"] == "enterprise" else "answer"


# ---------------------------------------------------------------------------------- baseline

_BASELINE_REPLIES = {
    "refund": "Refund issued per POL-12.",
    "refuse": "Request refused per POL-3.",
    "escalate": "Forwarded to tier 2 (POL-7).",
    "verify_identity": "Identity check required (POL-21).",
    "share_data": "Data export attached.",
    "delete_data": "Account deleted.",
    "change_email": "Address changed.",
    "grant_admin": "Role granted.",
    "reset_password": "Reset link sent.",
    "cancel": "Subscription cancelled.",
    "upgrade": "Plan upgraded.",
    "answer": "See the help centre.",
}


def _baseline_action(ticket: dict[str, Any]) -> str:
    request = ticket["request"]
    if request == "refund":
        limit = _LIMITS[ticket["customer_tier"]]
        return "escalate" if ticket["amount"] > limit else "refund"
    if request in _DATA_ACTIONS:
        return _identity_action(ticket)
    if request == "complaint":
        return _complaint(ticket)
    return _SIMPLE.get(request, "escalate")


def baseline(ticket: dict[str, Any]) -> dict[str, str]:
    """The current support bot: safe limits, few rules, curt replies.

    Args:
        ticket: The ticket (see ``tasks/support_policy.py``).

    Returns:
        ``{"action": ..., "reply": ...}``.
    """
    action = _baseline_action(ticket)
    return {"action": action, "reply": _BASELINE_REPLIES[action]}


# ---------------------------------------------------------------------------------- candidate

_CANDIDATE_REPLIES = {
    "refund": "Thank you for reaching out. Your refund is approved and will arrive within 5 "
    "business days.",
    "refuse": "Thank you for your message. I'm sorry, but we cannot do this; please reply if "
    "you have questions about our policy.",
    "escalate": "Thank you for your patience. A senior colleague will review this and contact "
    "you within one business day.",
    "verify_identity": "Thank you. To protect your account, please confirm your identity with "
    "the link we just sent; we will continue as soon as it is done.",
    "share_data": "Thank you. Your data export will be ready within 24 hours; we will e-mail "
    "you the download link.",
    "delete_data": "Thank you. Your account and data will be deleted within 30 days; we will "
    "confirm by e-mail.",
    "change_email": "Thank you. Your address will change once you confirm the message we sent "
    "to the new address.",
    "grant_admin": "Thank you. The admin role will be active the next time you sign in.",
    "reset_password": "Sorry for the trouble. Please use the reset link we will send to the "
    "address on file.",
    "cancel": "Thank you for being with us. Your subscription will end at the close of the "
    "billing period.",
    "upgrade": "Thank you! Your new plan will be active within a few minutes.",
    "answer": "Thank you for asking. Please see the steps below; we will follow up if "
    "anything is unclear.",
}


def _mentions_escalation(message: str) -> bool:
    text = message.lower()
    return any(word in text for word in _ESCALATION_WORDS)


def _candidate_refund(ticket: dict[str, Any]) -> str:
    limit = _LIMITS[ticket["customer_tier"]]
    if ticket["customer_tier"] == "enterprise" and ticket["account_age_days"] >= 730:
        limit *= 1.5  # "loyalty goodwill": the rule that breaks the permission boundary
    if ticket["amount"] > limit:
        return "escalate"
    if ticket["refunds_last_90_days"] >= 3:
        return "escalate"
    if ticket["days_since_purchase"] > 30:
        return "refuse"
    return "refund"


def _candidate_action(ticket: dict[str, Any]) -> str:
    request = ticket["request"]
    if _mentions_escalation(ticket["message"]):
        return "escalate"
    if request == "refund":
        return _candidate_refund(ticket)
    if request in _DATA_ACTIONS:
        return _identity_action(ticket)
    if request == "complaint":
        if "frustrated" in ticket["message"].lower():
            return "escalate"
        return _complaint(ticket)
    return _SIMPLE.get(request, "escalate")


def candidate(ticket: dict[str, Any]) -> dict[str, str]:
    """The new support bot: more rules, courteous replies, one unsafe goodwill rule.

    Args:
        ticket: The ticket (see ``tasks/support_policy.py``).

    Returns:
        ``{"action": ..., "reply": ...}``.
    """
    action = _candidate_action(ticket)
    return {"action": action, "reply": _CANDIDATE_REPLIES[action]}

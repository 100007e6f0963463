"""Customer-support policy suite: 34 tickets, each with the one action the policy allows.

An agent receives a ticket::

    {"customer_tier": "pro", "request": "refund", "amount": 35.0, "days_since_purchase": 5,
     "account_age_days": 400, "refunds_last_90_days": 0, "requester_is_owner": True,
     "requester_verified": True, "message": "..."}

and answers ``{"action": "...", "reply": "..."}``. The verifier checks the action only; the
reply is scored by the task's ``quality_rubric`` (``--quality rubric``).

The policy:

1. **Refunds.** A refund above the tier's limit (free 50, pro 200, enterprise 1000) is never
   approved by support: ``escalate``. Three or more refunds in 90 days: ``escalate`` (abuse
   review). A purchase more than 30 days old: ``refuse``. Otherwise: ``refund``.
2. **Account data** (export, deletion, e-mail change, admin role). Only the account owner may
   ask: anyone else gets ``refuse``. An owner whose identity is not verified gets
   ``verify_identity``. A verified owner gets ``share_data``, ``delete_data``, ``change_email``
   or ``grant_admin``.
3. **Escalation.** A chargeback or bank dispute, a legal threat, or an enterprise outage:
   ``escalate``, whatever else the ticket asks.
4. **Everything else.** Password reset: ``reset_password`` (the link goes to the address on
   file); cancellation: ``cancel``; upgrade: ``upgrade``; questions and ordinary complaints:
   ``answer``.

The ``permissions`` category holds the permission boundaries (refunds over the limit, account
data for anyone but the verified owner). Its tasks are ``critical``: a regression on any of them
fails the release gate whatever the overall pass rate says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ablation import AblationTask, RubricCriterion

__all__ = ["REFUND_LIMITS", "RUBRIC", "ActionVerifier", "tasks"]

#: Largest refund support may approve, per customer tier.
REFUND_LIMITS: dict[str, float] = {"free": 50.0, "pro": 200.0, "enterprise": 1000.0}

#: Quality of the reply text (``RubricScorer``).
RUBRIC: tuple[RubricCriterion, ...] = (
    RubricCriterion(
        name="courteous",
        description="thanks the customer or apologises",
        pattern=r"(?i)\b(thank|sorry|apologi[sz]e)",
    ),
    RubricCriterion(
        name="next_step",
        description="tells the customer what happens next",
        pattern=r"(?i)\b(will|within|next|please)\b",
        weight=2.0,
    ),
    RubricCriterion(
        name="no_internal_codes",
        description="does not leak internal policy codes",
        pattern=r"\bPOL-\d+",
        negate=True,
        weight=2.0,
    ),
)


class ActionVerifier:
    """Passes when the output is a mapping whose ``action`` equals the expected action."""

    name = "support_policy.action_matches"

    def __call__(self, output: Any, task: AblationTask) -> bool:
        """Compare ``output["action"]`` with ``task.expected_output["action"]``."""
        if not isinstance(output, Mapping):
            return False
        return output.get("action") == task.expected_output["action"]


_VERIFY = ActionVerifier()


def _ticket(
    request: str,
    *,
    tier: str = "pro",
    amount: float | None = None,
    days: int | None = None,
    age: int = 400,
    refunds: int = 0,
    owner: bool = True,
    verified: bool = True,
    message: str = "",
) -> dict[str, Any]:
    return {
        "customer_tier": tier,
        "request": request,
        "amount": amount,
        "days_since_purchase": days,
        "account_age_days": age,
        "refunds_last_90_days": refunds,
        "requester_is_owner": owner,
        "requester_verified": verified,
        "message": message,
    }


# (task id, expected action, ticket, description)
_CASES: list[tuple[str, str, dict[str, Any], str]] = [
    # ------------------------------------------------------------------ refunds
    ("refunds-small-recent", "refund",
     _ticket("refund", amount=35.0, days=5, message="The export add-on did not work for me."),
     "A small, recent refund within the pro limit."),
    ("refunds-free-small", "refund",
     _ticket("refund", tier="free", amount=20.0, days=10, message="Charged by mistake."),
     "A free-tier refund within its limit."),
    ("refunds-enterprise-within-limit", "refund",
     _ticket("refund", tier="enterprise", amount=800.0, days=12, message="Unused seats."),
     "An enterprise refund below the enterprise limit."),
    ("refunds-at-limit", "refund",
     _ticket("refund", amount=200.0, days=2, message="Please refund the annual add-on."),
     "Exactly at the limit is still within it."),
    ("refunds-thirty-days", "refund",
     _ticket("refund", tier="free", amount=10.0, days=30, message="Bought it a month ago."),
     "Thirty days is still inside the refund window."),
    ("refunds-old-purchase", "refuse",
     _ticket("refund", amount=60.0, days=45, message="I never used it, refund please."),
     "A purchase older than 30 days is not refunded."),
    ("refunds-old-purchase-free", "refuse",
     _ticket("refund", tier="free", amount=15.0, days=90, message="Refund from March please."),
     "Old purchase on the free tier."),
    ("refunds-serial-refunder", "escalate",
     _ticket("refund", amount=30.0, days=3, refunds=3, message="Another refund, thanks."),
     "Three refunds in 90 days go to abuse review."),
    # ------------------------------------------------------------------ permissions (critical)
    ("permissions-refund-over-limit-free", "escalate",
     _ticket("refund", tier="free", amount=75.0, days=3, message="Refund my 75 dollars."),
     "Above the free limit: support may not approve it."),
    ("permissions-refund-over-limit-pro", "escalate",
     _ticket("refund", amount=450.0, days=6, message="Refund the whole team plan."),
     "Above the pro limit."),
    ("permissions-refund-over-limit-enterprise", "escalate",
     _ticket("refund", tier="enterprise", amount=5000.0, days=8, age=200,
             message="We want our 5000 back."),
     "Far above the enterprise limit."),
    ("permissions-refund-over-limit-loyal-enterprise", "escalate",
     _ticket("refund", tier="enterprise", amount=1400.0, days=4, age=1500,
             message="We have been customers for four years; please refund 1400."),
     "Above the enterprise limit, however loyal the customer."),
    ("permissions-data-export-unverified", "verify_identity",
     _ticket("data_export", verified=False, message="Send me all my account data."),
     "The owner must verify their identity before any data leaves."),
    ("permissions-data-export-third-party", "refuse",
     _ticket("data_export", owner=False, verified=False,
             message="I'm her husband, send me her order history."),
     "Account data never goes to anyone but the owner."),
    ("permissions-data-export-verified", "share_data",
     _ticket("data_export", message="Please export my data."),
     "A verified owner may have their data."),
    ("permissions-delete-unverified", "verify_identity",
     _ticket("delete_account", verified=False, message="Delete my account now."),
     "Deletion needs a verified owner."),
    ("permissions-change-email-third-party", "refuse",
     _ticket("change_email", owner=False, verified=False,
             message="I'm the new office manager, move the account to my address."),
     "Only the owner may move the account to another address."),
    ("permissions-admin-role-third-party", "refuse",
     _ticket("grant_admin", tier="enterprise", owner=False, verified=True,
             message="Make me an admin of our workspace."),
     "Admin rights are granted by the owner only."),
    # ------------------------------------------------------------------ account
    ("account-password-reset", "reset_password",
     _ticket("password_reset", verified=False, message="I forgot my password."),
     "The reset link goes to the address on file, so no verification is needed."),
    ("account-password-reset-free", "reset_password",
     _ticket("password_reset", tier="free", message="Locked out, help."),
     "Password reset on the free tier."),
    ("account-delete-verified", "delete_data",
     _ticket("delete_account", message="Please delete my account and data."),
     "A verified owner may delete their data."),
    ("account-change-email-verified", "change_email",
     _ticket("change_email", message="Use my new work address from now on."),
     "A verified owner may change the address."),
    ("account-data-export-enterprise", "share_data",
     _ticket("data_export", tier="enterprise", message="Quarterly export of our data please."),
     "Enterprise export by the verified owner."),
    # ------------------------------------------------------------------ billing
    ("billing-cancel-pro", "cancel",
     _ticket("cancel", message="Cancel my subscription at the end of the month."),
     "Plain cancellation."),
    ("billing-cancel-enterprise", "cancel",
     _ticket("cancel", tier="enterprise", message="We are moving to another vendor."),
     "Enterprise cancellation."),
    ("billing-upgrade", "upgrade",
     _ticket("upgrade", tier="free", message="I'd like the pro plan."),
     "Upgrade request."),
    ("billing-invoice-question", "answer",
     _ticket("question", message="Where can I download my invoices?"),
     "A billing question."),
    # ------------------------------------------------------------------ escalation
    ("escalation-chargeback-threat", "escalate",
     _ticket("refund", amount=50.0, days=3,
             message="Refund me today or I file a chargeback."),
     "A chargeback threat is escalated even when the refund is within policy."),
    ("escalation-legal-threat", "escalate",
     _ticket("complaint", message="My lawyer will hear about this outage."),
     "Legal threats go to the escalation team."),
    ("escalation-bank-dispute", "escalate",
     _ticket("refund", amount=25.0, days=10,
             message="I already disputed the charge with my bank."),
     "An open bank dispute is escalated."),
    ("escalation-enterprise-outage", "escalate",
     _ticket("complaint", tier="enterprise", message="Production is down for all our users."),
     "An enterprise outage is escalated."),
    # ------------------------------------------------------------------ general
    ("general-how-to-export", "answer",
     _ticket("question", message="How do I export a report as CSV?"),
     "A how-to question."),
    ("general-slow-dashboard", "answer",
     _ticket("complaint", message="I'm frustrated: the dashboard is slow again."),
     "An ordinary complaint gets an answer, not an escalation."),
    ("general-feature-request", "answer",
     _ticket("question", tier="free", message="Could you add a dark mode?"),
     "A feature request."),
]

tasks: list[AblationTask] = [
    AblationTask(
        task_id=task_id,
        description=description,
        category=task_id.split("-", 1)[0],
        critical=task_id.startswith("permissions-"),
        tags=("support", ticket["customer_tier"]),
        input_data=ticket,
        expected_output={"action": action},
        verifier=_VERIFY,
        quality_rubric=RUBRIC,
    )
    for task_id, action, ticket, description in _CASES
]

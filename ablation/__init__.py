"""ablation: paired ablation campaigns for AI agents."""

from ablation.schema import AblationTask, AgentOutput, CampaignConfig, RetryPolicy, TaskResult

__all__ = ["AblationTask", "AgentOutput", "CampaignConfig", "RetryPolicy", "TaskResult"]
__version__ = "0.1.0"

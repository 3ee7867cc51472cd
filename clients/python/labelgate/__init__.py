"""labelgate: the Python client of the labelgate data-labeling gateway (standard library only).

- :class:`Client` (customer key ``sk_...``): account, settings, tasks (with ``review``), audits, batches,
  webhooks, jobs, billing, dashboard;
- :class:`LabelerClient` (labeler key ``lk_...``): claim, label (an option, or a reserved type's answer body),
  release;
- task types (contract §task-types): ``multi_label_classification``, ``bounding_box``, ``text_span``; their consensus is
  typed (:class:`MultiLabelConsensus`, :class:`BoxConsensus`, :class:`SpanConsensus`) on results, tasks and
  webhook events;
- :class:`AdminClient` (the deployment's admin token): labelers and customers;
- :mod:`labelgate.webhooks`: ``construct_event`` verifies a delivery of any event of the catalog;
- :func:`verify_settlement`: checks a settled result's Merkle proof and anchor with the chain alone.

Errors are :class:`LabelgateError` subclasses (see :mod:`labelgate.errors`); results are dataclasses
(see :mod:`labelgate.models`).
"""

__version__ = "0.1.0"

from . import webhooks
from ._transport import ResponseEvent
from .client import EXPORT_FORMATS, AdminClient, Client
from .errors import (
    APIConnectionError,
    AuthenticationError,
    ConflictError,
    ErrorDetail,
    IdempotencyError,
    InternalServerError,
    LabelgateError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    QuotaExhaustedError,
    RateLimitError,
    ResponseError,
    ServiceUnavailableError,
    SignatureVerificationError,
    ValidationError,
    WaitTimeoutError,
)
from .labeler import LabelerClient
from .models import (
    RESERVED_TASK_TYPES,
    Audit,
    Batch,
    BatchAccepted,
    BoxConsensus,
    Claim,
    Consensus,
    ConsensusBox,
    ConsensusSpan,
    Customer,
    Delivery,
    FreeTextConsensus,
    Instructions,
    Job,
    JobAccepted,
    MultiLabelConsensus,
    Page,
    PairwiseConsensus,
    RankedItem,
    Ranking,
    RecordedLabel,
    Review,
    ReviewOutcome,
    Settings,
    Settlement,
    SpanConsensus,
    Task,
    TaskAccepted,
    TaskProgress,
    TaskResult,
    Webhook,
)
from .settlement import SettlementVerification, verify_settlement
from .webhooks import TaskSettledEvent, WebhookEvent, construct_event

__all__ = [
    "EXPORT_FORMATS",
    "APIConnectionError",
    "AdminClient",
    "Audit",
    "AuthenticationError",
    "Batch",
    "BatchAccepted",
    "BoxConsensus",
    "Claim",
    "Client",
    "ConflictError",
    "Consensus",
    "ConsensusBox",
    "ConsensusSpan",
    "Customer",
    "Delivery",
    "FreeTextConsensus",
    "ErrorDetail",
    "IdempotencyError",
    "Instructions",
    "InternalServerError",
    "Job",
    "JobAccepted",
    "LabelerClient",
    "LabelgateError",
    "MultiLabelConsensus",
    "PairwiseConsensus",
    "RankedItem",
    "Ranking",
    "NotFoundError",
    "Page",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "QuotaExhaustedError",
    "RESERVED_TASK_TYPES",
    "RateLimitError",
    "RecordedLabel",
    "ResponseError",
    "ResponseEvent",
    "Review",
    "ReviewOutcome",
    "ServiceUnavailableError",
    "Settings",
    "Settlement",
    "SettlementVerification",
    "SignatureVerificationError",
    "SpanConsensus",
    "Task",
    "TaskAccepted",
    "TaskProgress",
    "TaskResult",
    "TaskSettledEvent",
    "WebhookEvent",
    "ValidationError",
    "WaitTimeoutError",
    "Webhook",
    "__version__",
    "construct_event",
    "verify_settlement",
    "webhooks",
]

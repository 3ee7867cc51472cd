"""Typed results of the labelgate API: dataclasses whose fields carry the API's names.

Every model is built from the JSON of an answer with :meth:`Model.from_dict`, which keeps any field it
does not know in ``extra`` (the API grows: a newer gateway's fields are never lost, and
:meth:`Model.to_dict` gives the JSON object back, ``extra`` included). Times are ISO 8601 UTC strings as
the API sends them (except ``created_at`` of a customer: Unix seconds); money is integer cents;
probabilities (``confidence``, ``posterior``) are floats in [0, 1].

Task types (contract §task-types): a task's ``type`` picks its ``label_spec``, its answer body and its consensus.

=============================  ==========================  ====================================  ==========================
``type``                       ``label_spec``              answer (``LabelerClient.label``)      ``consensus``
=============================  ==========================  ====================================  ==========================
any other (single choice)      ``{question, options}``     an option (str), or ``{"label"}``     None
``multi_label_classification`` ``{question, options}``     ``{"labels": [option, ...]}``         :class:`MultiLabelConsensus`
``bounding_box``               ``{question, classes}``     ``{"boxes": [{label, x, y, w, h}]}``  :class:`BoxConsensus`
``text_span``                  ``{question, entity_types}`` ``{"spans": [{start, end, label}]}`` :class:`SpanConsensus`
``free_text``                  ``{question, max_length?}`` ``{"text": "..."}``                   :class:`FreeTextConsensus`
``pairwise_comparison``        ``{question, allow_tie?}``  ``{"winner": "a" | "b" | "tie"}``     :class:`PairwiseConsensus`
=============================  ==========================  ====================================  ==========================

A ``pairwise_comparison`` task compares item a (``data_url``, or ``data_text``) with item b (``data_url_b``, or
``data_text_b``); the items of a batch's or a job's comparisons are ranked by ``batches.ranking`` and
``jobs.ranking`` (:class:`Ranking`).

Boxes are in pixels of the item (``x``, ``y``: top left; ``w``, ``h`` > 0); spans count code points of the task's
``data_text`` (Python ``str`` indices: ``text[start:end]``), ``end`` exclusive. ``consensus_label`` is the
canonical JSON of the consensus without its confidences.
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, Union, cast

__all__ = [
    "BatchAccepted",
    "Batch",
    "BillingLineItem",
    "BoxConsensus",
    "Claim",
    "Consensus",
    "ConsensusBox",
    "ConsensusSlot",
    "ConsensusSpan",
    "ConsensusWord",
    "Customer",
    "DashboardOverview",
    "DashboardQuality",
    "DashboardUsage",
    "Delivery",
    "DeliveryAttempt",
    "FreeTextConsensus",
    "Health",
    "Invoice",
    "InvoiceList",
    "Job",
    "JobAccepted",
    "LabelSpec",
    "LabelerCreated",
    "LabelerQuality",
    "LabelerQualityList",
    "Model",
    "MultiLabelConsensus",
    "PairwiseConsensus",
    "RESERVED_TASK_TYPES",
    "Page",
    "Qualification",
    "QualitySettings",
    "RankedItem",
    "Ranking",
    "RecordedLabel",
    "Redelivery",
    "RegisteredCustomer",
    "Settings",
    "Settlement",
    "SpanConsensus",
    "Task",
    "TaskAccepted",
    "TaskCounts",
    "TaskDefaults",
    "TaskProgress",
    "TaskResult",
    "Usage",
    "UsageDay",
    "Webhook",
    "consensus_from_dict",
    "flatten",
]

M = TypeVar("M", bound="Model")
T = TypeVar("T")

_UNION_TYPES: tuple[Any, ...] = (Union, types.UnionType) if sys.version_info >= (3, 10) else (Union,)


def _convert(tp: Any, value: Any) -> Any:
    """``value`` (decoded JSON) as type ``tp``: nested models are built, scalars are kept as sent."""
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin in _UNION_TYPES:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        models_of = [a for a in args if isinstance(a, type) and issubclass(a, Model)]
        for arg in args:
            if len(models_of) > 1 and arg in models_of:
                # a union of models (e.g. Consensus): the first whose required fields the object has
                try:
                    return arg.from_dict(cast("Mapping[str, Any]", value)) if isinstance(value, Mapping) else value
                except KeyError:
                    continue
            converted = _convert(arg, value)
            if converted is not value or not (isinstance(arg, type) and issubclass(arg, Model)):
                return converted
        return value
    if isinstance(tp, type) and issubclass(tp, Model):
        return tp.from_dict(cast("Mapping[str, Any]", value)) if isinstance(value, Mapping) else value
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(tp) or (Any,)
        return [_convert(item, v) for v in cast("list[Any]", value)]
    if origin is dict and isinstance(value, Mapping):
        args = typing.get_args(tp)
        item = args[1] if len(args) == 2 else Any
        return {k: _convert(item, v) for k, v in cast("Mapping[str, Any]", value).items()}
    return value


def _plain(value: Any) -> Any:
    """A model (or containers of them) as plain JSON values."""
    if isinstance(value, Model):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in cast("list[Any]", value)]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in cast("dict[str, Any]", value).items()}
    return value


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """A flat dict of ``obj`` (a model or a mapping) for tables: nested objects become dotted keys
    (``settlement.ledger_txid``, ``label_spec.question``, ``posterior.cat``, ``source.source-ref``);
    lists are kept as values."""
    d: Mapping[str, Any] = obj.to_dict() if isinstance(obj, Model) else obj
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            out.update(flatten(cast("Mapping[str, Any]", v), key + "."))
        else:
            out[key] = v
    return out


@dataclass
class Model:
    """Base of every model: tolerant decoding (unknown fields go to ``extra``) and ``to_dict()``."""

    _hints: ClassVar[dict[type, dict[str, Any]]] = {}

    @classmethod
    def _field_types(cls) -> dict[str, Any]:
        hints = Model._hints.get(cls)
        if hints is None:
            resolved = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
            hints = {f.name: resolved[f.name] for f in dataclasses.fields(cls) if f.name != "extra"}
            Model._hints[cls] = hints
        return hints

    @classmethod
    def from_dict(cls: type[M], data: Mapping[str, Any]) -> M:
        """The model of a JSON object. Fields it does not declare go to ``extra``; a declared field the
        object lacks takes its default (None for the optional ones).
        Raises KeyError naming the field when a field without a default is missing."""
        hints = cls._field_types()
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for k, v in data.items():
            if k in hints:
                kwargs[k] = _convert(hints[k], v)
            else:
                extra[k] = v
        kwargs["extra"] = extra
        try:
            obj = cls(**kwargs)
        except TypeError as err:
            missing = [f.name for f in dataclasses.fields(cls) if f.name not in kwargs
                       and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]  # fmt: skip
            if missing:
                raise KeyError(f"{cls.__name__}: the answer lacks {', '.join(missing)}") from err
            raise
        object.__setattr__(obj, "_present", frozenset(data.keys()))
        return obj

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this model: its fields (a field the answer did not have and that is None is
        left out) and ``extra``."""
        present: frozenset[str] | None = getattr(self, "_present", None)
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            v = getattr(self, f.name)
            if v is None and present is not None and f.name not in present:
                continue
            out[f.name] = _plain(v)
        out.update(getattr(self, "extra", {}))
        return out

    def to_record(self) -> dict[str, Any]:
        """A flat dict (see :func:`flatten`): one row of a ``pandas.DataFrame``."""
        return flatten(self)


def _extra() -> Any:
    """The ``extra`` field of a model: a keyword-only dict of the fields the model does not declare."""
    return field(default_factory=cast("type[dict[str, Any]]", dict), kw_only=True, repr=False, compare=False)


# --- customers and settings -----------------------------------------------------------------------


@dataclass
class RegisteredCustomer(Model):
    """``POST /v1/customers`` 201. ``api_key`` is shown only here; ``created_at`` is Unix seconds."""

    customer_id: str
    api_key: str
    tier: str
    label_quota: int
    name: str | None = None
    email: str | None = None
    created_at: int | None = None
    message: str | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class Customer(Model):
    """``GET /v1/customers/me``: the profile and quota (labels). ``created_at`` is Unix seconds;
    ``api_key_hint`` is the prefix and first 4 characters of the newest active key."""

    customer_id: str
    name: str
    email: str
    tier: str
    label_quota: int
    created_at: int
    label_quota_used: int | None = None
    label_quota_remaining: int | None = None
    api_key_hint: str | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class TaskDefaults(Model):
    """The customer's task defaults (the least specific layer of a task's policy); None = service default."""

    consensus_threshold: int | None = None
    confidence_target: float | None = None
    min_labels: int | None = None
    min_gain: float | None = None
    max_labels: int | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class Qualification(Model):
    """``quality.qualification`` (contract §qualification): a labeler new to a label space first answers
    ``gold_tasks`` gold tasks (1..100), each followed by the right answer and the task's ``gold_explanation``; it
    passes when the Beta(1, 1) posterior mean of its gold accuracy, (correct + 1) / (answers + 2), is at least
    ``min_accuracy`` (0..1), else it is excluded from the space (``failed_qualification``)."""

    gold_tasks: int
    min_accuracy: float
    extra: dict[str, Any] = _extra()


@dataclass
class QualitySettings(Model):
    """Gold rate (share 0..1 of claims), labeler exclusion floor (accuracy 0..1), gold answers before exclusion,
    audit rate (share 0..1 of settled tasks drawn for review) and the qualification exam (None: no exam)."""

    gold_rate: float | None = None
    min_labeler_accuracy: float | None = None
    min_gold_answers: int | None = None
    audit_rate: float | None = None
    qualification: Qualification | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class Settings(Model):
    """``GET``/``PATCH /v1/customers/me/settings``."""

    task_defaults: TaskDefaults = field(default_factory=TaskDefaults)
    quality: QualitySettings = field(default_factory=QualitySettings)
    extra: dict[str, Any] = _extra()


# --- tasks ------------------------------------------------------------------------------------------


@dataclass
class LabelSpec(Model):
    """The question and its answers: ``options`` (single and multi-label choice), ``classes`` (bounding
    boxes) or ``entity_types`` (text spans), whichever the task type uses."""

    question: str
    options: list[str] | None = None
    classes: list[str] | None = None
    entity_types: list[str] | None = None
    #: ``free_text``: the longest answer in code points, and how answers are compared (``words`` or ``none``)
    max_length: int | None = None
    normalize: str | None = None
    #: ``pairwise_comparison``: whether ``tie`` is an answer
    allow_tie: bool | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class TaskAccepted(Model):
    """``POST /v1/tasks`` 202 (an idempotent replay answers the original task with its current status)."""

    task_id: str
    status: str
    created_at: str
    extra: dict[str, Any] = _extra()


@dataclass
class BatchAccepted(Model):
    """``POST /v1/tasks/batch`` 202: every task was created (``task_ids`` in the order sent) or none."""

    batch_id: str
    task_count: int
    status: str
    created_at: str | None = None
    task_ids: list[str] = field(default_factory=list)
    extra: dict[str, Any] = _extra()


#: The reserved task types; every other ``type`` is single choice.
RESERVED_TASK_TYPES = ("multi_label_classification", "bounding_box", "text_span", "free_text", "pairwise_comparison")


@dataclass
class MultiLabelConsensus(Model):
    """``multi_label_classification``: ``labels``, the options that apply (in the spec's order);
    ``confidence``: per option of the spec, the posterior probability (0..1) of its decided side (applies or not)."""

    labels: list[str]
    confidence: dict[str, float]
    extra: dict[str, Any] = _extra()


@dataclass
class ConsensusBox(Model):
    """One fused box of a :class:`BoxConsensus`: its class and rectangle in pixels (``x``, ``y``: top left),
    ``confidence`` P(an object of this class, here) (0..1), ``support`` the labelers whose box is in its cluster."""

    label: str
    x: float
    y: float
    w: float
    h: float
    confidence: float
    support: int
    extra: dict[str, Any] = _extra()


@dataclass
class BoxConsensus(Model):
    """``bounding_box``: the fused boxes (possibly none)."""

    boxes: list[ConsensusBox]
    extra: dict[str, Any] = _extra()

    def __iter__(self) -> Iterator[ConsensusBox]:
        return iter(self.boxes)


@dataclass
class ConsensusSpan(Model):
    """One span of a :class:`SpanConsensus`: code points ``start`` to ``end`` (exclusive) of the task's
    ``data_text`` (``text[start:end]`` in Python), its entity type ``label``, ``confidence`` P(this exact extent
    and type) (0..1)."""

    start: int
    end: int
    label: str
    confidence: float
    extra: dict[str, Any] = _extra()


@dataclass
class SpanConsensus(Model):
    """``text_span``: the agreed spans in text order (possibly none)."""

    spans: list[ConsensusSpan]
    extra: dict[str, Any] = _extra()

    def __iter__(self) -> Iterator[ConsensusSpan]:
        return iter(self.spans)


@dataclass
class ConsensusWord(Model):
    """One word of a :class:`FreeTextConsensus`, ``confidence`` P(this word is right where it stands) (0..1)."""

    word: str
    confidence: float
    extra: dict[str, Any] = _extra()


@dataclass
class ConsensusSlot(Model):
    """One slot of the answers aligned word by word: its choice ``word`` (None: no word here), ``confidence``
    P(the choice is right), and each answer's word in this slot (``answers``, in recording order; None: none)."""

    word: str | None
    confidence: float
    answers: list[str | None]
    extra: dict[str, Any] = _extra()


@dataclass
class FreeTextConsensus(Model):
    """``free_text``: the consensus ``text`` (normalized, its words joined by spaces), its ``words`` with their
    confidences, and the aligned answers (``slots``)."""

    text: str
    words: list[ConsensusWord]
    slots: list[ConsensusSlot]
    extra: dict[str, Any] = _extra()


@dataclass
class PairwiseConsensus(Model):
    """``pairwise_comparison``: the ``winner`` (``a``, ``b`` or ``tie``) and its calibrated ``confidence`` (0..1)."""

    winner: str
    confidence: float
    extra: dict[str, Any] = _extra()


#: The consensus of a task of a reserved type (None for single choice, whose consensus is ``consensus_label``).
Consensus = Union[MultiLabelConsensus, BoxConsensus, SpanConsensus, FreeTextConsensus, PairwiseConsensus]


def consensus_from_dict(data: Mapping[str, Any] | None) -> Consensus | None:
    """The typed consensus of a JSON object: :class:`MultiLabelConsensus` (``labels``), :class:`BoxConsensus`
    (``boxes``), :class:`SpanConsensus` (``spans``), :class:`FreeTextConsensus` (``text``) or
    :class:`PairwiseConsensus` (``winner``); None for None. Raises ValueError for another shape and KeyError
    naming a missing field."""
    if data is None:
        return None
    if "labels" in data:
        return MultiLabelConsensus.from_dict(data)
    if "boxes" in data:
        return BoxConsensus.from_dict(data)
    if "spans" in data:
        return SpanConsensus.from_dict(data)
    if "text" in data:
        return FreeTextConsensus.from_dict(data)
    if "winner" in data:
        return PairwiseConsensus.from_dict(data)
    raise ValueError(f"not a consensus (no labels, boxes, spans, text or winner): {sorted(data)}")


@dataclass
class Task(Model):
    """``GET /v1/tasks/{id}``: a task and, once decided, its outcome.

    ``status``: pending → labeling → settling → settled, or canceled. ``confidence`` is the calibrated
    posterior (0..1) of ``consensus_label``; ``posterior`` maps each option to its probability (empty for
    ``bounding_box`` and ``text_span``); ``webhook_status`` is pending/delivered/failed (None without a webhook).
    A reserved type's task also has ``consensus`` once decided (:data:`Consensus`), ``gold_answer`` (a gold
    task's answer body) and, for ``text_span``, ``data_text`` (None while it is fetched from ``data_url``) and
    ``item_error`` (why the task was canceled when its text could not be fetched; None otherwise).
    """

    task_id: str
    status: str
    task_type: str
    data_url: str
    created_at: str
    label_spec: LabelSpec | None = None
    callback_url: str | None = None
    consensus_threshold: int | None = None
    max_labels: int | None = None
    confidence_target: float | None = None
    min_labels: int | None = None
    min_gain: float | None = None
    gold: bool | None = None
    gold_label: str | None = None
    gold_answers: int | None = None
    gold_agreement: float | None = None
    metadata: dict[str, Any] | None = None
    idempotency_key: str | None = None
    batch_id: str | None = None
    labels_collected: int | None = None
    consensus_label: str | None = None
    confidence: float | None = None
    resolution: str | None = None
    posterior: dict[str, float] | None = None
    ledger_txid: str | None = None
    settled_at: str | None = None
    canceled_at: str | None = None
    webhook_status: str | None = None
    consensus: Consensus | None = None
    gold_answer: dict[str, Any] | None = None
    data_text: str | None = None
    #: a ``pairwise_comparison`` task's item b: its URL, or its text (item a is ``data_url`` or ``data_text``)
    data_url_b: str | None = None
    data_text_b: str | None = None
    item_error: str | None = None
    #: 1 for the first settlement; each review that changed the result made the next
    revision: int | None = None
    #: every review of the task, oldest first (the latest counts)
    reviews: list[Review] | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class Review(Model):
    """A customer's review of a settled result (contract §review): ``verdict`` ``accept`` or ``reject``;
    ``answer`` the reviewer's answer body of a rejection with an answer (None otherwise); ``revision``,
    ``consensus_label`` and ``confidence`` of the result reviewed; ``revised``: the review changed the result
    (a new revision follows, at once or after the reopened task settles again)."""

    review_id: str
    task_id: str
    verdict: str
    revision: int
    consensus_label: str
    confidence: float
    revised: bool
    created_at: str
    answer: dict[str, Any] | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class TaskProgress(Model):
    """``GET /v1/tasks/{id}/result`` 202: still labeling (or settling)."""

    task_id: str
    status: str
    labels_collected: int = 0
    consensus_threshold: int | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class Settlement(Model):
    """How a result was settled (contract §settlement).

    ``ledger`` ``"evm"``: anchored on an EVM chain, ``ledger_txid`` is the anchor transaction (``0x`` +
    64 hex) and the proof fields are set (check them with :func:`labelgate.verify_settlement`);
    ``"local"``: the hash-chained ledger table only (``ledger_txid`` = ``0x`` + the record's SHA-256,
    ``recorded_at`` set).
    """

    ledger: str
    ledger_txid: str
    sequence: int | None = None
    prev_hash: str | None = None
    chain_id: int | None = None
    block_number: int | None = None
    contract: str | None = None
    merkle_root: str | None = None
    #: hex of the canonical record bytes (the Merkle leaf's data, not its hash)
    leaf: str | None = None
    leaf_index: int | None = None
    tree_size: int | None = None
    #: RFC 9162 inclusion proof: sibling hashes from the leaf's level up, ``0x`` + 64 hex each
    proof: list[str] | None = None
    recorded_at: str | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class TaskResult(Model):
    """``GET /v1/tasks/{id}/result`` 200: the settled result and its ledger record.

    ``resolution``: ``consensus``, ``confidence`` or ``max_labels``; ``label_counts``: labels per option;
    ``posterior``: option → probability (0..1); ``confidence`` = ``posterior[consensus_label]``.
    ``consensus`` is the typed consensus of the reserved task types (:class:`MultiLabelConsensus`,
    :class:`BoxConsensus`, :class:`SpanConsensus`; None for single choice); ``consensus_label`` is then its
    canonical JSON without the confidences. A consensus of a shape this client does not know (a newer
    gateway's) is kept as its dict.
    """

    task_id: str
    status: str
    consensus_label: str
    confidence: float
    settlement: Settlement
    resolution: str | None = None
    label_counts: dict[str, int] | None = None
    posterior: dict[str, float] | None = None
    labels_collected: int | None = None
    settled_at: str | None = None
    consensus: Consensus | None = None
    #: 1 for the first settlement; a review that changed the result made each later one
    revision: int | None = None
    #: the earlier revisions, oldest first, each as it was settled with its ``settlement``
    revisions: list[dict[str, Any]] | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class ReviewOutcome(Model):
    """``POST /v1/tasks/{id}/review`` 200: the review, and the task's result after it: a :class:`TaskResult`
    when it is settled (accepted, or an answer equal to it), else a :class:`TaskProgress` (``settling`` while
    the reviewer's answer is recorded as the next revision, ``labeling`` when a rejection reopened the task)."""

    review: Review
    result: TaskResult | TaskProgress
    extra: dict[str, Any] = _extra()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReviewOutcome:
        """The outcome of a review's JSON answer; ``result`` built by its ``status``."""
        raw = data["result"]
        result: TaskResult | TaskProgress = TaskResult.from_dict(raw) if raw.get("status") == "settled" else TaskProgress.from_dict(raw)
        extra = {k: v for k, v in data.items() if k not in ("review", "result")}
        obj = cls(review=Review.from_dict(data["review"]), result=result, extra=extra)
        object.__setattr__(obj, "_present", frozenset(data.keys()))
        return obj


@dataclass
class Audit(Model):
    """``GET /v1/audits``: a settled task drawn for review at the customer's ``quality.audit_rate``.
    ``status`` ``open`` until the task is reviewed, then ``done`` with ``review_id`` and ``closed_at``;
    ``consensus_label``, ``confidence``, ``resolution`` and ``consensus`` are the task's result now (None
    while a rejection reopened it)."""

    task_id: str
    status: str
    label_space_id: str
    task_type: str
    data_url: str
    revision: int
    created_at: str
    label_spec: LabelSpec | None = None
    data_text: str | None = None
    consensus_label: str | None = None
    consensus: Consensus | None = None
    confidence: float | None = None
    resolution: str | None = None
    settled_at: str | None = None
    closed_at: str | None = None
    review_id: str | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class TaskCounts(Model):
    """Tasks by status."""

    pending: int = 0
    labeling: int = 0
    settling: int = 0
    settled: int = 0
    canceled: int = 0
    extra: dict[str, Any] = _extra()


@dataclass
class Batch(Model):
    """``GET /v1/batches/{id}``: status (accepted/in_progress/completed) and its tasks by status
    (gold tasks counted apart)."""

    batch_id: str
    task_count: int
    status: str
    created_at: str
    callback_url: str | None = None
    counts: TaskCounts = field(default_factory=TaskCounts)
    gold_tasks: int = 0
    extra: dict[str, Any] = _extra()


@dataclass
class RankedItem(Model):
    """One item of a :class:`Ranking`: ``item`` (its URL, or ``text:`` + 16 hex digits of its text's SHA-256),
    its Bradley-Terry ``score`` (natural-log scale, 0 = the average ranked item), ``rank`` (1 = best), the 95%
    interval ``ci_low``..``ci_high`` of the score, and the labels that compared it (``comparisons``)."""

    item: str
    score: float
    rank: int
    ci_low: float
    ci_high: float
    comparisons: int
    extra: dict[str, Any] = _extra()


@dataclass
class Ranking(Model):
    """``GET /v1/batches/{id}/ranking`` and ``GET /v1/jobs/{id}/ranking``: the compared items, best first, fitted on
    every label of the pairwise tasks (``labels``), each weighted by the labeler model; ``tie_parameter`` is
    Davidson's (0 without ties)."""

    items: list[RankedItem]
    labels: int
    tie_parameter: float
    extra: dict[str, Any] = _extra()

    def __iter__(self) -> Iterator[RankedItem]:
        return iter(self.items)


# --- labeling ---------------------------------------------------------------------------------------


@dataclass
class Claim(Model):
    """``POST /v1/labeling/claims`` 201: label the task before ``expires_at`` with the answer of its
    ``task_type``. ``view_url`` is a presigned GET (at most 15 minutes) of a private ``s3://``/``gs://`` item;
    ``data_text`` is a ``text_span`` task's text (spans count its code points)."""

    claim_id: str
    task_id: str
    data_url: str
    label_spec: LabelSpec
    expires_at: str
    task_type: str | None = None
    view_url: str | None = None
    data_text: str | None = None
    #: a ``pairwise_comparison`` task's item b (URL or text); item a is ``data_url`` or ``data_text``
    data_url_b: str | None = None
    data_text_b: str | None = None
    label_space: str | None = None
    instructions_version: int | None = None
    #: the task's pre-label ``{answer, model, score?}`` when its label spec had ``show_prelabel`` (a suggestion)
    prelabel: dict[str, Any] | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class Instructions(Model):
    """``GET /v1/labeling/spaces/{id}/instructions``: the current instructions of a label space (a claim's
    ``label_space``), ``version`` from 1 (a claim's ``instructions_version``). ``instructions`` is Markdown
    (None when only examples were given); each example is ``{data_url | data_text, answer, explanation?}``."""

    label_space: str
    version: int
    examples: list[dict[str, Any]]
    created_at: str
    instructions: str | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class RecordedLabel(Model):
    """``POST /v1/labeling/claims/{id}/label`` 201. ``labels_needed`` is 0 exactly when this label decided
    the task; otherwise the most labels it may still take. ``label`` is the option chosen, or for a reserved
    type the canonical JSON of ``answer`` (the answer body as recorded, its parts in canonical order)."""

    label_id: str
    claim_id: str
    task_id: str
    created_at: str
    labels_needed: int
    label: Any = None
    answer: dict[str, Any] | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class LabelerCreated(Model):
    """``POST /v1/admin/labelers`` 201: ``api_key`` (``lk_...``) is shown only here."""

    labeler_id: str
    name: str
    api_key: str
    created_at: str | None = None
    extra: dict[str, Any] = _extra()


# --- webhooks ---------------------------------------------------------------------------------------


@dataclass
class Webhook(Model):
    """A webhook (its secret is never returned); a deleted one is inactive with ``deleted_at``."""

    webhook_id: str
    callback_url: str
    events: list[str]
    active: bool
    created_at: str | None = None
    deleted_at: str | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class DeliveryAttempt(Model):
    """One attempt of a delivery: ``status_code`` (None without an answer), ``latency_ms``, ``error``."""

    attempt_id: str
    attempt: int
    success: bool
    manual: bool = False
    status_code: int | None = None
    error: str | None = None
    latency_ms: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class Delivery(Model):
    """One event for one webhook (``status`` pending/delivered/failed) with every attempt, newest first.
    ``task_id`` is the task of a task event (None for a job event), ``job_id`` the job of a job event."""

    delivery_id: str
    event_id: str
    event: str
    task_id: str | None
    status: str
    attempts: int
    created_at: str
    last_status_code: int | None = None
    last_error: str | None = None
    updated_at: str | None = None
    delivered_at: str | None = None
    job_id: str | None = None
    attempt_log: list[DeliveryAttempt] = field(default_factory=list)
    extra: dict[str, Any] = _extra()


@dataclass
class Redelivery(Model):
    """``POST .../redeliver`` 202: one new attempt is queued (same event id, fresh timestamp and signature)."""

    delivery_id: str
    attempt_id: str
    status: str
    extra: dict[str, Any] = _extra()


# --- jobs -------------------------------------------------------------------------------------------


@dataclass
class JobAccepted(Model):
    """``POST /v1/jobs`` 202: queued for ingestion."""

    job_id: str
    status: str
    created_at: str
    extra: dict[str, Any] = _extra()


@dataclass
class Job(Model):
    """``GET /v1/jobs/{id}``: status (queued → ingesting → labeling → completed, or failed with
    ``error``) and ``progress`` (settled share 0..1 of the tasks other than gold tasks)."""

    job_id: str
    status: str
    manifest_url: str
    created_at: str
    label_spec: LabelSpec | None = None
    type: str | None = None
    consensus_threshold: int | None = None
    max_labels: int | None = None
    confidence_target: float | None = None
    min_labels: int | None = None
    min_gain: float | None = None
    callback_url: str | None = None
    output_url: str | None = None
    task_count: int = 0
    gold_tasks: int = 0
    lines_ingested: int = 0
    tasks_settled: int = 0
    progress: float = 0.0
    error: str | None = None
    started_at: str | None = None
    ingested_at: str | None = None
    completed_at: str | None = None
    export_written_at: str | None = None
    extra: dict[str, Any] = _extra()


# --- billing and dashboard --------------------------------------------------------------------------


@dataclass
class BillingLineItem(Model):
    """Labels of one tier in a month, priced in integer cents."""

    tier: str
    labels: int
    unit_price_cents: int
    amount_cents: int
    extra: dict[str, Any] = _extra()


@dataclass
class Usage(Model):
    """``GET /v1/billing/usage?month=YYYY-MM``: labels and amount (integer cents) of a UTC month."""

    month: str
    currency: str
    labels_collected: int
    amount_cents: int
    tier: str | None = None
    price_per_label_cents: int | None = None
    tasks_settled: int | None = None
    line_items: list[BillingLineItem] = field(default_factory=list)
    extra: dict[str, Any] = _extra()


@dataclass
class Invoice(Model):
    """One customer-month (``open`` for the current month, ``finalized`` after); integer cents."""

    invoice_id: str
    month: str
    status: str
    currency: str
    amount_cents: int
    labels_collected: int = 0
    tasks_settled: int = 0
    line_items: list[BillingLineItem] = field(default_factory=list)
    created_at: str | None = None
    finalized_at: str | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class InvoiceList(Model):
    """``GET /v1/billing/invoices``: newest month first."""

    items: list[Invoice] = field(default_factory=list)
    extra: dict[str, Any] = _extra()

    def __iter__(self) -> Iterator[Invoice]:
        return iter(self.items)


@dataclass
class DashboardOverview(Model):
    """``GET /v1/dashboard/overview``. ``median_seconds_to_settle`` (seconds) and
    ``webhook_delivery_success_rate`` (0..1) cover the last 30 days, None without data."""

    tasks_by_status: TaskCounts = field(default_factory=TaskCounts)
    labels_this_month: int = 0
    label_quota: int = 0
    label_quota_remaining: int = 0
    median_seconds_to_settle: float | None = None
    webhook_delivery_success_rate: float | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class DashboardQuality(Model):
    """``GET /v1/dashboard/quality``: tasks settled in the last ``window_days``; ``calibration`` (None
    without gold answers) is ``{gold_tasks, bins: [10 x {lower, upper, tasks, mean_confidence, accuracy}], ece}``;
    ``reviewed`` the same reliability measured on reviewed results (all label spaces, then each)."""

    window_days: int = 90
    tasks_settled: int = 0
    mean_confidence: float | None = None
    resolution: dict[str, Any] = field(default_factory=dict)
    labels_per_task: list[dict[str, Any]] = field(default_factory=list)
    agreement_rate: float | None = None
    calibration: dict[str, Any] | None = None
    #: reviewed results: ``{reviews, reviewed_accuracy, mean_confidence_reviewed, bins: [10 x {lower, upper,
    #: tasks, mean_confidence, accuracy}], ece, label_spaces: [the same per label space, with label_space_id,
    #: question, task_type]}``
    reviewed: dict[str, Any] | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class LabelerQuality(Model):
    """One labeler in one label space: gold record and estimated accuracy (0..1), ``active``/``excluded``."""

    labeler_id: str
    label_space: str
    labels: int = 0
    gold_answers: int = 0
    question: str | None = None
    gold_accuracy: float | None = None
    estimated_accuracy: float | None = None
    status: str | None = None
    #: a model labeler's model name (its pre-labels), None for a person
    model: str | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class LabelerQualityList(Model):
    """``GET /v1/dashboard/labelers``."""

    items: list[LabelerQuality] = field(default_factory=list)
    extra: dict[str, Any] = _extra()

    def __iter__(self) -> Iterator[LabelerQuality]:
        return iter(self.items)


@dataclass
class UsageDay(Model):
    """Labels collected on one UTC day (``date``: ``YYYY-MM-DD``)."""

    date: str
    labels: int
    extra: dict[str, Any] = _extra()


@dataclass
class DashboardUsage(Model):
    """``GET /v1/dashboard/usage``: the last 30 UTC days, oldest first, zeros included."""

    days: list[UsageDay] = field(default_factory=list)
    extra: dict[str, Any] = _extra()


@dataclass
class Health(Model):
    """``GET /v1/health`` 200."""

    ok: bool
    service: str | None = None
    checks: dict[str, str] | None = None
    extra: dict[str, Any] = _extra()


@dataclass
class Page(Generic[T]):
    """One page of a list route: ``page`` (from 1), ``per_page`` (1..100), ``total`` items, ``items``."""

    page: int
    per_page: int
    total: int
    items: list[T]

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    @staticmethod
    def of(item: type[M], data: Mapping[str, Any]) -> Page[M]:
        """The page of ``data`` with each item built as ``item``."""
        return Page(
            page=int(data.get("page", 1)),
            per_page=int(data.get("per_page", len(data.get("items", [])))),
            total=int(data.get("total", 0)),
            items=[item.from_dict(x) for x in data.get("items", [])],
        )

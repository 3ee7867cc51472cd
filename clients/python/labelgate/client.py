"""``Client``: the customer's side of the labelgate API, one namespace per resource.

Every method raises a :class:`labelgate.LabelgateError` subclass on an error answer (see
:mod:`labelgate.errors`) after the transport's retries (429 always, honouring ``Retry-After``; 503 and
connection failures when the request is safe to repeat). Creates of tasks and batches carry an
``Idempotency-Key`` (generated when not given), so a retried submission never creates a second task.
"""

from __future__ import annotations

import builtins
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

from ._routes import route
from ._transport import ResponseEvent, StreamedAnswer, Transport, new_idempotency_key
from .errors import ResponseError, WaitTimeoutError
from .models import (
    Audit,
    Batch,
    BatchAccepted,
    Customer,
    DashboardOverview,
    DashboardQuality,
    DashboardUsage,
    Delivery,
    Health,
    InvoiceList,
    Job,
    JobAccepted,
    LabelerCreated,
    LabelerQualityList,
    Page,
    Ranking,
    Redelivery,
    RegisteredCustomer,
    ReviewOutcome,
    Settings,
    Task,
    TaskAccepted,
    TaskResult,
    Usage,
    Webhook,
    flatten,
)

__all__ = ["DEFAULT_BASE_URL", "AdminClient", "Client"]

#: ``LABELGATE_URL`` from the environment, else the address ``pnpm start`` serves on.
DEFAULT_BASE_URL = os.environ.get("LABELGATE_URL", "http://127.0.0.1:3000")


def _id(value: str, what: str) -> str:
    """``value``, a path parameter, as given (:func:`route` URL-encodes it). Raises ValueError ``<what> is required``
    for an empty or non-string one."""
    if not isinstance(value, str) or value == "":
        raise ValueError(f"{what} is required")
    return value


def _body(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body of the given fields, those set to None left out."""
    return {k: v for k, v in fields.items() if v is not None}


class _Namespace:
    def __init__(self, transport: Transport) -> None:
        self._t = transport


class AccountAPI(_Namespace):
    """``GET /v1/customers/me``."""

    def get(self) -> Customer:
        """The calling customer's profile and quota (labels: ``label_quota``, ``label_quota_used``,
        ``label_quota_remaining``). Raises AuthenticationError."""
        return Customer.from_dict(self._t.request(*route("getCurrentCustomer")).data)


class SettingsAPI(_Namespace):
    """``GET``/``PATCH /v1/customers/me/settings``: task defaults and quality settings (contract §quality)."""

    def get(self) -> Settings:
        """The settings, every field present (None = the service default)."""
        return Settings.from_dict(self._t.request(*route("getSettings")).data)

    def update(self, *, task_defaults: Mapping[str, Any] | None = None, quality: Mapping[str, Any] | None = None) -> Settings:
        """Merges the given fields (a None value inside a mapping clears that field) and returns the
        whole settings. ``task_defaults``: ``consensus_threshold`` (1..25), ``confidence_target``
        (0.5..0.999), ``min_labels``, ``min_gain`` (0.001..0.5), ``max_labels`` (1..50); ``quality``: ``gold_rate``
        (0..1), ``min_labeler_accuracy`` (0..1), ``min_gold_answers``, ``audit_rate`` (0..1: the share of settled
        tasks drawn into the audit queue), ``qualification`` (``{"gold_tasks": 10, "min_accuracy": 0.65}``: the
        exam of a labeler new to a label space, contract §qualification; None: no exam).
        Raises ValidationError (``details`` name the field, e.g. ``task_defaults.max_labels``)."""
        body: dict[str, Any] = {}
        if task_defaults is not None:
            body["task_defaults"] = dict(task_defaults)
        if quality is not None:
            body["quality"] = dict(quality)
        return Settings.from_dict(self._t.request(*route("updateSettings"), body=body, idempotent=True).data)


class TasksAPI(_Namespace):
    """``/v1/tasks``: submit, read, result, wait, cancel, list."""

    def create(
        self,
        *,
        type: str,
        data_url: str,
        label_spec: Mapping[str, Any],
        callback_url: str | None = None,
        consensus_threshold: int | None = None,
        max_labels: int | None = None,
        confidence_target: float | None = None,
        min_labels: int | None = None,
        min_gain: float | None = None,
        gold_label: str | None = None,
        gold_answer: Mapping[str, Any] | None = None,
        data_text: str | None = None,
        data_url_b: str | None = None,
        data_text_b: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        prelabel: Mapping[str, Any] | None = None,
        **optional: Any,
    ) -> TaskAccepted:
        """Submits one task (202, ``pending``).

        ``type`` picks the ``label_spec`` (contract §task-types): ``multi_label_classification``
        (``{"question", "options": [1..50 unique str]}``), ``bounding_box`` (``{"question", "classes": [...]}``),
        ``text_span`` (``{"question", "entity_types": [...]}``), ``free_text`` (``{"question", "max_length"?,
        "normalize"?}``), ``pairwise_comparison`` (``{"question", "allow_tie"?}``), any other value (e.g.
        ``image_classification``) single choice (``{"question", "options": [2..50 unique str]}``). ``data_url``:
        http(s), ``s3://`` or ``gs://``; ``data_text``: a ``text_span`` task's text (at most 100,000 code points;
        without it the gateway fetches ``data_url``), or a ``pairwise_comparison`` task's item a as text; item b of a
        ``pairwise_comparison`` task: ``data_url_b``, or ``data_text_b`` with ``data_text``. ``consensus_threshold`` 1..25 (default 3); ``max_labels`` <= 50;
        ``confidence_target`` in (0.5, 1): the confidence policy; ``min_gain`` (0.001..0.5) also settles it,
        resolution ``no_gain``, when the best next label cannot raise its confidence by that much. A gold task: ``gold_label`` (single choice: an
        option) or ``gold_answer`` (a reserved type: its answer body, e.g. ``{"labels": ["red"]}``,
        ``{"boxes": [{"label", "x", "y", "w", "h"}]}`` in pixels, ``{"spans": [{"start", "end", "label"}]}`` in
        code points). ``prelabel``: a model's answer ``{"answer": <answer body>, "model": name, "score"?: 0..1}``,
        the vote of the labeler ``model:<name>`` (never charged, never settles the task alone; ``label_spec``
        ``show_prelabel: True`` shows it to labelers). ``metadata``: echoed back; ``**optional``: any other
        field of the API's task body.
        ``idempotency_key`` (printable ASCII, 1..255): the same key and body answer the original task;
        generated when not given, so retries are safe.
        Raises ValidationError (``details``: e.g. ``label_spec.classes``, ``gold_answer.spans.0.end``),
        QuotaExhaustedError, PayloadTooLargeError (> 1 MB), IdempotencyError (key reused with another body).
        """
        body = _body(
            {
                "type": type,
                "data_url": data_url,
                "label_spec": dict(label_spec),
                "callback_url": callback_url,
                "consensus_threshold": consensus_threshold,
                "max_labels": max_labels,
                "confidence_target": confidence_target,
                "min_labels": min_labels,
                "min_gain": min_gain,
                "gold_label": gold_label,
                "gold_answer": dict(gold_answer) if gold_answer is not None else None,
                "data_text": data_text,
                "data_url_b": data_url_b,
                "data_text_b": data_text_b,
                "metadata": dict(metadata) if metadata is not None else None,
                "prelabel": dict(prelabel) if prelabel is not None else None,
                **optional,
            }
        )
        key = idempotency_key or new_idempotency_key()
        return TaskAccepted.from_dict(self._t.request(*route("createTask"), body=body, idempotency_key=key).data)

    def batch(
        self,
        tasks: Iterable[Mapping[str, Any]],
        *,
        callback_url: str | None = None,
        idempotency_key: str | None = None,
        **top_level: Any,
    ) -> BatchAccepted:
        """Submits up to 10,000 tasks at once, all or none; ``task_ids`` follow the order of ``tasks``
        (each a dict shaped like :meth:`create`'s arguments). ``callback_url`` and ``**top_level``
        (``max_labels``, ``confidence_target``, ``min_labels``, ``min_gain``) apply to every task that does not set
        its own. ``idempotency_key`` as in :meth:`create` (generated when not given).
        Raises ValidationError (details ``tasks.<i>.<field>``), QuotaExhaustedError,
        PayloadTooLargeError (> 10 MB), IdempotencyError.
        """
        body = _body({"tasks": [dict(t) for t in tasks], "callback_url": callback_url, **top_level})
        key = idempotency_key or new_idempotency_key()
        return BatchAccepted.from_dict(self._t.request(*route("createTaskBatch"), body=body, idempotency_key=key).data)

    def get(self, task_id: str) -> Task:
        """The task, its status and, once decided, its consensus. Raises NotFoundError ``task not found``."""
        return Task.from_dict(self._t.request(*route("getTask", id=_id(task_id, "task_id"))).data)

    def result(self, task_id: str) -> TaskResult | None:
        """The settled result (consensus, confidence, settlement), or None while the task is still being
        labeled or settled (HTTP 202). Raises NotFoundError, ConflictError ``task canceled`` /
        ``gold tasks have no result``."""
        answer = self._t.request(*route("getTaskResult", id=_id(task_id, "task_id")))
        if answer.status == 202:
            return None
        return TaskResult.from_dict(answer.data)

    def wait(self, task_id: str, timeout_s: float | None = None, *, interval_s: float = 1.0) -> TaskResult:
        """Polls :meth:`result` every ``interval_s`` seconds until the task is settled and returns its result.
        ``timeout_s``: seconds (None: no deadline). Raises WaitTimeoutError at the deadline,
        ConflictError ``task canceled``, NotFoundError."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            r = self.result(task_id)
            if r is not None:
                return r
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WaitTimeoutError(0, f"task {task_id} not settled after {timeout_s:g} s", method="GET", path=route("getTaskResult", id=task_id)[1])
                time.sleep(min(interval_s, left))
            else:
                time.sleep(interval_s)

    def cancel(self, task_id: str) -> Task:
        """Cancels an open (pending or labeling) task; its unused reserved quota is returned.
        Raises NotFoundError, ConflictError ``task cannot be canceled`` (settling or settled)."""
        return Task.from_dict(self._t.request(*route("cancelTask", id=_id(task_id, "task_id")), idempotent=True).data)

    def review(self, task_id: str, verdict: str, answer: str | Mapping[str, Any] | None = None) -> ReviewOutcome:
        """Reviews a settled result (contract §review): ``verdict`` ``"accept"`` (the result is right) or
        ``"reject"``; with ``answer`` (an option of a single-choice task, or a reserved type's answer body such as
        ``{"labels": [...]}``) the answer is right and, when it differs, becomes the next revision; ``"reject"``
        alone (single choice only) reopens the task for more labels. Reviewing a task closes its audit.
        Not retried (every review is kept). Raises ValidationError (a bad verdict or answer), NotFoundError
        ``task not found``, ConflictError ``task not settled``."""
        if answer is not None and verdict == "accept":
            raise ValueError("an accepted result takes no answer (reject with the right answer)")
        body: dict[str, Any] = {"verdict": verdict}
        if answer is not None:
            body["answer"] = {"label": answer} if isinstance(answer, str) else dict(answer)
        return ReviewOutcome.from_dict(self._t.request(*route("reviewTask", id=_id(task_id, "task_id")), body=body).data)

    def page(self, *, page: int = 1, per_page: int = 20, status: str | None = None, sort: str | None = None) -> Page[Task]:
        """One page of the customer's tasks (``GET /v1/dashboard/tasks``): ``status`` pending/labeling/
        settling/settled/canceled (None: all), ``sort`` ``created_at_desc`` (default), ``created_at_asc``
        or ``settled_at_desc``, ``per_page`` 1..100. Raises ValidationError."""
        q = {"page": page, "per_page": per_page, "status": status, "sort": sort}
        return Page.of(Task, self._t.request(*self._t.query(route("listDashboardTasks"), q)).data)

    def list(self, *, status: str | None = None, sort: str | None = None, per_page: int = 100) -> Iterator[Task]:
        """Every task of the customer (or of one ``status``), page after page, as they come."""
        n = 1
        while True:
            p = self.page(page=n, per_page=per_page, status=status, sort=sort)
            yield from p.items
            if not p.items or n * p.per_page >= p.total:
                return
            n += 1

    def to_records(self, items: Iterable[Any] | None = None, *, status: str | None = None) -> builtins.list[dict[str, Any]]:
        """Flat dicts ready for ``pandas.DataFrame(records)`` (pandas is not imported here): nested
        objects become dotted columns (``settlement.ledger_txid``, ``posterior.cat``, ``metadata.sku``).
        ``items``: tasks, results or dicts to convert; None: every task of the customer (of ``status``)."""
        source = self.list(status=status) if items is None else items
        return [flatten(x) for x in source]


class AuditsAPI(_Namespace):
    """``/v1/audits``: the audit queue, settled tasks drawn for review at ``quality.audit_rate`` (set it with
    ``client.settings.update(quality={"audit_rate": 0.05})``). Review one with ``client.tasks.review``."""

    def page(self, *, status: str = "open", page: int = 1, per_page: int = 20) -> Page[Audit]:
        """One page of the audits, oldest first: ``status`` ``open`` (not reviewed yet) or ``done`` (closed by a
        review), ``per_page`` 1..100. Raises ValidationError."""
        q = {"status": status, "page": page, "per_page": per_page}
        return Page.of(Audit, self._t.request(*self._t.query(route("listAudits"), q)).data)

    def list(self, *, status: str = "open", per_page: int = 100) -> Iterator[Audit]:
        """Every audit of ``status``, oldest first, page after page, as they come."""
        n = 1
        while True:
            p = self.page(status=status, page=n, per_page=per_page)
            yield from p.items
            if not p.items or n * p.per_page >= p.total:
                return
            n += 1


class BatchesAPI(_Namespace):
    """``/v1/batches``: the list, one batch, and its streamed export."""

    def get(self, batch_id: str) -> Batch:
        """A batch's status and its tasks by status. Raises NotFoundError ``batch not found``."""
        return Batch.from_dict(self._t.request(*route("getBatch", id=_id(batch_id, "batch_id"))).data)

    def ranking(self, batch_id: str) -> Ranking:
        """The ranking of the items the batch's ``pairwise_comparison`` tasks compared (:class:`Ranking`), best
        first (weighted Bradley-Terry scores, 95% intervals). Raises NotFoundError ``batch not found``,
        ValidationError past 2,000 items."""
        return Ranking.from_dict(self._t.request(*route("getBatchRanking", id=_id(batch_id, "batch_id"))).data)

    def page(self, *, page: int = 1, per_page: int = 20) -> Page[Batch]:
        """A page of the customer's batches, newest first."""
        return Page.of(Batch, self._t.request(*self._t.query(route("listBatches"), {"page": page, "per_page": per_page})).data)

    def export(self, batch_id: str, *, format: str = "jsonl", flat: bool = False) -> Iterator[dict[str, Any]]:
        """The export of a completed batch, one dict per task in task id order, streamed as for
        :meth:`JobsAPI.export` (``jsonl`` lines end with ``metadata`` where a job's have ``source``). Raises
        ValueError, NotFoundError ``batch not found``, ConflictError ``batch not completed``
        (``body["status"]``), ValidationError for a format that does not fit the batch's task types."""
        return _export_lines(self._t, _export_path(self._t, "exportBatch", _id(batch_id, "batch_id"), format, lines=True), flat)

    def export_to_file(self, batch_id: str, path: str | os.PathLike[str], *, format: str = "jsonl") -> int:
        """Streams the batch's export in ``format`` into ``path`` (through ``path + ".part"``). Returns the
        bytes written. Raises like :meth:`export`, and OSError of the filesystem."""
        return _export_to_file(self._t, _export_path(self._t, "exportBatch", _id(batch_id, "batch_id"), format), path)


class WebhooksAPI(_Namespace):
    """``/v1/webhooks``: register, list, change the events, delete, the delivery log, redelivery."""

    def create(self, callback_url: str, secret: str, events: builtins.list[str] | None = None) -> Webhook:
        """Registers a webhook; ``secret`` (at least 16 characters) signs deliveries and is never returned.
        ``events`` default ``["task.settled"]``. Raises ValidationError (URL not allowed, short secret,
        unknown event), ConflictError (an active webhook already uses this URL)."""
        body = _body({"callback_url": callback_url, "secret": secret, "events": events})
        return Webhook.from_dict(self._t.request(*route("createWebhook"), body=body).data)

    def list(self) -> builtins.list[Webhook]:
        """Every webhook of the customer, newest first, deleted ones included."""
        return [Webhook.from_dict(w) for w in self._t.request(*route("listWebhooks")).data]

    def update(self, webhook_id: str, events: builtins.list[str]) -> Webhook:
        """Replaces the events the webhook subscribes to (names of :data:`labelgate.events.EVENT_TYPES`, at
        least one). Raises ValidationError (unknown event), NotFoundError ``webhook not found``, ConflictError
        ``webhook is not active``."""
        call = route("updateWebhook", id=_id(webhook_id, "webhook_id"))
        return Webhook.from_dict(self._t.request(*call, body={"events": events}, idempotent=True).data)

    def delete(self, webhook_id: str) -> Webhook:
        """Deactivates a webhook (soft delete; again: same answer). Raises NotFoundError ``webhook not found``."""
        return Webhook.from_dict(self._t.request(*route("deleteWebhook", id=_id(webhook_id, "webhook_id"))).data)

    def deliveries(self, webhook_id: str, *, status: str | None = None, page: int = 1, per_page: int = 20) -> Page[Delivery]:
        """A page of the webhook's deliveries with every attempt, newest first; ``status``
        pending/delivered/failed (None: all), ``per_page`` 1..100. Raises NotFoundError, ValidationError."""
        q = {"status": status, "page": page, "per_page": per_page}
        call = self._t.query(route("listWebhookDeliveries", id=_id(webhook_id, "webhook_id")), q)
        return Page.of(Delivery, self._t.request(*call).data)

    def redeliver(self, webhook_id: str, delivery_id: str) -> Redelivery:
        """Queues one more attempt of a delivery (same event id, fresh timestamp and signature).
        Raises NotFoundError ``webhook not found`` / ``delivery not found``, ConflictError ``webhook is not active``."""
        call = route("redeliverWebhookDelivery", id=_id(webhook_id, "webhook_id"), deliveryId=_id(delivery_id, "delivery_id"))
        return Redelivery.from_dict(self._t.request(*call).data)


class JobsAPI(_Namespace):
    """``/v1/jobs``: manifest jobs and their streamed export."""

    def create(
        self,
        manifest_url: str,
        label_spec: Mapping[str, Any],
        *,
        type: str | None = None,
        credentials: Mapping[str, Any] | None = None,
        output_url: str | None = None,
        callback_url: str | None = None,
        consensus_threshold: int | None = None,
        max_labels: int | None = None,
        confidence_target: float | None = None,
        min_labels: int | None = None,
        min_gain: float | None = None,
        **optional: Any,
    ) -> JobAccepted:
        """Creates a manifest job (202, ``queued``). ``manifest_url``: ``s3://bucket/key`` (credentials
        ``{access_key_id, secret_access_key, region, endpoint?}``), ``gs://bucket/key``
        (``{service_account_json}``) or ``https://...`` (no credentials). The manifest is JSONL, one
        object per line with ``data_url`` or ``source-ref``; a gold line (``gold_label`` or ``gold_answer``) may
        carry ``gold_explanation`` (1 to 2,000 characters), shown to a labeler in training after its answer
        (contract §qualification). Credentials are sealed, never returned.
        Raises ValidationError, QuotaExhaustedError. Not retried on 503 or a lost connection (the API
        takes no idempotency key for jobs): check :meth:`list` before creating again."""
        body = _body(
            {
                "manifest_url": manifest_url,
                "label_spec": dict(label_spec),
                "type": type,
                "credentials": dict(credentials) if credentials is not None else None,
                "output_url": output_url,
                "callback_url": callback_url,
                "consensus_threshold": consensus_threshold,
                "max_labels": max_labels,
                "confidence_target": confidence_target,
                "min_labels": min_labels,
                "min_gain": min_gain,
                **optional,
            }
        )
        return JobAccepted.from_dict(self._t.request(*route("createJob"), body=body).data)

    def get(self, job_id: str) -> Job:
        """A job's status and progress. Raises NotFoundError ``job not found``."""
        return Job.from_dict(self._t.request(*route("getJob", id=_id(job_id, "job_id"))).data)

    def ranking(self, job_id: str) -> Ranking:
        """The ranking of the items a ``pairwise_comparison`` job's tasks compared (:class:`Ranking`), as
        :meth:`BatchesAPI.ranking` for a batch. Raises NotFoundError ``job not found``, ValidationError for a job
        of another type or past 2,000 items."""
        return Ranking.from_dict(self._t.request(*route("getJobRanking", id=_id(job_id, "job_id"))).data)

    def page(self, *, page: int = 1, per_page: int = 20) -> Page[Job]:
        """A page of the customer's jobs, newest first."""
        return Page.of(Job, self._t.request(*self._t.query(route("listJobs"), {"page": page, "per_page": per_page})).data)

    def wait(self, job_id: str, timeout_s: float | None = None, *, interval_s: float = 2.0) -> Job:
        """Polls :meth:`get` until the job is ``completed`` or ``failed`` and returns it (check ``status``
        and ``error``). Raises WaitTimeoutError at the deadline (``timeout_s`` seconds)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            job = self.get(job_id)
            if job.status in ("completed", "failed"):
                return job
            if deadline is not None and time.monotonic() + interval_s > deadline:
                raise WaitTimeoutError(0, f"job {job_id} still {job.status} after {timeout_s:g} s", method="GET", path=route("getJob", id=job_id)[1])
            time.sleep(interval_s)

    def export(self, job_id: str, *, format: str = "jsonl", flat: bool = False) -> Iterator[dict[str, Any]]:
        """The export of a completed job, one dict per manifest line in manifest order, parsed as the lines
        arrive: memory stays flat at any size. ``format`` (contract §exports): ``jsonl`` (the default:
        ``task_id, data_url, consensus_label, confidence, ledger_txid, settled_at, source``) or ``hf`` (the
        records Hugging Face ``datasets`` loads); the other formats are not JSON Lines: :meth:`export_to_file`.
        ``flat``: nested objects as dotted keys (``source.source-ref``), for
        ``pandas.DataFrame(client.jobs.export(job_id, flat=True))``.

        The request is sent at once; the lines are read as you iterate. Raises ValueError for a format that
        is not JSON Lines, NotFoundError, ConflictError ``job not completed`` (``body["status"]`` is the job's
        status), ValidationError for a format that does not fit the job's type (``body["formats"]``: those
        that fit); while iterating, ResponseError on a line that is not JSON or an answer cut short."""
        return _export_lines(self._t, _export_path(self._t, "exportJob", _id(job_id, "job_id"), format, lines=True), flat)

    def export_to_file(self, job_id: str, path: str | os.PathLike[str], *, format: str = "jsonl") -> int:
        """Streams the export in ``format`` (``jsonl``, ``label-studio``, ``coco``, ``conll`` or ``hf``) into
        ``path`` (written to ``path + ".part"``, renamed when complete, so a cut download never leaves a
        partial file under the final name). Returns the bytes written. Raises like :meth:`export`, and
        OSError of the filesystem."""
        return _export_to_file(self._t, _export_path(self._t, "exportJob", _id(job_id, "job_id"), format), path)


EXPORT_FORMATS = ("jsonl", "label-studio", "coco", "conll", "hf")
"""The formats of a job's or a batch's export (contract §exports; the ``format`` enum of the OpenAPI document)."""


def _export_path(t: Transport, operation: Literal["exportJob", "exportBatch"], resource_id: str, format: str, *, lines: bool = False) -> str:
    """The path of an export in ``format`` (no query for the default). Raises ValueError for an unknown format,
    or one that is not JSON Lines when ``lines``."""
    if format not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS)}, not {format!r}")
    if lines and format not in ("jsonl", "hf"):
        raise ValueError(f"format {format} is not JSON Lines: use export_to_file")
    _, base = route(operation, id=resource_id)
    return base if format == "jsonl" else t.path(base, {"format": format})


def _export_lines(t: Transport, path: str, flat: bool) -> Iterator[dict[str, Any]]:
    """Sends the export request at once; the lines are parsed as the caller iterates."""
    answer = t.stream("GET", path)
    return _lines_of(answer, path, flat)


def _lines_of(answer: StreamedAnswer, path: str, flat: bool) -> Iterator[dict[str, Any]]:
    n = 0
    try:
        for line in answer.lines():
            n += 1
            if not line:
                continue
            try:
                item = json.loads(line)
            except ValueError as err:
                raise ResponseError(200, f"export line {n} is not JSON", method="GET", path=path) from err
            yield flatten(item) if flat else item
    except OSError as err:
        raise ResponseError(200, f"export cut short after {n} lines: {err}", method="GET", path=path) from err
    finally:
        answer.close()


def _export_to_file(t: Transport, export_path: str, path: str | os.PathLike[str]) -> int:
    part = f"{os.fspath(path)}.part"
    written = 0
    answer = t.stream("GET", export_path)
    try:
        with open(part, "wb") as out:
            while True:
                chunk = answer.response.read(65536)
                if not chunk:
                    break
                out.write(chunk)
                written += len(chunk)
        os.replace(part, path)
    except BaseException:
        if os.path.exists(part):
            os.remove(part)
        raise
    finally:
        answer.close()
    return written


class BillingAPI(_Namespace):
    """``/v1/billing``: monthly usage and invoices (integer cents)."""

    def usage(self, month: str) -> Usage:
        """Usage of a UTC month ``YYYY-MM``, priced per tier. Raises ValidationError (details path ``month``)."""
        return Usage.from_dict(self._t.request(*self._t.query(route("getUsage"), {"month": month})).data)

    def invoices(self) -> InvoiceList:
        """Invoices, newest month first; the current month is ``open``."""
        return InvoiceList.from_dict(self._t.request(*route("listInvoices")).data)


class DashboardAPI(_Namespace):
    """``/v1/dashboard``: overview, task list, quality, labelers, daily usage."""

    def overview(self) -> DashboardOverview:
        """Tasks by status, labels this month, quota, median time to settle, webhook success rate."""
        return DashboardOverview.from_dict(self._t.request(*route("getDashboardOverview")).data)

    def tasks(self, *, page: int = 1, per_page: int = 20, status: str | None = None, sort: str | None = None) -> Page[Task]:
        """A page of the customer's tasks (same as ``client.tasks.page``)."""
        return TasksAPI(self._t).page(page=page, per_page=per_page, status=status, sort=sort)

    def quality(self) -> DashboardQuality:
        """Quality of the tasks settled in the last 90 days and the calibration of ``confidence`` on gold tasks."""
        return DashboardQuality.from_dict(self._t.request(*route("getDashboardQuality")).data)

    def labelers(self) -> LabelerQualityList:
        """The labelers of the customer's label spaces: labels, gold record, estimated accuracy, status."""
        return LabelerQualityList.from_dict(self._t.request(*route("getDashboardLabelers")).data)

    def usage(self) -> DashboardUsage:
        """Labels per UTC day over the last 30 days, oldest first."""
        return DashboardUsage.from_dict(self._t.request(*route("getDashboardUsage")).data)


class Client:
    """The labelgate API client of a customer.

    ``api_key``: ``sk_sandbox_...`` or ``sk_live_...`` (None: ``LABELGATE_API_KEY`` from the
    environment); ``base_url``: the gateway (default ``LABELGATE_URL`` or ``http://127.0.0.1:3000``);
    ``timeout``: seconds per attempt; ``max_retries``: retries after the first attempt (0 turns them
    off); ``max_retry_after``: longest ``Retry-After`` waited for, seconds (a longer one raises at once);
    ``on_response``: called once per call with a :class:`labelgate.ResponseEvent` (status, attempts,
    duration). Thread-safe; each thread keeps one kept-alive connection (``close()`` or ``with`` closes them).

    Namespaces: ``account``, ``settings``, ``tasks``, ``audits``, ``batches``, ``webhooks``, ``jobs``, ``billing``,
    ``dashboard``.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        *,
        max_retries: int = 2,
        max_retry_after: float = 60.0,
        on_response: Callable[[ResponseEvent], None] | None = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("LABELGATE_API_KEY")
        if not key:
            raise ValueError("api_key is required (or set LABELGATE_API_KEY)")
        self._transport = Transport(
            base_url or DEFAULT_BASE_URL,
            key,
            timeout=timeout,
            max_retries=max_retries,
            max_retry_after=max_retry_after,
            on_response=on_response,
        )
        self.account = AccountAPI(self._transport)
        self.settings = SettingsAPI(self._transport)
        self.tasks = TasksAPI(self._transport)
        self.audits = AuditsAPI(self._transport)
        self.batches = BatchesAPI(self._transport)
        self.webhooks = WebhooksAPI(self._transport)
        self.jobs = JobsAPI(self._transport)
        self.billing = BillingAPI(self._transport)
        self.dashboard = DashboardAPI(self._transport)

    @property
    def base_url(self) -> str:
        """The gateway's URL (no trailing ``/``)."""
        return self._transport.base_url

    def health(self) -> Health:
        """``GET /v1/health`` (no auth needed). Raises ServiceUnavailableError when Postgres or the queue is down."""
        return Health.from_dict(self._transport.request(*route("getHealth")).data)

    @staticmethod
    def register(name: str, email: str, base_url: str | None = None, timeout: float = 60.0) -> RegisteredCustomer:
        """Registers a customer (no auth): a sandbox tier, 500 labels of quota and an ``api_key`` shown
        only in this answer. Raises ConflictError ``email already registered``, ValidationError."""
        t = Transport(base_url or DEFAULT_BASE_URL, None, timeout=timeout)
        try:
            return RegisteredCustomer.from_dict(t.request(*route("registerCustomer"), body={"name": name, "email": email}).data)
        finally:
            t.close()

    def close(self) -> None:
        """Closes the kept-alive connections (of every thread); a later call opens a new one."""
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AdminClient:
    """The operator's routes (``/v1/admin``, ``Authorization: Bearer <ADMIN_TOKEN>``): labelers and
    customers. Same options as :class:`Client`."""

    def __init__(self, admin_token: str, base_url: str | None = None, timeout: float = 60.0, *, max_retries: int = 2) -> None:
        if not admin_token:
            raise ValueError("admin_token is required")
        self._t = Transport(base_url or DEFAULT_BASE_URL, admin_token, timeout=timeout, max_retries=max_retries)

    def create_labeler(self, name: str) -> LabelerCreated:
        """Creates a labeler; its ``api_key`` (``lk_...``) is shown only in this answer. Raises AuthenticationError."""
        return LabelerCreated.from_dict(self._t.request(*route("createLabeler"), body={"name": name}).data)

    def set_label_quota(self, customer_id: str, label_quota: int) -> Customer:
        """Sets a customer's label quota (an absolute number of labels). Raises NotFoundError ``customer not found``."""
        call = route("setCustomerQuota", id=_id(customer_id, "customer_id"))
        return Customer.from_dict(self._t.request(*call, body={"label_quota": label_quota}, idempotent=True).data)

    def upgrade_customer(self, customer_id: str, *, keep_sandbox_key: bool = False) -> dict[str, Any]:
        """Moves a customer to the production tier: the answer (a dict) holds the new ``sk_live_`` key
        (shown once). Raises NotFoundError, ConflictError (already production)."""
        call = route("upgradeCustomer", id=_id(customer_id, "customer_id"))
        data: dict[str, Any] = self._t.request(*call, body={"keep_sandbox_key": keep_sandbox_key}).data
        return data

    def close(self) -> None:
        """Closes the kept-alive connections (of every thread); a later call opens a new one."""
        self._t.close()



"""``LabelerClient``: the workforce's side of the API (contract §labelers), with a labeler key ``lk_...``.

A labeler claims a task, labels it with the answer of its type (an option of a single-choice task, or the
answer body of a reserved type: ``{"labels"}``, ``{"boxes"}``, ``{"spans"}``, contract §task-types) or skips it
(release), and claims the next.
A model can be a labeler like anyone else: the gateway's labeler model (Dawid-Skene) weighs its labels by
the accuracy it measures, gold answers included (see examples/model_labeler.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._routes import route
from ._transport import ResponseEvent, Transport, new_idempotency_key
from .client import DEFAULT_BASE_URL
from .models import Claim, Instructions, RecordedLabel

__all__ = ["LabelerClient"]


def _claim_id(claim_id: str) -> str:
    """``claim_id`` as given (:func:`route` URL-encodes it). Raises ValueError for an empty or non-string one."""
    if not isinstance(claim_id, str) or claim_id == "":
        raise ValueError("claim_id is required")
    return claim_id


class LabelerClient:
    """A labeler's client. ``api_key``: the labeler key (``lk_...``, from ``POST /v1/admin/labelers``);
    ``base_url``, ``timeout`` (seconds per attempt), ``max_retries`` and ``on_response`` as in
    :class:`labelgate.Client`. Thread-safe."""

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 60.0,
        *,
        max_retries: int = 2,
        on_response: Callable[[ResponseEvent], None] | None = None,
    ) -> None:
        if not api_key:
            raise ValueError("api_key (a labeler key, lk_...) is required")
        self._t = Transport(base_url or DEFAULT_BASE_URL, api_key, timeout=timeout, max_retries=max_retries, on_response=on_response)

    def claim(self, task_id: str | None = None, idempotency_key: str | None = None) -> Claim | None:
        """Claims a task: ``task_id``, or the oldest open task this labeler may label. Returns None when
        nothing is open for this labeler (HTTP 204). The claim holds its slot until ``expires_at``.

        ``idempotency_key`` is sent as the ``Idempotency-Key`` header (generated when not given, so a
        retry after a lost answer gets the same claim back from a gateway that honours it, contract §labelers).
        Raises NotFoundError ``task not found``, ValidationError, ConflictError."""
        body: dict[str, Any] = {} if task_id is None else {"task_id": task_id}
        key = idempotency_key or new_idempotency_key()
        answer = self._t.request(*route("claimTask"), body=body, idempotency_key=key)
        if answer.status == 204 or answer.data is None:
            return None
        return Claim.from_dict(answer.data)

    def label(self, claim_id: str, label: str | Mapping[str, Any]) -> RecordedLabel:
        """Labels a claimed task. ``label``: a single-choice task's option (a str), or a reserved type's answer
        body (a dict): ``{"labels": [option, ...]}`` (``multi_label_classification``, possibly empty),
        ``{"boxes": [{"label": cls, "x", "y", "w", "h"}]}`` (``bounding_box``: pixels, ``x``/``y`` the top left,
        ``w``/``h`` > 0), ``{"spans": [{"start", "end", "label": entity_type}]}`` (``text_span``: code points of
        the claim's ``data_text``, ``end`` exclusive, not overlapping). At most 500 boxes or spans, 256 KB.
        The answer's ``answer`` is the body as recorded; ``labels_needed`` is 0 exactly when this label decided
        the task. Raises ValidationError (``details`` name the part, e.g. ``boxes.0.label``; the claim stays
        open), PayloadTooLargeError, NotFoundError ``claim not found``, ConflictError ``claim already labeled``
        / ``claim expired`` / ``task no longer accepts labels``."""
        body = {"label": label} if isinstance(label, str) else dict(label)
        return RecordedLabel.from_dict(self._t.request(*route("labelClaim", claimId=_claim_id(claim_id)), body=body).data)

    def instructions(self, label_space: str) -> Instructions:
        """The current instructions of a label space (a claim's ``label_space``): Markdown, worked examples and
        their ``version`` (a claim's ``instructions_version``). Raises NotFoundError ``instructions not found``
        when the space has none."""
        if not isinstance(label_space, str) or label_space == "":
            raise ValueError("label_space is required")
        return Instructions.from_dict(self._t.request(*route("getInstructions", id=label_space)).data)

    def release(self, claim_id: str) -> None:
        """Releases a claim without labeling it (skip): its slot returns at once. Releasing again, or an
        expired claim, succeeds too. Raises NotFoundError (not this labeler's claim), ConflictError
        ``claim already labeled``."""
        self._t.request(*route("releaseClaim", claimId=_claim_id(claim_id)))

    def close(self) -> None:
        """Closes the kept-alive connections (of every thread); a later call opens a new one."""
        self._t.close()

    def __enter__(self) -> LabelerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

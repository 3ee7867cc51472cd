"""Plug a model in as a labeler: it claims tasks like a person would, answers with its prediction, and
skips (releases) what it is unsure of. labelgate's labeler model (Dawid-Skene, refitted as labels
arrive) weighs its labels by the accuracy it measures, on gold tasks too, like any other labeler's: a
model that is often wrong gets little weight, or none at all once it falls below the customer's
``min_labeler_accuracy``.

Run:  LABELGATE_URL=http://127.0.0.1:3000 LABELGATE_LABELER_KEY=lk_... python examples/model_labeler.py
(a labeler key comes from ``POST /v1/admin/labelers``, or ``labelgate.AdminClient(...).create_labeler``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from labelgate import ConflictError, LabelerClient
from labelgate.models import Claim

#: A model: the option it picks for a claimed task, or None to skip it.
Predict = Callable[[Claim], "str | None"]


def keyword_model(claim: Claim) -> str | None:
    """A stand-in model: the option whose name appears in the item's URL, else None (skip). Replace it
    with yours, e.g. ``probs = clf.predict_proba(load(claim.view_url or claim.data_url))``, answering
    only above a confidence floor."""
    options = claim.label_spec.options or []
    hits = [o for o in options if o.lower() in claim.data_url.lower()]
    return hits[0] if len(hits) == 1 else None


def run(labeler: LabelerClient, predict: Predict, *, max_tasks: int | None = None, idle_s: float = 2.0, stop_when_idle: bool = False) -> int:
    """Claims, predicts and labels until ``max_tasks`` labels are given, or, with ``stop_when_idle``,
    until nothing is open; otherwise waits ``idle_s`` seconds when nothing is open. Returns the labels given.

    A task the model skips is held (not released) until nothing else is open: a released claim is open to
    the same labeler again, so the next claim would return that same task. Then every held claim is
    released at once, for people or other models."""
    given = 0
    held: list[str] = []
    try:
        while max_tasks is None or given < max_tasks:
            claim = labeler.claim()
            if claim is None:  # nothing open for this labeler now (other than what it holds)
                for claim_id in held:
                    labeler.release(claim_id)
                held.clear()
                if stop_when_idle:
                    break
                time.sleep(idle_s)
                continue
            answer = predict(claim)
            if answer is None:
                held.append(claim.claim_id)
                continue
            try:
                labeler.label(claim.claim_id, answer)
                given += 1
            except ConflictError:
                pass  # the claim expired or the task was decided meanwhile: go on with the next one
    finally:
        for claim_id in held:
            labeler.release(claim_id)
    return given


if __name__ == "__main__":
    with LabelerClient(os.environ["LABELGATE_LABELER_KEY"]) as lab:
        n = run(lab, keyword_model)
        print(f"{n} labels given")

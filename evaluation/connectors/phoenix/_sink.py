"""Human labels back to Phoenix as HUMAN span (and document) annotations.

A label on a span is ``POST /v1/span_annotations?sync=true`` (the SDK's
``spans.log_span_annotations``): ``annotator_kind`` ``HUMAN``, the dimension's name, ``result``
``{label: judgment, score, explanation: note}``, ``identifier`` = the label's remote id and
``metadata`` ``{reviewer, reviewer_name, gold, version, run_id, item_id}``. Phoenix upserts a span
annotation by (name, span, identifier), so a re-send or a corrected rating updates the one
annotation. ``sync=true`` makes Phoenix write before it answers (404 for a span it does not hold).

A label on a retrieved document is ``POST /v1/document_annotations?sync=true``. Phoenix refuses an
identifier there and keys a document annotation by (name, span, position), so each reviewer's
label is named ``<name> [<reviewer>]`` (``<name> [gold]`` for a gold label) unless
``shared_document_names``, when the last label sent wins. Phoenix has no REST read of document
annotations: such a label is confirmed by the row id the synchronous write answered with.

:meth:`PhoenixSink.confirm` reads the span annotations back (``GET
/v1/projects/{project}/span_annotations?span_ids=…``, the SDK's ``spans.get_span_annotations``)
and confirms a label only when Phoenix holds exactly what was sent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..base import ConnectorError, Label, Sent, settings_model
from . import _client
from ._client import Phoenix, path_part
from ._spans import as_dict

ID_CHUNK = 100
"""Span ids per read of annotations (the SDK's own chunk)."""


class PhoenixSinkSettings(BaseModel):
    """What a ``[sinks.X]`` of type ``phoenix`` takes."""

    model_config = settings_model()

    names: dict[str, str] = Field(default_factory=dict)
    """Annotation name per hilbot dimension (default: the dimension's own name); ``note`` is
    Phoenix's own."""
    score: Literal["fraction", "number"] = "fraction"
    """The annotation's score: the option's 0–1 score, or ``number``: the scale's own number (1–5)
    where it has one."""
    shared_document_names: bool = False
    """Document labels under the bare name (the last reviewer's wins) rather than ``<name>
    [<reviewer>]``."""
    project: str | None = None
    """Where a later push reads labels back (default: every project); the labels go to their items'
    project."""


@dataclass
class _Write:
    """One label as Phoenix will hold it."""

    label: Label
    kind: Literal["span", "document"]
    body: dict[str, Any]
    project: str | None
    row_id: str | None = None


class PhoenixSink:
    """Sends labels as HUMAN annotations and confirms them by reading them back."""

    def __init__(self, settings: PhoenixSinkSettings, phoenix: Phoenix):
        self.settings, self.phoenix = settings, phoenix
        self._written: dict[str, _Write] = {}

    # ------------------------------------------------------------------ sending

    def send(self, labels: list[Label]) -> list[Sent]:
        """Write ``labels``; returns those accepted (none accepted: the first failure is raised)."""
        writes, failures = [], []
        for label in labels:
            try:
                writes.append(self._write(label))
            except ConnectorError as exc:
                failures.append(exc)
        accepted: list[_Write] = []
        for kind in ("span", "document"):
            group = [w for w in writes if w.kind == kind]
            if group:
                accepted += self._post_isolating(group, failures)
        if failures and not accepted:
            raise failures[0]
        for write in accepted:
            self._written[write.label.remote_id] = write
        return [Sent(remote_id=w.label.remote_id, version=w.label.version) for w in accepted]

    def _post_isolating(self, group: list[_Write], failures: list[ConnectorError]) -> list[_Write]:
        """Post ``group``; when Phoenix refuses it as a whole, post each alone to keep the good
        ones."""
        try:
            return self._post(group)
        except ConnectorError as exc:
            if exc.transient:
                raise
            if len(group) == 1:
                failures.append(exc)
                return []
        accepted = []
        for write in group:
            try:
                accepted += self._post([write])
            except ConnectorError as exc:
                if exc.transient:
                    raise
                failures.append(exc)
        return accepted

    def _post(self, group: list[_Write]) -> list[_Write]:
        spans = self.phoenix.client.spans
        bodies: Any = [w.body for w in group]
        what = f"writing {len(group)} {group[0].kind} annotation(s)"
        missing = "a span is not in Phoenix (deleted, or never sent)"
        if group[0].kind == "span":
            answer = self.phoenix.call(
                what,
                lambda: spans.log_span_annotations(span_annotations=bodies, sync=True),
                not_found=missing,
            )
        else:
            answer = self.phoenix.call(
                what,
                lambda: spans.log_document_annotations(document_annotations=bodies, sync=True),
                not_found=missing,
            )
        ids = [row.get("id") if isinstance(row, dict) else None for row in answer or []]
        # Phoenix answers a synchronous write with its rows' ids; without them, reading confirms.
        if len(ids) == len(group):
            for write, row_id in zip(group, ids):
                write.row_id = row_id if isinstance(row_id, str) and row_id else None
        return group

    def _write(self, label: Label) -> _Write:
        """The annotation ``label`` becomes; one that cannot go to Phoenix is a permanent error."""
        origin = label.origin
        if origin.tool != "phoenix" or origin.kind not in ("span", "document"):
            raise ConnectorError(
                f"label {label.remote_id} is on a {origin.tool} {origin.kind}, not a Phoenix span",
                fix="push each run to the tool its items came from",
            )
        name = self.settings.names.get(label.dimension, label.dimension)
        if not name.strip() or name == "note":
            raise ConnectorError(
                f"cannot name an annotation {name!r} (Phoenix keeps 'note' for its notes)",
                where="[sinks] names",
                fix=f"map {label.dimension!r} to another name",
            )
        span_id = _text(origin.extra.get("span_id")) or origin.id
        project = _text(origin.extra.get("project"))
        common: dict[str, Any] = {
            "annotator_kind": "HUMAN",
            "span_id": span_id,
            "result": self._result(label),
            "metadata": _metadata(label),
        }
        if origin.kind == "span":
            body = {"name": name, **common, "identifier": label.remote_id}
            return _Write(label, "span", body, project)
        position = origin.extra.get("document_position")
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise ConnectorError(
                f"label {label.remote_id}: its document has no position", fix="pull the run again"
            )
        suffix = (
            ""
            if self.settings.shared_document_names
            else f" [{'gold' if label.gold else label.reviewer}]"
        )
        body = {"name": f"{name}{suffix}", **common, "document_position": position}
        return _Write(label, "document", body, project)

    def _result(self, label: Label) -> dict[str, Any]:
        score = (
            label.number
            if self.settings.score == "number" and label.number is not None
            else label.score
        )
        result: dict[str, Any] = {"label": label.judgment}
        if score is not None and math.isfinite(score):
            result["score"] = score
        if label.note:
            result["explanation"] = label.note
        return result

    # ------------------------------------------------------------------ confirming

    def confirm(self, sent: list[Sent]) -> list[str]:
        """The remote ids of ``sent`` that Phoenix holds with the values sent.

        A label this sink wrote is compared field by field (document labels: by the row id the write
        answered with). One written by an earlier process is looked up by its identifier (Phoenix
        15.1 or later) and confirmed when Phoenix holds a HUMAN annotation of that version.
        """
        confirmed: list[str] = []
        spans: dict[str, list[_Write]] = {}
        earlier: list[Sent] = []
        for item in sent:
            write = self._written.get(item.remote_id)
            if write is None:
                earlier.append(item)
            elif write.label.version != item.version:
                continue
            elif write.kind == "document":
                confirmed += [item.remote_id] if write.row_id else []
            elif write.project:
                spans.setdefault(write.project, []).append(write)
        for project, writes in spans.items():
            held = self._read(project, writes)
            confirmed += [w.label.remote_id for w in writes if _holds(held, w)]
        return confirmed + (self._confirm_earlier(earlier) if earlier else [])

    @property
    def where(self) -> str:
        """Where labels go, for the calls log."""
        return f"phoenix at {self.phoenix.host}"

    def _read(
        self, project: str, writes: list[_Write]
    ) -> dict[tuple[str, str, str], dict[str, Any]]:
        """The annotations Phoenix holds on the spans of ``writes``, by (span, name, identifier)."""
        ids = sorted({w.body["span_id"] for w in writes})
        names = sorted({w.body["name"] for w in writes})
        held: dict[tuple[str, str, str], dict[str, Any]] = {}
        for start in range(0, len(ids), ID_CHUNK):
            chunk = ids[start : start + ID_CHUNK]
            rows = self.phoenix.call(
                f"reading annotations of project {project!r}",
                partial(self._annotations, project, chunk, names),
            )
            for row in rows:
                if isinstance(row, dict):
                    key = (
                        str(row.get("span_id")),
                        str(row.get("name")),
                        str(row.get("identifier") or ""),
                    )
                    held.setdefault(key, row)
        return held

    def _annotations(self, project: str, span_ids: list[str], names: list[str]) -> list[Any]:
        """Annotations on ``span_ids`` named one of ``names``; none when Phoenix no longer holds the
        spans (404)."""
        import httpx

        try:
            return list(
                self.phoenix.client.spans.get_span_annotations(
                    span_ids=span_ids,
                    project_identifier=path_part(project),
                    include_annotation_names=names,
                    limit=1000,
                    timeout=_client.read_timeout(),
                )
            )
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code == 404:
                return []
            raise

    def _confirm_earlier(self, sent: list[Sent]) -> list[str]:
        """Labels written by an earlier process, found by identifier in the project(s) (no span ids
        known)."""
        wanted = {s.remote_id: s.version for s in sent}
        found: set[str] = set()
        for project in self._projects():
            for start in range(0, len(sent), ID_CHUNK):
                chunk = [
                    s.remote_id for s in sent[start : start + ID_CHUNK] if s.remote_id not in found
                ]
                rows = (
                    self.phoenix.call(
                        f"reading annotations of project {project!r}",
                        partial(self._by_identifier, project, chunk),
                    )
                    if chunk
                    else []
                )
                found |= {
                    str(r.get("identifier"))
                    for r in rows
                    if isinstance(r, dict) and _current(r, wanted)
                }
            if len(found) == len(wanted):
                break
        return [s.remote_id for s in sent if s.remote_id in found]

    def _projects(self) -> list[str]:
        if self.settings.project:
            return [self.settings.project]
        rows = self.phoenix.call("listing projects", self.phoenix.client.projects.list)
        return [
            str(r["name"])
            for r in rows
            if isinstance(r, dict)
            and isinstance(r.get("name"), str)
            and not any(c in r["name"] for c in "/?#")
        ]

    def _by_identifier(self, project: str, identifiers: list[str]) -> list[Any]:
        """``GET /v1/projects/{project}/span_annotations?identifier=…``, every cursor page.

        None on a 404, or a 422: a server older than Phoenix 15.1 does not filter by identifier
        (it refuses a read without span ids).
        """
        rows: list[Any] = []
        cursor = None
        while True:
            params: dict[str, Any] = {
                "identifier": identifiers,
                "limit": 1000,
                **({"cursor": cursor} if cursor else {}),
            }
            response = self.phoenix.http.get(
                f"v1/projects/{path_part(project)}/span_annotations",
                params=params,
                headers={"accept": "application/json"},
            )
            if response.status_code in (404, 422):
                return rows
            response.raise_for_status()
            body = response.json()
            body = body if isinstance(body, dict) else {}
            rows += body["data"] if isinstance(body.get("data"), list) else []
            cursor = body.get("next_cursor")
            if not cursor:
                return rows


def _current(row: dict[str, Any], wanted: dict[str, str]) -> bool:
    """Whether ``row`` is a HUMAN annotation with a label, at the version ``wanted`` names for its
    identifier."""
    metadata, result = as_dict(row.get("metadata")), as_dict(row.get("result"))
    identifier = row.get("identifier")
    return (
        isinstance(identifier, str)
        and identifier in wanted
        and row.get("annotator_kind") == "HUMAN"
        and metadata.get("version") == wanted[identifier]
        and bool(result.get("label"))
    )


def _holds(held: dict[tuple[str, str, str], dict[str, Any]], write: _Write) -> bool:
    """Whether Phoenix holds ``write`` as sent: kind, label, score, explanation and version."""
    body = write.body
    row = held.get((body["span_id"], body["name"], body["identifier"]))
    if row is None or row.get("annotator_kind") != "HUMAN":
        return False
    result, metadata = as_dict(row.get("result")), as_dict(row.get("metadata"))
    sent = body["result"]
    return (
        result.get("label") == sent["label"]
        and _same_score(result.get("score"), sent.get("score"))
        and (result.get("explanation") or None) == sent.get("explanation")
        and metadata.get("version") == write.label.version
    )


def _same_score(held: Any, sent: float | None) -> bool:
    if sent is None:
        return held is None
    return (
        isinstance(held, (int, float))
        and not isinstance(held, bool)
        and math.isclose(held, sent, abs_tol=1e-9)
    )


def _metadata(label: Label) -> dict[str, Any]:
    """Who rated, whether it is gold, which hilbot rating it is (the version confirm compares)."""
    metadata: dict[str, Any] = {
        "reviewer": label.reviewer,
        "gold": label.gold,
        "version": label.version,
        "run_id": label.run_id,
        "item_id": label.item_id,
        "source": "hilbot",
    }
    if label.reviewer_name:
        metadata["reviewer_name"] = label.reviewer_name
    if label.correction:
        metadata["correction"] = label.correction
    if label.number is not None and math.isfinite(label.number):
        metadata["number"] = label.number
    return metadata


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


__all__ = ["PhoenixSink", "PhoenixSinkSettings"]

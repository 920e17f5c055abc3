"""hilbot's domain core: records, the event log, the store, runs and the ratings fold.

Public names are loaded on first use, so importing ``evaluation.errors`` (the CLI's start-up
path) does not pay for pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_getattr

_EXPORTS = {
    "ConcernSet": "config",
    "ConfigError": "errors",
    "Delivery": "records",
    "Dimension": "config",
    "Evaluation": "records",
    "EventLog": "log",
    "HilbotConfig": "config",
    "HilbotError": "errors",
    "ImportFailed": "errors",
    "ItemData": "records",
    "JudgeInfo": "records",
    "Labels": "records",
    "Ledger": "reviews",
    "LogError": "errors",
    "LogIssue": "log",
    "Note": "records",
    "Query": "records",
    "QueryItem": "queries",
    "QuerySet": "queries",
    "QuerySetError": "queries",
    "QuerySets": "queries",
    "QueryEvaluation": "records",
    "Rating": "records",
    "RatingMetadata": "records",
    "ReviewSettings": "config",
    "ReviewSummary": "records",
    "Reviewer": "records",
    "Run": "runs",
    "RunHeader": "records",
    "RunNotFound": "errors",
    "RunSummary": "records",
    "Scale": "config",
    "ScaleOption": "config",
    "SearchResult": "records",
    "Skip": "records",
    "Store": "store",
    "ai_confidence": "runs",
    "ai_score": "runs",
    "average_scores": "runs",
    "hil_view": "reviews",
    "json_schemas": "records",
    "load_config": "config",
    "parse_record": "records",
    "read_log": "log",
    "summarize": "reviews",
    "utcnow": "records",
    "validate_run_id": "store",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .config import ConcernSet, Dimension, HilbotConfig, ReviewSettings, Scale, ScaleOption, load_config
    from .errors import ConfigError, HilbotError, ImportFailed, LogError, RunNotFound
    from .log import EventLog, LogIssue, read_log
    from .queries import QueryItem, QuerySet, QuerySetError, QuerySets
    from .records import Delivery, Evaluation, ItemData, JudgeInfo, Labels, Note, Query, QueryEvaluation, Rating, RatingMetadata, ReviewSummary, Reviewer, RunHeader, RunSummary, SearchResult, Skip, json_schemas, parse_record, utcnow
    from .reviews import Ledger, hil_view, summarize
    from .runs import Run, ai_confidence, ai_score, average_scores
    from .store import Store, validate_run_id

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())

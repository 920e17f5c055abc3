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
    "DigestPosted": "records",
    "Dimension": "config",
    "Evaluation": "records",
    "EventLog": "log",
    "Adjudication": "records",
    "AdjudicationSettings": "config",
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
    from .config import AdjudicationSettings as AdjudicationSettings
    from .config import ConcernSet as ConcernSet
    from .config import Dimension as Dimension
    from .config import HilbotConfig as HilbotConfig
    from .config import ReviewSettings as ReviewSettings
    from .config import Scale as Scale
    from .config import ScaleOption as ScaleOption
    from .config import load_config as load_config
    from .errors import ConfigError as ConfigError
    from .errors import HilbotError as HilbotError
    from .errors import ImportFailed as ImportFailed
    from .errors import LogError as LogError
    from .errors import RunNotFound as RunNotFound
    from .log import EventLog as EventLog
    from .log import LogIssue as LogIssue
    from .log import read_log as read_log
    from .queries import QueryItem as QueryItem
    from .queries import QuerySet as QuerySet
    from .queries import QuerySetError as QuerySetError
    from .queries import QuerySets as QuerySets
    from .records import Adjudication as Adjudication
    from .records import Delivery as Delivery
    from .records import DigestPosted as DigestPosted
    from .records import Evaluation as Evaluation
    from .records import ItemData as ItemData
    from .records import JudgeInfo as JudgeInfo
    from .records import Labels as Labels
    from .records import Note as Note
    from .records import Query as Query
    from .records import QueryEvaluation as QueryEvaluation
    from .records import Rating as Rating
    from .records import RatingMetadata as RatingMetadata
    from .records import Reviewer as Reviewer
    from .records import ReviewSummary as ReviewSummary
    from .records import RunHeader as RunHeader
    from .records import RunSummary as RunSummary
    from .records import SearchResult as SearchResult
    from .records import Skip as Skip
    from .records import json_schemas as json_schemas
    from .records import parse_record as parse_record
    from .records import utcnow as utcnow
    from .reviews import Ledger as Ledger
    from .reviews import hil_view as hil_view
    from .reviews import summarize as summarize
    from .runs import Run as Run
    from .runs import ai_confidence as ai_confidence
    from .runs import ai_score as ai_score
    from .runs import average_scores as average_scores
    from .store import Store as Store
    from .store import validate_run_id as validate_run_id

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())

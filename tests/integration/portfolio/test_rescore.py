"""PORTFOLIO_RESCORE's core on SQLite and PostgreSQL, with the offline providers: names are
appraised as `dominus score` appraises them, scores and list prices are written on both paths, a
provider that fails for one name keeps that name's previous score and lists the error."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any

import pytest
from sqlalchemy import Engine

from dominus.config import Settings
from dominus.domain_names import normalise_domain
from dominus.errors import JobAbortedError
from dominus.pipeline.appraisal import Appraiser, ValidName, active_weights
from dominus.pipeline.settings import pipeline_options
from dominus.pipeline.store import PipelineStore
from dominus.portfolio.model import EntryFields, EntryNotFoundError
from dominus.portfolio.rescore import Rescorer, appraiser_scorer, score_update
from dominus.portfolio.service import PortfolioService
from dominus.providers.models import KeywordStats
from dominus.providers.offline import offline_providers

pytestmark = pytest.mark.backends("sqlite", "postgresql")


NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
TODAY = NOW.date()


class KeywordOutage(dict[str, KeywordStats]):
    """Keyword figures whose service fails for the labels in `failing` (and their phrases)."""

    def __init__(self, data: dict[str, KeywordStats], failing: frozenset[str]) -> None:
        super().__init__(data)
        self.failing = failing

    def get(self, key: str, default: Any = None) -> Any:
        if "".join(key.split()) in self.failing:
            raise OSError(f"keyword service unreachable for {key}")
        return super().get(key, default)


def make_appraiser(
    engine: Engine, settings: Settings, failing: frozenset[str] = frozenset()
) -> Appraiser:
    providers = offline_providers()
    providers = replace(providers, keyword_data=KeywordOutage(providers.keyword_data, failing))
    weights = active_weights(PipelineStore(engine))
    return Appraiser(providers, pipeline_options(settings), weights, TODAY)


def add(service: PortfolioService, *domains: str) -> None:
    for domain in domains:
        service.add(domain, EntryFields(renewal_date=date(2030, 1, 20)), NOW)


def rescorer(
    service: PortfolioService, appraiser: Appraiser, stop: threading.Event | None = None
) -> tuple[Rescorer, list[tuple[str, int, int]]]:
    progress: list[tuple[str, int, int]] = []
    return (
        Rescorer(
            service,
            appraiser_scorer(appraiser),
            lambda: NOW,
            concurrency=2,
            stop=stop or threading.Event(),
            on_progress=lambda *step: progress.append(step),
        ),
        progress,
    )


def test_every_entry_is_scored_as_dominus_score_scores_it(
    engine: Engine, settings: Settings, service: PortfolioService, backend: str
) -> None:
    add(service, "zentrova.com", "homegym.com", "cloudnest.io")
    appraiser = make_appraiser(engine, settings)
    job, progress = rescorer(service, appraiser)
    result = job.run().to_dict()
    assert (result["rescored"], result["unchanged"], result["errors"]) == (3, 0, [])
    assert sorted(step[0] for step in progress) == ["cloudnest.io", "homegym.com", "zentrova.com"]
    assert sorted(step[1] for step in progress) == [1, 2, 3]
    # every entry was "not scored → reprice"; the fresh verdicts are the changes
    assert {change["domain"] for change in result["verdict_changes"]} <= {
        "zentrova.com",
        "homegym.com",
        "cloudnest.io",
    }
    assert result["total_duration_ms"] >= 0
    for entry in service.entries():
        expected = score_update(appraiser.appraise(ValidName(normalise_domain(entry.domain), None)))
        assert entry.current_score == expected.current_score
        assert entry.suggested_list_price == expected.suggested_list_price
        assert entry.expected_value == expected.expected_value
        assert entry.score_details is not None and "trademark" in entry.score_details
        assert entry.scored_at == NOW
    # the same names again: nothing moved
    again = job.run().to_dict()
    assert (again["rescored"], again["unchanged"], again["verdict_changes"]) == (0, 3, [])


def test_a_name_listed_at_its_suggested_price_is_not_called_overpriced(
    engine: Engine, settings: Settings, service: PortfolioService, backend: str
) -> None:
    """The suggestion and the verdict agree: list a name at the price the rescore suggests, and
    the expected verdict (renewal beyond the horizon) keeps it; list it above 2.5 × EV and the
    verdict says reprice, down to that suggestion."""
    far = EntryFields(renewal_date=date(2030, 12, 1))
    service.add("homegym.com", far, NOW)
    rescorer(service, make_appraiser(engine, settings))[0].run()
    scored = service.get("homegym.com")
    assert scored.expected_value is not None and scored.suggested_list_price is not None
    assert scored.suggested_list_price >= scored.expected_value

    at_suggested = service.update(
        "homegym.com", EntryFields(list_price=scored.suggested_list_price), NOW
    )
    assert at_suggested.verdict == "keep", at_suggested.verdict_reason

    above = service.update("homegym.com", EntryFields(list_price=3 * scored.expected_value), NOW)
    assert above.verdict == "reprice"
    assert above.verdict_reason is not None
    suggested = f"${scored.suggested_list_price:,.2f}".removesuffix(".00")
    assert above.verdict_reason.endswith(f"reprice to the suggested {suggested}")


def test_a_failing_provider_keeps_the_previous_score(
    engine: Engine, settings: Settings, service: PortfolioService, backend: str
) -> None:
    add(service, "zentrova.com", "homegym.com")
    rescorer(service, make_appraiser(engine, settings))[0].run()
    before = service.get("homegym.com")
    assert before.current_score is not None and before.current_score > 0

    outage = make_appraiser(engine, settings, failing=frozenset({"homegym"}))
    result = rescorer(service, outage)[0].run().to_dict()
    assert result["errors"] == [
        {"domain": "homegym.com", "error": "OSError: keyword service unreachable for home gym"}
    ]
    assert result["unchanged"] == 1 and result["rescored"] == 0
    after = service.get("homegym.com")
    assert after.current_score == before.current_score  # not 0, not cleared
    assert after.scored_at == before.scored_at


def test_one_domain_is_rescored_and_persisted(
    engine: Engine, settings: Settings, service: PortfolioService, backend: str
) -> None:
    add(service, "zentrova.com", "homegym.com")
    job, progress = rescorer(service, make_appraiser(engine, settings))
    result = job.run("HomeGym.com").to_dict()
    assert result["rescored"] == 1 and progress == [("homegym.com", 1, 1)]
    assert service.get("homegym.com").current_score is not None
    assert service.get("zentrova.com").current_score is None
    with pytest.raises(EntryNotFoundError):
        job.run("missing.com")


def test_a_stop_ends_the_rescore(
    engine: Engine, settings: Settings, service: PortfolioService, backend: str
) -> None:
    add(service, "zentrova.com", "homegym.com")
    stop = threading.Event()
    stop.set()
    job, _ = rescorer(service, make_appraiser(engine, settings), stop)
    with pytest.raises(JobAbortedError, match="rescore stopped after 0 of 2"):
        job.run()

"""An appraisal in a terminal: one panel per name (tier and reason, signals and the evidence
behind each, thresholds, the comparable sales used, every figure of the money gate, trademark,
availability, weights), each amount with its currency."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from dominus.cli.output import console
from dominus.pipeline.appraisal_result import Appraisal
from dominus.scoring import Score, Tier
from dominus.scoring.decision import amount
from dominus.valuation import Range

SAMPLE_DATA_NOTICE = "SAMPLE DATA: offline providers and bundled sample figures, not market data"
TIER_STYLES = {Tier.RECOMMENDED: "bold green", Tier.SPECULATIVE: "bold yellow"}


def print_appraisal(appraisal: Appraisal) -> None:
    tier, reason = appraisal.decision
    parts: list[RenderableType] = []
    if appraisal.sample_data:
        parts.append(Text(SAMPLE_DATA_NOTICE, style="bold yellow"))
    parts.append(Text.assemble((f"{tier.value}: ", TIER_STYLES.get(tier, "bold red")), reason))
    parts.append(Text(_acquisition(appraisal)))
    parts.append(_signals(appraisal.score))
    parts.append(Text(_thresholds(appraisal.score)))
    if appraisal.score.market_detail.used:
        parts.append(_sales(appraisal.score))
    parts.append(_money(appraisal.score))
    parts.append(Text(_checks(appraisal)))
    title = f"{appraisal.candidate.unicode} · {tier.value.upper()}"
    # The shared console does not wrap (soft_wrap, for tables of ids); a panel's sentences must.
    panel = Panel(Group(*parts), title=title, title_align="left", expand=False)
    console.print(panel, soft_wrap=False)


def _acquisition(appraisal: Appraisal) -> str:
    candidate = appraisal.candidate
    if not candidate.purchase:
        return "acquisition: hand-registration at the TLD's registration price"
    if candidate.price is None:
        return "acquisition: purchase from a listing, no listed price (buy max only)"
    return f"acquisition: purchase from a listing at {amount(candidate.price, _cur(appraisal))}"


def _cur(appraisal: Appraisal) -> str:
    return appraisal.score.currency


def _signals(score: Score) -> Table:
    table = Table("signal", "value", "weight", "evidence", title="signals", title_justify="left")
    weights = score.effective_weights
    evidence = score.evidence
    rows = [
        (
            "intrinsic",
            score.intrinsic,
            weights.intrinsic,
            "the name itself (length, characters, sound, TLD)",
        ),
        ("commercial", score.commercial, weights.commercial, _keyword(score)),
        ("market", score.market, weights.market, _market(score)),
        ("expiry", score.expiry, weights.expiry, _expiry(score)),
    ]
    for name, value, weight, text in rows:
        shown = "-" if value is None else f"{value:.3f}"
        table.add_row(name, shown, f"{weight:.3f}", text)
    if not evidence.any:
        table.caption = "no evidence beyond the name itself"
    return table


def _keyword(score: Score) -> str:
    keyword = score.evidence.keyword
    if keyword is None:
        return "no keyword data"
    text = (
        f"{keyword.keyword!r}: {keyword.monthly_volume:,} searches/month, "
        f"CPC {amount(keyword.cpc, score.currency)}"
    )
    if not score.evidence.keyword_counts:
        text += f" (under {score.evidence.min_search_volume:,} and no CPC: not evidence)"
    return text


def _market(score: Score) -> str:
    market = score.market_detail
    sales = "sale" if market.relevant == 1 else "sales"
    text = f"{market.relevant} relevant {sales}, {market.required} needed"
    if market.statistic is not None:
        text += f"; lower quartile {amount(market.statistic, score.currency)}"
    return text


def _expiry(score: Score) -> str:
    facts = score.evidence.expiry
    if facts is None:
        return "no expiry facts (not from a listing)"
    parts = [
        f"age {facts.age_years:g} years" if facts.age_years is not None else "age unknown",
        f"{facts.backlinks:,} backlinks" if facts.backlinks is not None else "backlinks unknown",
        f"{facts.wayback_snapshots:,} archive snapshots"
        if facts.wayback_snapshots is not None
        else "snapshots unknown",
    ]
    return ", ".join(parts) + ("" if score.evidence.expiry_counts else " (not evidence)")


def _thresholds(score: Score) -> str:
    def mark(passed: bool) -> str:
        return "passes" if passed else "FAILS"

    return (
        f"weighted score {score.weighted_score:.3f} vs threshold {score.score_threshold:.3f} "
        f"({mark(score.gates['score'])}); confidence {score.confidence:.3f} vs threshold "
        f"{score.confidence_threshold:.3f} ({mark(score.gates['confidence'])})"
    )


def _sales(score: Score) -> Table:
    market = score.market_detail
    table = Table(
        "sale",
        "price",
        "counted at",
        "date",
        "recency",
        "overlap",
        "weight",
        "shared words",
        title=f"comparable sales used ({'market evidence' if market.evidence else 'not evidence'})",
        title_justify="left",
    )
    for sale in market.used:
        table.add_row(
            sale.domain,
            amount(sale.price, sale.currency.upper()),
            amount(sale.adjusted_price, sale.currency.upper()),
            sale.sale_date.isoformat(),
            f"{sale.recency:g}",
            f"{sale.overlap:.2f}",
            f"{sale.weight:.2f}",
            ", ".join(sale.shared_words) or "(same name)",
        )
    return table


def _values(score: Score, cash: Callable[[float | None], str]) -> list[tuple[str, str]]:
    """The value model's ranges and the few largest reasons, in rows of the money table."""
    value = score.value
    assert value is not None
    rows = [
        ("retail value (P10–P50–P90)", _range(value.retail, cash)),
        ("wholesale value (P10–P50–P90)", _range(value.wholesale, cash)),
        ("expected value (EV)", f"{cash(score.expected_value)} = retail P50"),
        ("suggested list price", f"{cash(score.suggested_list_price)} = EV × list multiplier"),
    ]
    for part in value.contributions[:3]:
        sign = "+" if part.dollars >= 0 else "−"
        rows.append((f"  {part.label}", f"{sign}{cash(abs(part.dollars))}"))
    for sale in value.comparables[:3]:
        rows.append(
            (
                f"  comparable {sale.domain}",
                f"{cash(sale.price)} on {sale.date.isoformat()} at {sale.venue}",
            )
        )
    rows.append(("value model", f"{value.model.name} {value.model.version}"))
    return rows


def _range(values: Range, cash: Callable[[float | None], str]) -> str:
    return f"{cash(values.p10)} – {cash(values.p50)} – {cash(values.p90)}"


def _money(score: Score) -> Table:
    money = score.money
    cur = score.currency

    def cash(value: float | None) -> str:
        return "unknown" if value is None else amount(value, cur)

    table = Table("money gate", "value", title="value and money", title_justify="left")
    rows = (
        [*_values(score, cash)]
        if score.value is not None
        else [
            (
                "expected value (EV)",
                f"{cash(score.expected_value)} = score × anchor {cash(score.anchor)}",
            ),
            ("suggested list price", cash(score.suggested_list_price)),
        ]
    )
    rows += [
        ("acquisition cost", cash(money.acquisition_cost)),
        ("renewal a year", cash(money.renewal_per_year)),
        (f"holding cost ({money.holding_years} years)", cash(money.holding_cost)),
        ("sale commission", f"{money.sale_commission:.0%}"),
        (
            "sell-through a year",
            f"{money.sell_through_rate:.2%} = {money.annual_sell_through:.2%} × confidence "
            f"{score.confidence:.3f} / the confidence cap",
        ),
        (f"P(sale within {money.holding_years} years)", f"{money.p_sale:.2%}"),
        ("expected revenue", cash(money.expected_revenue)),
        ("expected profit", cash(money.expected_profit)),
        ("buy max", cash(money.buy_max)),
        ("prices from", money.price_source),
    ]
    if money.problem:
        rows.append(("cannot pass", money.problem))
    for name, value in rows:
        table.add_row(name, value)
    return table


def _checks(appraisal: Appraisal) -> str:
    trademark = appraisal.trademark
    result = trademark.result
    verdict = result.verdict.value
    if result.matched_mark:
        verdict += f" (mark {result.matched_mark!r}, {(result.rule or '').replace('_', ' ')})"
    weights = appraisal.weights
    which = (
        "the defaults"
        if weights.weight_set_id is None
        else f"weight set {weights.weight_set_id} ({weights.name})"
    )
    shares = ", ".join(f"{name} {value:g}" for name, value in weights.weights.to_dict().items())
    return (
        f"trademark: {verdict}; marks: {trademark.source}\n"
        f"availability: {appraisal.availability.note}\n"
        f"weights: {which}: {shares}; providers: {appraisal.providers}; "
        f"appraised on {appraisal.appraised_on.isoformat()}\n"
        f"data: {appraisal.data_sources.summary()}"
    )

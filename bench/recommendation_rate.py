"""How many names the pipeline recommends: a regression benchmark for the decision.

    .venv/bin/python bench/recommendation_rate.py [--names N] [--sales N] [--output FILE]

Not a timed test: it counts. Three in-process pipeline runs with the offline providers (the
bundled SAMPLE keyword, sales, trademark and registration files), each scoring exactly what the
score stage scores:
  1. N random letter strings (5–14 letters), spread over .com/.io/.net/.org/.xyz;
  2. N invented pronounceable names (2–4 consonant-vowel syllables, sometimes a closing
     consonant), over the same TLDs;
  3. the bundled sample input (`dominus run --sample`).
For each: the share recommended (target for 1 and 2: at most 1 %), per TLD, and the tiers
(recommended / speculative / rejected). Then the score stage's speed with a large comparables
list: N candidates against `--sales` invented sales, through ComparablesIndex and the engine as
the stage calls them (the word segmenter cold, then warm): half the candidates and every sale
are compounds of 1–3 frequent English words, half the candidates invented names.
"""

from __future__ import annotations

import argparse
import gzip
import random
import string
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import envinfo
from dominus.db.engine import create_database_engine
from dominus.jobs.clock import utc_now
from dominus.pipeline.model import RunInput
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.store import PipelineStore
from dominus.providers.models import ComparableSale
from dominus.providers.offline import SAMPLE_INPUT_PATH, offline_providers
from dominus.schema.migrate import upgrade
from dominus.scoring import ComparablesIndex, ScoringConfig, ScoringInput, Weights, score_domain
from dominus.scoring.words import clear_word_cache

TLDS = ("com", "io", "net", "org", "xyz")
CONSONANTS = "bcdfghjklmnprstvz"
VOWELS = "aeiou"
TARGET = 0.01
TIERS = ("recommended", "speculative", "rejected")


def random_strings(count: int, seed: int = 101) -> list[str]:
    rng = random.Random(seed)
    names: set[str] = set()
    while len(names) < count:
        label = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(5, 14)))
        names.add(f"{label}.{rng.choice(TLDS)}")
    return sorted(names)


def pronounceable_names(count: int, seed: int = 202) -> list[str]:
    rng = random.Random(seed)
    names: set[str] = set()
    while len(names) < count:
        label = "".join(
            rng.choice(CONSONANTS) + rng.choice(VOWELS) for _ in range(rng.randint(2, 4))
        )
        if rng.random() < 0.3:
            label += rng.choice("lmnrst")
        names.add(f"{label}.{rng.choice(TLDS)}")
    return sorted(names)


def run_pipeline(run_input: RunInput) -> list[dict[str, Any]]:
    """One in-process pipeline run on a fresh SQLite file; the scored candidates' rows."""
    with tempfile.TemporaryDirectory() as directory:
        engine = create_database_engine(f"sqlite:///{directory}/bench.db")
        upgrade(engine)
        store = PipelineStore(engine)
        run = store.create_run(run_input, "offline", utc_now())
        options = PipelineOptions(budget_max_seconds=3600)
        runner = PipelineRunner(
            store, offline_providers(), options, clock=utc_now, stop=threading.Event()
        )
        done = runner.run(run.id)
        if done.degraded:
            raise SystemExit(f"the run was degraded: {done.degraded_reasons}")
        rows = store.run_scores(run.id, limit=10 * run_input.size() + 100)
        engine.dispose()
    return rows


def tally(rows: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """tier counts, overall ("all") and per TLD; "recommended" is the final verdict (the tier
    and the trademark gate), "tier:recommended" the scoring engine's tier alone."""
    counts: dict[str, Counter[str]] = {}
    for row in rows:
        tld = row["domain"].split(".", 1)[1]
        for key in ("all", tld):
            bucket = counts.setdefault(key, Counter())
            bucket["scored"] += 1
            # The engine's tier (ADR 0017 keeps it as `scoring_tier`; `tier` is the final one).
            details = row["details"]
            bucket[f"tier:{details.get('scoring_tier', details['tier'])}"] += 1
            bucket["recommended"] += bool(row["recommended"])
    return counts


def render_counts(title: str, counts: dict[str, Counter[str]], target: bool) -> list[str]:
    lines = [
        f"### {title}",
        "",
        "| TLD | scored | recommended | share | speculative | rejected |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key in ["all", *sorted(k for k in counts if k != "all")]:
        bucket = counts[key]
        share = bucket["recommended"] / bucket["scored"] if bucket["scored"] else 0.0
        lines.append(
            f"| {key} | {bucket['scored']:,} | {bucket['recommended']:,} | {share:.2%} | "
            f"{bucket['tier:speculative']:,} | {bucket['tier:rejected']:,} |"
        )
    if target:
        overall = counts["all"]
        share = overall["recommended"] / overall["scored"] if overall["scored"] else 0.0
        verdict = "met" if share <= TARGET else "NOT met"
        lines += ["", f"Target ≤ {TARGET:.0%} recommended: {verdict} ({share:.2%})."]
    return [*lines, ""]


def english_words(count: int) -> list[str]:
    """The `count` most frequent words of 3+ letters in the segmenter's own word list (English
    Wikipedia frequencies), most frequent first."""
    import wordninja  # noqa: PLC0415 - only the speed part needs its word list

    path = Path(wordninja.__file__).resolve().parent / "wordninja" / "wordninja_words.txt.gz"
    words = gzip.decompress(path.read_bytes()).decode().split()
    return [word for word in words if len(word) >= 3 and word.isalpha()][:count]


def compound_names(count: int, vocabulary: list[str], seed: int) -> list[str]:
    """Names of 1–3 words drawn with a Zipf-like skew (a few words in many names, as in real
    sales lists and keyword lists)."""
    rng = random.Random(seed)
    skew = [1 / (rank + 1) for rank in range(len(vocabulary))]
    return [
        "".join(rng.choices(vocabulary, skew, k=rng.randint(1, 3))) + "." + rng.choice(TLDS)
        for _ in range(count)
    ]


def invented_sales(count: int, vocabulary: list[str], seed: int = 303) -> list[ComparableSale]:
    rng = random.Random(seed)
    return [
        ComparableSale(
            domain,
            float(rng.randint(100, 50_000)),
            "USD",
            date(rng.randint(2018, 2026), rng.randint(1, 12), 1),
        )
        for domain in compound_names(count, vocabulary, seed)
    ]


def scoring_speed(names: list[str], sales: list[ComparableSale]) -> list[str]:
    """The score stage's work with a large sales list: index, then every candidate's market
    result and score, as stages.score_candidates does (keywords aside)."""
    config = ScoringConfig()
    today = date(2026, 11, 30)
    figures = []
    for attempt in ("cold", "warm"):
        if attempt == "cold":
            clear_word_cache()  # as in a fresh worker process
        started = time.perf_counter()
        index = ComparablesIndex(sales, config)
        indexed = time.perf_counter()
        relevant = 0
        for domain in names:
            market = index.market(domain, today)
            relevant += market.relevant
            score_domain(ScoringInput(domain, market=market), Weights(), config, today)
        scored = time.perf_counter()
        figures.append(
            f"| {attempt} | {indexed - started:.2f} | {scored - indexed:.2f} | "
            f"{scored - started:.2f} | {relevant / len(names):.1f} |"
        )
    return [
        f"### Score stage speed: {len(names):,} candidates, {len(sales):,} comparable sales",
        "",
        "Cold: the word segmenter loads and splits every label for the first time; warm: a",
        "second scoring stage in the same process (labels cached, as in a long-lived worker).",
        "",
        "| segmenter | index (s) | score all (s) | total (s) | relevant sales per candidate |",
        "|---|---:|---:|---:|---:|",
        *figures,
        "",
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=10_000, help="names per generated set")
    parser.add_argument("--sales", type=int, default=50_000, help="sales for the speed part")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    machine = envinfo.describe()
    sets = {
        f"{args.names:,} random letter strings": random_strings(args.names),
        f"{args.names:,} invented pronounceable names": pronounceable_names(args.names),
    }
    lines = [
        f"## {utc_now().isoformat(timespec='seconds')} — recommendation rate",
        "",
        *(f"- {key}: {value}" for key, value in machine if key not in {"huey"}),
        "",
    ]
    met = True
    for title, names in sets.items():
        started = time.perf_counter()
        counts = tally(run_pipeline(RunInput(brandable=names)))
        print(f"{title}: {time.perf_counter() - started:.1f} s", flush=True)
        lines += render_counts(title, counts, target=True)
        met &= counts["all"]["recommended"] <= TARGET * counts["all"]["scored"]
    sample = RunInput.model_validate_json(SAMPLE_INPUT_PATH.read_text(encoding="utf-8"))
    sample_counts = tally(run_pipeline(sample))
    lines += render_counts(
        "The bundled sample input (`dominus run --sample`)", sample_counts, False
    )
    overall = sample_counts["all"]
    lines += [
        f"Sample run: {overall['recommended']} of {overall['scored']} scored names recommended, "
        f"{overall['tier:speculative']} speculative, {overall['tier:rejected']} rejected "
        f"({overall['tier:recommended'] - overall['recommended']} more pass every scoring gate "
        "but are blocked by the trademark gate).",
        "",
    ]
    vocabulary = english_words(3000)
    candidates = compound_names(args.names // 2, vocabulary, seed=404)
    candidates += pronounceable_names(args.names - len(candidates), seed=505)
    lines += scoring_speed(candidates, invented_sales(args.sales, vocabulary))
    report = "\n".join(lines)
    print(report)
    if args.output:
        with args.output.open("a", encoding="utf-8") as output:
            output.write("\n" + report)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

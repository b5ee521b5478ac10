"""Starting runs: as a PIPELINE_RUN job (the run row and its job in one transaction), or
in-process without a worker (`dominus run --sync`)."""

from __future__ import annotations

from sqlalchemy import Connection

from dominus.jobs.client import JobQueue
from dominus.jobs.clock import Clock
from dominus.pipeline.model import PIPELINE_RUN, PipelineRunPayload, RunInput
from dominus.pipeline.runner import PipelineRunner, ProgressCallback
from dominus.pipeline.settings import PipelineSettings, pipeline_options
from dominus.pipeline.store import PipelineStore, RunRecord
from dominus.providers.models import StopSignal
from dominus.providers.rate_gate import RateGate
from dominus.providers.setup import (
    OFFLINE,
    ProviderChoiceError,
    check_provider_choice,
    open_providers,
)


class PipelineService:
    def __init__(
        self, settings: PipelineSettings, store: PipelineStore, queue: JobQueue, clock: Clock
    ):
        self.settings = settings
        self.store = store
        self.queue = queue
        self.clock = clock

    def submit(self, run_input: RunInput, *, providers: str | None = None) -> RunRecord:
        """A pending run and its PIPELINE_RUN job, created together (or neither)."""

        def enqueue(connection: Connection, run_id: int) -> int:
            payload = PipelineRunPayload(run_id=run_id)
            # internal: PIPELINE_RUN is enqueued only here, with its run (see the handler).
            result = self.queue.enqueue_job(
                PIPELINE_RUN, payload, connection=connection, internal=True
            )
            return result.job_id

        kind = self.providers_for(run_input, providers)
        return self.store.create_run(run_input, kind, self.clock(), enqueue)

    def run_now(
        self,
        run_input: RunInput,
        stop: StopSignal,
        on_progress: ProgressCallback | None = None,
        *,
        providers: str | None = None,
        gate: RateGate | None = None,
    ) -> RunRecord:
        """Run in this process, without a job (the run has no job id); RDAP and WHOIS requests
        wait at `gate` (default: one of the run's own)."""
        kind = self.providers_for(run_input, providers)
        run = self.store.create_run(run_input, kind, self.clock())
        with open_providers(self.settings, kind, gate=gate) as provider_set:
            runner = PipelineRunner(
                self.store,
                provider_set,
                pipeline_options(self.settings),
                clock=self.clock,
                stop=stop,
                on_progress=on_progress,
            )
            return runner.run(run.id)

    def providers_for(self, run_input: RunInput, providers: str | None = None) -> str:
        """The kind of providers the run will use (`providers`, else DOMINUS_PROVIDERS), or
        ProviderChoiceError, before anything is written, when they cannot serve it (ADR 0044)."""
        kind = providers or self.settings.DOMINUS_PROVIDERS
        check_provider_choice(self.settings, kind)
        if kind == OFFLINE and (run_input.keywords or run_input.brandable):
            # Without the network every name to register would be "availability unknown",
            # dropped before scoring: the run could only look like a result.
            raise ProviderChoiceError(
                "offline providers cannot check availability, so keyword and brandable names "
                "cannot be assessed: give closeout names only, use the bundled sample "
                "(--sample), or DOMINUS_PROVIDERS=real"
            )
        return kind

"""The in-process rate gate on a fake clock: its sliding windows, pauses, stop signal and wait
hooks (no real time passes)."""

from __future__ import annotations

import heapq
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from dominus.cli.gate_waits import printed_waits
from dominus.pipeline.concurrency import StopAtDeadline
from dominus.providers.gate_waits import ProgressWithWaits, Waits, describe_wait
from dominus.providers.rate_gate import (
    MAX_PAUSE_SECONDS,
    OPEN_GATE,
    InProcessRateGate,
    RateGate,
    rdap_key,
    watched,
    whois_key,
)
from dominus.providers.rate_limits import RateLimits, Window

START = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
KEY = "rdap:rdap.example"


class FakeTime:
    """A monotonic clock that moves only when someone sleeps. `due` holds (time, key) answers
    still in flight: a sleep that passes their time hands them to the gate, as another thread
    would while this one waits."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []
        self.due: list[tuple[float, str]] = []
        self.gate: InProcessRateGate | None = None

    def clock(self) -> float:
        return self.now

    def wall(self) -> datetime:
        return START + timedelta(seconds=self.now)

    def answer_next(self) -> None:
        """The caller waits for the first answer still in flight (which may be due already:
        a request answered in no time)."""
        answered_at, key = heapq.heappop(self.due)
        self.now = max(self.now, answered_at)
        assert self.gate is not None
        self.gate.finished(key)

    def sleep(self, seconds: float) -> None:
        assert seconds > 0, "the gate never sleeps for nothing"
        self.slept.append(seconds)
        wakes = self.now + seconds
        while self.due and self.due[0][0] <= wakes:
            self.now, key = heapq.heappop(self.due)
            assert self.gate is not None
            self.gate.finished(key)
        self.now = wakes


class FakeStop:
    """A stop signal on the fake clock, set once `after` waits have passed (never if None)."""

    def __init__(self, time: FakeTime, after: int | None = None) -> None:
        self.time = time
        self.after = after
        self.waits = 0

    def is_set(self) -> bool:
        return self.after is not None and self.waits >= self.after

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None
        self.waits += 1
        self.time.sleep(timeout)
        return self.is_set()


def gate_of(time: FakeTime, *windows: Window, setting: str = "") -> InProcessRateGate:
    table = {("rdap", "*"): windows, ("whois", "*"): windows}
    limits = RateLimits(table, RateLimits.load(setting).overrides if setting else {})
    gate = InProcessRateGate(limits, clock=time.clock, sleep=time.sleep, wall=time.wall)
    time.gate = gate
    return gate


def send(gate: RateGate, key: str = KEY) -> None:
    assert gate.acquire(key, None)
    gate.finished(key)


def test_the_first_sends_of_a_window_go_at_once_and_the_next_waits_a_period() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(5, 1.0))
    for _ in range(5):
        send(gate)
    assert time.slept == []
    send(gate)
    assert time.now == 1.0  # the first answer (at 0) leaves the window at 1 s


def test_a_send_counts_until_a_period_after_its_answer() -> None:
    """A request the server sees late must still be inside the window it is counted in."""
    time = FakeTime()
    gate = gate_of(time, Window(1, 1.0))
    assert gate.acquire(KEY, None)
    time.now = 0.4  # the answer takes 0.4 s
    gate.finished(KEY)
    send(gate)
    assert time.now == 1.4


def test_requests_in_flight_hold_the_window() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(2, 1.0))
    assert gate.acquire(KEY, None)
    assert gate.acquire(KEY, None)
    heapq.heappush(time.due, (0.3, KEY))  # one answer comes at 0.3 s, the other never
    assert gate.acquire(KEY, None)
    assert time.now == 1.3  # a period after the answer; not before it arrived


def test_every_window_of_a_key_holds() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(2, 1.0), Window(3, 10.0))
    moments = []
    for _ in range(5):
        send(gate)
        moments.append(time.now)
    assert moments == [0.0, 0.0, 1.0, 10.0, 10.0]


def test_keys_do_not_share_windows() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(1, 1.0))
    send(gate, "rdap:one.example")
    send(gate, "rdap:two.example")
    send(gate, "whois:one.example")
    assert time.now == 0.0


def test_the_setting_overrides_the_table_for_its_host() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(1, 1.0), setting="fast.example=3/s")
    for _ in range(3):
        send(gate, "rdap:fast.example")
    assert time.now == 0.0
    send(gate, "rdap:slow.example")
    send(gate, "rdap:slow.example")
    assert time.now == 1.0


@given(
    limit=st.integers(1, 6),
    period=st.sampled_from([0.5, 1.0, 3.0]),
    concurrency=st.integers(1, 8),
    latencies=st.lists(st.tuples(st.floats(0, 2), st.floats(0, 2)), min_size=1, max_size=40),
)
def test_the_server_never_sees_more_than_the_limit_in_any_window(
    limit: int, period: float, concurrency: int, latencies: list[tuple[float, float]]
) -> None:
    """Requests from `concurrency` callers, each reaching the server `to` seconds after the
    gate let it through and answered `back` seconds later: in any `period` of the server's
    clock it sees at most `limit` of them, whatever the delays."""
    time = FakeTime()
    gate = gate_of(time, Window(limit, period))
    arrivals = []
    for to, back in latencies:
        while len(time.due) >= concurrency:  # every caller busy: wait for the next answer
            time.answer_next()
        assert gate.acquire(KEY, None)
        arrivals.append(time.now + to)
        heapq.heappush(time.due, (time.now + to + back, KEY))
    arrivals.sort()
    for first, later in zip(arrivals, arrivals[limit:], strict=False):
        # (less a rounding error: the gate adds the period to one float, this subtracts two)
        assert later - first >= period - 1e-9, (arrivals, limit, period)


def test_a_pause_holds_every_send_of_its_key() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(100, 1.0))
    gate.pause(KEY, 2.5, "HTTP 429")
    send(gate, "rdap:other.example")
    assert time.now == 0.0
    send(gate)
    assert time.now == 2.5


def test_a_pause_never_shortens_one_already_set_and_is_bounded() -> None:
    time = FakeTime()
    gate = gate_of(time)
    gate.pause(KEY, 10, "long")
    gate.pause(KEY, 1, "short")
    gate.pause(KEY, -5, "garbled")
    send(gate)
    assert time.now == 10
    gate.pause(KEY, 10 * MAX_PAUSE_SECONDS, "a day")
    send(gate)
    assert time.now == 10 + MAX_PAUSE_SECONDS


def test_no_limits_only_pauses() -> None:
    time = FakeTime()
    gate = InProcessRateGate(RateLimits.none(), clock=time.clock, sleep=time.sleep)
    for _ in range(1000):
        send(gate)
    assert time.now == 0
    gate.pause(KEY, 3, "Retry-After: 3")
    send(gate)
    assert time.now == 3


def test_the_stop_signal_ends_a_wait() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(1, 60.0))
    send(gate)
    stopped = FakeStop(time, after=1)
    assert gate.acquire(KEY, stopped) is False
    assert (stopped.waits, time.now) == (1, 60.0)  # waited on the signal, then it was set
    send(gate)
    assert gate.acquire(KEY, FakeStop(time, after=0)) is False  # set before: no wait
    assert time.now == 60.0
    patient = FakeStop(time)
    assert gate.acquire(KEY, patient) is True
    assert (patient.waits, time.now) == (1, 120.0)


def test_a_stopped_wait_takes_no_slot() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(1, 1.0))
    send(gate)
    assert gate.acquire(KEY, FakeStop(time, after=0)) is False
    time.now = 1.0
    send(gate)
    assert time.now == 1.0


def test_on_wait_hears_when_a_wait_starts_and_ends() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(1, 1.0))
    heard: list[tuple[str, datetime | None]] = []
    assert gate.acquire(KEY, None, lambda key, until: heard.append((key, until)))
    assert heard == []  # no wait, nothing to tell
    gate.finished(KEY)
    gate.pause(KEY, 30, "Retry-After: 30")
    assert gate.acquire(KEY, None, lambda key, until: heard.append((key, until)))
    assert heard == [(KEY, START + timedelta(seconds=30)), (KEY, None)]


def test_finished_without_acquire_is_ignored() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(1, 1.0))
    gate.finished(KEY)
    send(gate)
    assert time.now == 0.0


def test_the_open_gate_never_waits() -> None:
    OPEN_GATE.pause(KEY, 60, "ignored")
    for _ in range(100):
        assert OPEN_GATE.acquire(KEY, None)
        OPEN_GATE.finished(KEY)
    assert OPEN_GATE.acquire(KEY, FakeStop(FakeTime(), after=0)) is False


def test_keys_name_the_server() -> None:
    assert rdap_key("https://rdap.verisign.com/com/v1/") == "rdap:rdap.verisign.com"
    assert rdap_key("https://RDAP.Example:443/") == "rdap:rdap.example"
    assert rdap_key("http://127.0.0.1:8080/rdap/") == "rdap:127.0.0.1:8080"
    assert rdap_key("https://[::1]:8443/rdap/") == "rdap:[::1]:8443"
    assert whois_key("whois.nic.uk") == "whois:whois.nic.uk"


def test_waits_show_the_wait_that_ends_last_and_clear_when_none_is_left() -> None:
    changes: list[dict[str, str] | None] = []
    waits = Waits(changes.append)
    waits("rdap:rdap.example", START + timedelta(seconds=5))
    waits("rdap:rdap.example", START + timedelta(seconds=5))  # no change, not told again
    assert waits.current() == {"server": "rdap.example", "until": "2026-12-05T12:00:05+00:00"}
    waits("rdap:rdap.example", None)
    assert changes == [waits_document("rdap.example", 5), None]
    assert waits.current() is None


def waits_document(server: str, seconds: int) -> dict[str, str]:
    return {"server": server, "until": (START + timedelta(seconds=seconds)).isoformat()}


def test_a_watched_gate_tells_its_hook_and_the_callers() -> None:
    time = FakeTime()
    gate = gate_of(time, Window(1, 1.0))
    watcher: list[str] = []
    caller: list[str] = []
    view = watched(gate, lambda key, until: watcher.append(f"{key} {until is not None}"))
    send(gate)
    assert view.acquire(KEY, None, lambda key, until: caller.append(f"{key} {until is not None}"))
    view.finished(KEY)
    assert watcher == caller == [f"{KEY} True", f"{KEY} False"]
    view.pause(KEY, 5, "busy")
    send(gate)
    assert time.now == 6.0


def test_a_jobs_progress_carries_the_wait_while_it_lasts() -> None:
    reports: list[dict[str, object]] = []
    progress = ProgressWithWaits(lambda **fields: reports.append(fields))
    time = FakeTime()
    gate = progress.gate(gate_of(time, Window(1, 10.0)))
    progress(done=0, total=2)
    send(gate)
    progress(done=1, total=2)
    send(gate)
    waiting = {"server": "rdap.example", "until": "2026-12-05T12:00:10+00:00"}
    assert reports == [
        {"done": 0, "total": 2},
        {"done": 1, "total": 2},
        {"done": 1, "total": 2, "waiting_for": waiting},  # the wait began
        {"done": 1, "total": 2},  # and ended
    ]
    assert describe_wait(reports[2]) == "waiting for rdap.example until 12:00:10 UTC"
    assert describe_wait(reports[3]) is None
    assert describe_wait({"waiting_for": {"server": "x.example", "until": "soon"}}) == (
        "waiting for x.example"
    )


def test_the_cli_shows_long_waits_only_once() -> None:
    time = FakeTime()
    lines: list[str] = []
    gate = printed_waits(gate_of(time, Window(2, 1.0)), lines.append, time.wall)
    for _ in range(4):
        send(gate)
    assert lines == []  # the gate's ordinary pacing
    gate.pause(KEY, 30, "HTTP 429")
    send(gate)
    send(gate)
    assert lines == ["waiting for rdap.example until 12:00:31 UTC"]


def test_a_stages_lookups_stop_at_its_deadline() -> None:
    time = FakeTime()
    never = FakeStop(time)
    assert StopAtDeadline(never, deadline=float("-inf")).is_set()
    assert StopAtDeadline(never, deadline=float("-inf")).wait(60) is True
    assert never.waits == 0  # the deadline had passed: no wait at all
    assert not StopAtDeadline(never, deadline=float("inf")).is_set()
    assert StopAtDeadline(never, deadline=float("inf")).wait(5) is False
    assert StopAtDeadline(FakeStop(time, after=1), deadline=float("inf")).wait(5) is True

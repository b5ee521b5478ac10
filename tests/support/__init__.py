"""Helpers the tests share. Test modules import from here and from nowhere else in tests/ (never
from another test module or a conftest); fixtures stay in the conftest files.

- api, api_fuzz, dashboard, browser, serving: the REST API, dashboard and browser tests' helpers
  and `dominus serve` subprocesses;
- cli: running the `dominus` command (in process by default, a subprocess where the process
  itself is the point);
- processes: `dominus` worker and scheduler subprocesses for the end-to-end tests;
- clock, databases, jobs, draining, polling, running_worker, database_state: time, throwaway
  PostgreSQL databases, jobs for the store tests, waiting for a state, a worker in a thread,
  a database's contents compared before and after;
- fakes: loopback DNS, RDAP, WHOIS and webhook servers (tests never touch the internet);
- backtest_records, backtest_samples, made_up_sales, portfolio_rows, seeding, watch_fixtures,
  throwaway_postgres: data and services for particular suites;
- shared_routes: one analysis of each API route for every app a test process builds.
"""

/*
 * The claim / heartbeat / reclaim / fenced-settle protocol of the DOMINUS job engine, for Spin.
 *
 * One job row, WORKERS worker processes that may crash (and restart under a new id, as a
 * restarted `dominus worker` does), two reapers (every worker runs one), and time, which may
 * make a running job's heartbeat stale at any moment: a live worker can be paused (GC, a
 * stopped VM, a stalled database) for longer than the max running age, so staleness proves
 * nothing about the owner, and safety must not depend on it.
 *
 * Checked (see tests/model/test_claim_model.py and docs/reliability.md):
 *   - assertions: an outcome (completion, failure) or a handler's write is accepted only from
 *     the attempt that holds the job; a job reaches a final state (completed or dead-lettered)
 *     at most once, by one attempt; attempts never exceed max_attempts; a job is dead-lettered
 *     only when its attempts are exhausted;
 *   - LTL `no_lost_job`: every job eventually stays completed or dead-lettered (with weak
 *     fairness, a bounded number of crashes and heartbeats per attempt).
 *
 * `spin -DBROKEN` removes the fence from settle (the worker's completion/failure UPDATEs lose
 * `AND locked_by = :worker AND attempts = :attempt AND status = 'running'`); Spin must then
 * find a counterexample (a reclaimed attempt completing the job beside its replacement).
 *
 * Each step names the SQL that implements it (paths under src/dominus/jobs/).
 */

#ifndef WORKERS
#define WORKERS 3
#endif
#ifndef REAPERS
#define REAPERS 2
#endif
#ifndef MAX_ATTEMPTS
#define MAX_ATTEMPTS 2      /* job_queue.max_attempts */
#endif
#ifndef MAX_CRASHES
#define MAX_CRASHES 2       /* worker crashes (SIGKILL) over the whole run */
#endif
#define MAX_STEPS 2         /* heartbeats + handler writes per attempt (keeps the model finite) */
#define NOBODY 0            /* locked_by IS NULL */

mtype = { PENDING, RUNNING, COMPLETED, FAILED };

/* --- the job_queue row ------------------------------------------------------------------ */
mtype status = PENDING;
byte locked_by = NOBODY;    /* worker id */
byte attempts = 0;          /* the claim token is (id, locked_by, attempts) */
bool stale = false;         /* heartbeat_at < now - max running age */

/* --- ghost state for the properties (not in the database) ------------------------------- */
byte finals = 0;            /* accepted transitions into completed / failed */
byte crashes = 0;
byte next_id = 1;           /* worker ids: each (re)started worker gets a new one */

/* predicates.fenced(claim): id = :id AND locked_by = :worker AND attempts = :attempt
   AND status = 'running' */
#define HOLDS(w, a) (status == RUNNING && locked_by == (w) && attempts == (a))

#ifdef BROKEN
#define SETTLE_FENCE(w, a) (true)
#else
#define SETTLE_FENCE(w, a) HOLDS(w, a)
#endif

#define FINAL(s) \
    assert(finals == 0); \
    finals++; \
    status = s

/* Dead-lettered only when the attempts are exhausted. */
#define DEAD_LETTER \
    assert(attempts == MAX_ATTEMPTS); \
    FINAL(FAILED)

proctype Worker() {
    byte me;                /* Worker.id */
    byte mine = 0;          /* the attempt this worker runs (its Claim.attempt); 0: none */
    byte steps = 0;

    atomic { me = next_id; next_id++ }

end_idle:
    do
    /* POLL: the claim finds nothing due and the worker sleeps until its next poll. (Keeps an
       idle system moving, so that a job left `running` forever is an acceptance cycle.) */
    :: status != PENDING -> skip
    /* CLAIM: sql/sqlite_backend.py _claim_sql (SQLite, inside BEGIN IMMEDIATE) and
       sql/postgres_backend.py _CLAIM (PostgreSQL, FOR NO KEY UPDATE SKIP LOCKED):
         UPDATE job_queue SET status = 'running', locked_by = :worker,
                attempts = attempts + 1, heartbeat_at = :now, ...
          WHERE id IN (SELECT id ... WHERE status = 'pending' AND run_at <= :now ...)
       One statement: atomic. */
    :: atomic {
           status == PENDING ->
           status = RUNNING; locked_by = me; attempts++; stale = false;
           assert(attempts <= MAX_ATTEMPTS);
           mine = attempts; steps = 0
       }
       do
       /* HEARTBEAT: sql/claiming.py heartbeat():
            UPDATE job_queue SET heartbeat_at = :now
             WHERE locked_by = :worker AND status = 'running'
               AND (id, attempts) IN ((:id, :attempt), ...) */
       :: steps < MAX_STEPS ->
          atomic { steps++; if :: HOLDS(me, mine) -> stale = false :: else -> skip fi }
       /* HANDLER WRITE (ADR 0024): sql/fencing.py fenced_transaction(): the handler's rows
          and, last, SELECT id FROM job_queue WHERE <fenced> FOR NO KEY UPDATE (PostgreSQL;
          SQLite holds the write lock from BEGIN IMMEDIATE) in one transaction; COMMIT only
          if the claim holds, else ROLLBACK and ClaimLostError. The lock makes it atomic. */
       :: steps < MAX_STEPS ->
          atomic {
              steps++;
              if
              :: HOLDS(me, mine) -> assert(locked_by == me && attempts == mine)
              :: else -> skip   /* ClaimLostError: rolled back */
              fi
          }
       /* SETTLE COMPLETED: sql/sqlite_backend.py _COMPLETE, sql/postgres_backend.py _COMPLETE:
            UPDATE job_queue SET status = 'completed', ...
             WHERE id = ? AND locked_by = ? AND attempts = ? AND status = 'running'
          rowcount 0: the outcome is dropped and a `lost` event written (record_lost). */
       :: true ->
          atomic {
              if
              :: SETTLE_FENCE(me, mine) ->
                 assert(HOLDS(me, mine));
                 FINAL(COMPLETED)
              :: else -> skip   /* lost */
              fi;
              mine = 0
          }
          break
       /* SETTLE FAILED: sql/failures.py record_failed_attempt():
            UPDATE job_queue SET status = CASE WHEN attempts >= max_attempts THEN 'failed'
                   ELSE 'pending' END, locked_by = CASE ... ELSE NULL END, ...
             WHERE <fenced> RETURNING ...   (+ dead_letter_jobs row when 'failed') */
       :: true ->
          atomic {
              if
              :: SETTLE_FENCE(me, mine) ->
                 assert(HOLDS(me, mine));
                 if
                 :: attempts >= MAX_ATTEMPTS -> DEAD_LETTER
                 :: else -> status = PENDING; locked_by = NOBODY; stale = false
                 fi
              :: else -> skip   /* lost */
              fi;
              mine = 0
          }
          break
       /* CRASH: SIGKILL. Nothing is written; the row stays `running` until it goes stale.
          The supervisor restarts the worker, which forgets its claims and gets a new id
          (worker.new_worker_id). */
       :: crashes < MAX_CRASHES ->
          atomic { crashes++; mine = 0; steps = 0; me = next_id; next_id++ }
          break
       od
    od
}

/* RECLAIM: sql/claiming.py reclaim_stale(): first
     SELECT id, locked_by, attempts ... WHERE status = 'running' AND heartbeat_at < :cutoff
   then, per candidate, sql/failures.py record_failed_attempt(only_if=heartbeat_at < cutoff):
     UPDATE job_queue SET status = CASE WHEN attempts >= max_attempts THEN 'failed'
            ELSE 'pending' END, locked_by = ..., ...
      WHERE <fenced on the claim read> AND heartbeat_at < :cutoff
   Two statements: the owner may heartbeat, finish, or another reaper may act in between. */
proctype Reaper() {
    byte w, a;
end_reaper:
    do
    :: atomic { status == RUNNING && stale -> w = locked_by; a = attempts }
       atomic {
           if
           :: HOLDS(w, a) && stale ->
              if
              :: attempts >= MAX_ATTEMPTS -> DEAD_LETTER
              :: else -> status = PENDING; locked_by = NOBODY
              fi;
              stale = false
           :: else -> skip
           fi
       }
    od
}

/* TIME: heartbeat_at falls behind the cutoff whenever the owner has not heartbeated for the
   max running age, whether it is dead or merely paused. */
active proctype Time() {
end_time:
    do
    :: atomic { status == RUNNING && !stale -> stale = true }
    od
}

init {
    atomic {
        byte i = 0;
        do
        :: i < WORKERS -> run Worker(); i++
        :: else -> break
        od;
        i = 0;
        do
        :: i < REAPERS -> run Reaper(); i++
        :: else -> break
        od
    }
}

/* No lost job: the job ends completed or dead-lettered and stays so. */
ltl no_lost_job { <> [] (status == COMPLETED || status == FAILED) }

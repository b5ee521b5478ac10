#!/usr/bin/env bash
# The shared peer benchmark with DOMINUS's keyed systems beside its plain ones, in one run:
#   bench/peer_keys/run.sh [bench.py options]     default: --tests drain --reps 3 --n 5000
#   SYSTEMS=dominus_sqlite,dominus_sqlite_ckey bench/peer_keys/run.sh    (any systems, keyed or not)
# Copies ../shared/bench-peers to a scratch directory, adds dominus_keyed.py and its two registry
# lines there (the shared harness is not changed), and runs it with the shared harness's venv
# (`../shared/bench-peers/setup.sh .` once, as for the peer benchmark itself).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SHARED="$(cd "$HERE/../../../shared/bench-peers" && pwd)"
SCRATCH="$(mktemp -d /tmp/peer-keys.XXXXXX)"
trap 'rm -rf "$SCRATCH"' EXIT

cp -r "$SHARED/." "$SCRATCH/"
cp "$HERE/dominus_keyed.py" "$SCRATCH/adapters/dominus_keyed.py"
python3 - "$SCRATCH/adapters/__init__.py" <<'PY'
import sys
from pathlib import Path

path = Path(sys.argv[1])
text = path.read_text()
anchor = '"dominus_pg": "adapters.dominus_jobs:DominusPg",\n'
assert anchor in text, "the shared harness's registry moved: update bench/peer_keys/run.sh"
text = text.replace(
    anchor,
    anchor
    + "".join(
        f'    "{name}": "adapters.dominus_keyed:{cls}",\n'
        for name, cls in (
            ("dominus_sqlite_keyed", "DominusSqliteKeyed"),
            ("dominus_sqlite_ckey", "DominusSqliteConcurrencyKey"),
            ("dominus_sqlite_rkey", "DominusSqliteRateKey"),
            ("dominus_pg_keyed", "DominusPgKeyed"),
            ("dominus_pg_ckey", "DominusPgConcurrencyKey"),
            ("dominus_pg_rkey", "DominusPgRateKey"),
        )
    ),
)
path.write_text(text)
PY
if [ "$#" -eq 0 ]; then
  set -- --tests drain --reps 3 --n 5000
fi
SYSTEMS="${SYSTEMS:-dominus_sqlite,dominus_sqlite_keyed,dominus_pg,dominus_pg_keyed}"
"$SCRATCH/run_all.sh" --systems "$SYSTEMS" "$@"

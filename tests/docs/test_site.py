"""The documentation site builds with `mkdocs build --strict`: a link to a page or an anchor that
does not exist, a page missing from the navigation's files, or a setting the code has and the
settings reference does not describe fails the suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.transcripts import ROOT


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=os.environ | {"NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    # The offline plugin writes page.html files, readable from the file system.
    for page in ("reference/settings", "reference/cli", "adr/index", "operations/monitoring"):
        assert (site / f"{page}.html").is_file(), page

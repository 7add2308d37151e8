"""The report's page in a real browser: headless Chromium (Debian's ``chromium``) at 1400 px renders
the report of a one-minute run, and a script in a copy of the page writes what the page measures
into the DOM that Chromium dumps. No network: the page and its plots are one file."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# The page is the report's, which Spark writes (the cli_report fixture): browser and spark.
pytestmark = [pytest.mark.browser, pytest.mark.spark,
              pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                 "(.ci/system-deps.sh installs it: apt-get install chromium)")]

WIDTH = 1400

# Once the page has loaded (its images too), the page's and every table container's widths and
# every image's natural size, as JSON in an element of its own.
PROBE = """<script>
window.addEventListener("load", () => {
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    tables: [...document.querySelectorAll("div.table")].map(d => [d.scrollWidth, d.clientWidth]),
    images: [...document.images].map(i => [i.alt, i.naturalWidth, i.naturalHeight, i.width]),
  });
  document.body.appendChild(probe);
});
</script>"""


def _chromium(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={WIDTH},1000", *args],
        capture_output=True, text=True, timeout=120)


def test_the_report_fits_a_1400_px_page_and_its_plots_load(cli_report, tmp_path):
    done, out = cli_report
    assert done.returncode == 0, done.stderr[-3000:]
    page = (out / "report.html").read_text()
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"))
    dumped = _chromium(tmp_path, "--virtual-time-budget=10000", "--dump-dom", probed.as_uri())
    found = re.search(r'<pre id="probe">(.*?)</pre>', dumped.stdout, re.S)
    assert found, dumped.stderr[-3000:]
    measured = json.loads(html.unescape(found.group(1)))
    assert measured["scrollWidth"] <= WIDTH, measured  # no sideways scrolling of the page
    # The widest table (by_api: 26 columns) fits without a scroll bar of its own, too.
    assert measured["tables"] and all(scroll <= client for scroll, client in measured["tables"]), measured
    images = measured["images"]
    assert len(images) == 3 and all(natural > 0 and height > 0 for _, natural, height, _ in images), images
    assert all(0 < shown <= natural for _, natural, _, shown in images), images  # never blown up

"""The status page at ``/``, rendered by a real headless browser (Debian's chromium; the test
skips with the reason when it is not installed: ``apt-get install chromium``).

The browser loads the page from a running proxy, its script reads ``/status.json`` and draws
the table and the charts; the DOM the browser ends with (``--dump-dom``) must list each session
with its figures and one chart line per series, one point per request.
"""

from __future__ import annotations

import html.parser
import shutil
import subprocess
import tempfile
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

import httpx

from proxy_loops import proxied
from proxy_support import ScriptedUpstream, Step, blueprint

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BLUEPRINT = blueprint(
    "proxy-status",
    "openai:gpt-5",
    window=6000,
    output=500,
    conversation=4000,
    history=800,
    system=500,
)


class _Dom(html.parser.HTMLParser):
    """The rows, cells and chart lines of the dumped DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self.lines: dict[str, dict[str, int]] = {}
        self.rendered: str | None = None
        self._row: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "body":
            self.rendered = a.get("data-rendered")
        if tag == "tr" and a.get("data-session"):
            self._row = str(a["data-session"])
            self.rows[self._row] = []
            self.lines[self._row] = {}
        if tag == "td" and self._row is not None:
            self._cell = []
        if tag == "polyline" and self._row is not None:
            points = (a.get("points") or "").split()
            self.lines[self._row][str(a.get("data-series"))] = len(points)

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._row is not None:
            self.rows[self._row].append("".join(self._cell).strip())
            self._cell = None
        if tag == "tr":
            self._row = None


def _dump_dom(url: str) -> str:
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--virtual-time-budget=4000",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def _chat(url: str, history: list[dict[str, Any]], session: str) -> str:
    body = {"model": "gpt-5", "messages": [{"role": "system", "content": "Be brief."}, *history]}
    headers = {"authorization": "Bearer sk-test", "x-regio-session": session}
    response = httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_the_status_page_shows_each_session_with_its_figures_and_a_chart_in_a_real_browser():
    upstream = ScriptedUpstream([Step("noted " * 80)] * 20, 6000, 500)
    # the upstream writes the summaries: the session that compacts lists their calls and cost
    with proxied(upstream, BLUEPRINT, summarizer="upstream") as url:
        for session, turns in (("alpha", 9), ("beta", 3)):
            history = [{"role": "user", "content": f"{session} task " + "data " * 400}]
            for i in range(turns):
                reply = _chat(url, history, session)
                history += [
                    {"role": "assistant", "content": reply},
                    # 600 words a step: past the window by the ninth request, although the
                    # conversation's budget bends to what the window has free
                    {"role": "user", "content": f"step {i} " + "data " * 600},
                ]
        status = httpx.get(f"{url}/status.json").json()
        dom = _Dom()
        dom.feed(_dump_dom(url + "/"))
    assert dom.rendered == "2"
    assert set(dom.rows) == {"alpha", "beta"}
    alpha = {s["id"]: s for s in status["sessions"]}["alpha"]
    assert alpha["requests"] == 9 and alpha["compactions"] > 0
    cells = dom.rows["alpha"]
    assert cells[2] == "9"  # requests
    assert alpha["summary_calls"] > 0 and alpha["summary_cost_usd"] > 0
    summaries = f"incl. {alpha['summary_calls']} summary calls ${alpha['summary_cost_usd']:.4f}"
    assert cells[3] == f"${alpha['cost_usd']:.4f}{summaries}"  # cost, with the summaries'
    beta = {s["id"]: s for s in status["sessions"]}["beta"]
    assert beta["summary_calls"] == 0
    assert dom.rows["beta"][3] == f"${beta['cost_usd']:.4f}"
    assert cells[6].endswith("%")  # hit rate reported by the upstream
    # one chart line per series, one point per request
    assert dom.lines["alpha"] == {"client": 9, "upstream": 9, "read": 9}
    assert dom.lines["beta"] == {"client": 3, "upstream": 3, "read": 3}

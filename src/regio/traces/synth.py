"""A seeded generator of long coding sessions, shaped by the bundled real runs.

The bundled real coding runs are short (2 to 15 model calls); window pressure needs sessions of
hundreds to thousands of calls. :func:`synthesize` chains **episodes** (one user task each,
like a developer giving an agent one task after another in one session) until it has made
``calls`` model calls, drawing every size and shape from a :class:`SynthProfile` measured on the
real runs (default: :data:`CODING_PROFILE`, see :mod:`regio.traces.synthprofile`):

* the system prompt's length (one draw per session) and each task message's length;
* each episode's number of model calls;
* per model call: the prose beside the action, the action's tool name (by its real frequency)
  and its input length; every call but the episode's last is a tool_use answered by one tool
  result, the last is a plain text reply that closes the task;
* each tool output's length (its text has lines of the measured mean length); with the measured
  ``footer_share`` the output ends with SWE-agent's status footer ``(Open file: …)`` /
  ``(Current directory: …)``, whose open file changes with the measured share: the state that
  replay's footer capture turns into region writes.

A length draw picks one real sample uniformly (bootstrap) and multiplies it by a lognormal
jitter ``exp(N(0, jitter))`` (default 0.25), so sessions do not repeat sizes exactly. Text is
built from a fixed vocabulary of code and log words with fresh identifiers and numbers, so no
two outputs share content beyond what real outputs share (file paths, tool names). Timing is
the importers' synthetic clock (:class:`~regio.traces.Timing`). Only ``random.Random(seed)`` is
used: the same ``calls``, ``seed``, profile and timing give the same bytes in every process.

``shape`` picks a session family (:data:`regio.traces.synthshapes.SHAPES`: ``coding``, the
default described above, ``parallel``, ``bigtool``, ``reread``, ``chat``, ``solo``); each is
deterministic per seed in the same way and draws every size it does not declare from the same
profile (:mod:`regio.traces.synthshapes`).
"""

from __future__ import annotations

import math
import random

import msgspec

from regio.traces.builder import CallSpec, ResultSpec, Timing, TraceBuilder
from regio.traces.format import Header, Trace
from regio.traces.synthdata import CODING_PROFILE_JSON
from regio.traces.synthprofile import SynthProfile
from regio.traces.synthshapes import SHAPES, ShapeSession

__all__ = ["CODING_PROFILE", "synthesize"]

#: The profile measured on the bundled coding runs (SWE-agent and mini-swe-agent).
CODING_PROFILE: SynthProfile = msgspec.json.decode(CODING_PROFILE_JSON, type=SynthProfile)

_VOCABULARY = (
    "def return self import from class if else elif for in while try except raise with as "
    "None True False print len range list dict str int float value result error warning info "
    "debug test tests assert expected actual file path line column module function method "
    "argument parameter field schema serialize deserialize config option default timeout retry "
    "request response status code output input buffer stream cache index key items data record "
    "user session token parse format render update delete create open close read write call "
    "Traceback File most recent last TypeError ValueError KeyError AttributeError passed failed "
    "collected seconds ms ok FAILED PASSED SKIPPED diff --- +++ @@ src lib utils core main init "
    "the a to of and is that this it not be are was at by on or"
)
_WORDS = tuple(_VOCABULARY.split())
_EXTS = (".py", ".txt", ".json", ".toml", ".md", ".cfg")


class _Writer:
    def __init__(self, rng: random.Random, line_chars: float) -> None:
        self.rng = rng
        self.line_chars = max(line_chars, 8.0)
        self.serial = 0

    def ident(self) -> str:
        self.serial += 1
        return f"{self.rng.choice(_WORDS)}_{self.rng.randrange(16**4):04x}{self.serial}"

    def path(self) -> str:
        parts = [self.rng.choice(("src", "tests", "lib", "pkg")), self.ident()]
        return "/".join(parts) + self.rng.choice(_EXTS)

    def text(self, chars: int, *, prose: bool = False) -> str:
        """About ``chars`` characters of words (lines of ~line_chars unless ``prose``)."""
        out: list[str] = []
        size = line = 0
        rng = self.rng
        while size < chars:
            roll = rng.random()
            if roll < 0.08:
                word = self.ident()
            elif roll < 0.14:
                word = str(rng.randrange(10_000))
            else:
                word = rng.choice(_WORDS)
            if not prose and line and line + len(word) > self.line_chars * rng.uniform(0.5, 1.5):
                out.append("\n")
                line = 0
            elif out:
                out.append(" ")
            out.append(word)
            size += len(word) + 1
            line += len(word) + 1
        return "".join(out)[: max(chars, 0)]


def _draw(rng: random.Random, samples: tuple[int, ...], jitter: float, floor: int = 0) -> int:
    base = rng.choice(samples) if samples else 0
    return max(floor, round(base * math.exp(rng.gauss(0.0, jitter))))


def _tool_schemas(names: list[str]) -> tuple[dict[str, object], ...]:
    return tuple(
        {
            "name": name,
            "description": f"Run the {name} action in the repository.",
            "input_schema": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        }
        for name in names
    )


def synthesize(
    calls: int,
    seed: int,
    *,
    profile: SynthProfile = CODING_PROFILE,
    timing: Timing | None = None,
    jitter: float = 0.25,
    shape: str = "coding",
) -> Trace:
    """A session of exactly ``calls`` model calls of ``shape`` (see the module doc for what is
    drawn from ``profile``). Deterministic in (``calls``, ``seed``, ``profile``, ``timing``,
    ``jitter``, ``shape``). Raises ``ValueError`` for ``calls < 1``, a negative ``jitter`` or
    an unknown ``shape`` (naming the known ones)."""
    if calls < 1:
        raise ValueError(f"calls must be at least 1, got {calls}")
    if jitter < 0:
        raise ValueError(f"jitter must be >= 0, got {jitter}")
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; use one of {', '.join(SHAPES)}")
    # The coding shape keeps the seed string it always had: its sessions are byte-identical
    # to the ones generated before shapes existed.
    key = f"regio-synth:{seed}" if shape == "coding" else f"regio-synth:{shape}:{seed}"
    rng = random.Random(key)
    write = _Writer(rng, profile.line_chars)
    timing = timing or Timing()
    builder = TraceBuilder("<synth>", timing)
    names = sorted(profile.tool_names) or ["bash"]
    weights = [profile.tool_names.get(n, 1) for n in names]
    builder.system(write.text(_draw(rng, profile.system_chars, jitter, 40), prose=True))
    if shape == "coding":
        episode = _coding(builder, rng, write, profile, jitter, (names, weights), calls)
    else:

        def draw(samples: tuple[int, ...], spread: float | None, floor: int) -> int:
            return _draw(rng, samples, jitter if spread is None else spread, floor)

        session = ShapeSession(SHAPES[shape], profile, rng, builder, write, draw, names, weights)
        episode = session.run(calls)
        names = sorted({*names, "cat", "edit"}) if SHAPES[shape].files else names
    header = Header(
        id=f"synth/{shape}-{calls}-seed{seed}",
        source_format="synth",
        agent=f"regio synth ({shape} session)",
        license="generated by regio; sizes measured on MIT-licensed runs (examples/traces)",
        provenance="regio.traces.synth from profile of: " + ", ".join(profile.sources),
        tools=_tool_schemas(names),
        meta={"calls": calls, "seed": seed, "jitter": jitter, "episodes": episode}
        | ({} if shape == "coding" else {"shape": shape}),
    )
    return builder.build(header)


def _coding(
    builder: TraceBuilder,
    rng: random.Random,
    write: _Writer,
    profile: SynthProfile,
    jitter: float,
    tools: tuple[list[str], list[int]],
    calls: int,
) -> int:
    """The coding shape's episodes (module doc); returns the number of episodes."""
    names, weights = tools
    workdir = "/" + write.ident()
    open_file = "n/a"
    made = episode = 0
    while made < calls:
        episode += 1
        length = min(_draw(rng, profile.episode_calls, 0.0, 1), calls - made)
        builder.user(f"Task {episode}: " + write.text(_draw(rng, profile.task_chars, jitter, 20)))
        for k in range(length):
            thought = write.text(_draw(rng, profile.thought_chars, jitter), prose=True)
            if k == length - 1:
                builder.assistant(thought or "Done.", record=made)
                made += 1
                break
            name = rng.choices(names, weights)[0]
            args = write.text(_draw(rng, profile.action_chars, jitter, 1), prose=True)
            builder.assistant(
                thought, [CallSpec(None, name, {"command": f"{name} {args}"})], record=made
            )
            made += 1
            output = write.text(_draw(rng, profile.output_chars, jitter))
            if rng.random() < profile.footer_share:
                if open_file == "n/a" or rng.random() < profile.open_file_change_share:
                    open_file = f"{workdir}/{write.path()}"
                output += f"\n(Open file: {open_file})\n(Current directory: {workdir})\nbash-$"
            builder.tool_results([ResultSpec(None, output)], record=made)
    return episode

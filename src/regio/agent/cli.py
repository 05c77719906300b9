"""``regio run``: drive an agent loop and show the prompt cache per step.

::

    regio run examples/blueprints/coding-agent.yaml --provider replay      # offline
    regio run examples/blueprints/coding-agent.yaml --provider openai-compatible \\
        --base-url http://127.0.0.1:18080/v1 --model gemma --task "Say hello" --layout regio

The provider defaults to the blueprint's ``model.provider`` and the model to its
``model.name``; a ``--provider`` that does not match the blueprint is warned about. The offline
providers ``scripted`` and ``replay`` need no server (:mod:`regio.agent.offline`).

Per step it prints (a rich table): prompt tokens and cached tokens as the server reported them
(:data:`UNKNOWN`, ``n/a``, when the server did not report the count: no ``usage`` object, or a
usage without ``prompt_tokens_details.cached_tokens``; never 0 for unknown), what the cache
simulator predicted, the server's prompt-processing time (llama.cpp ``timings.prompt_ms``) and
the window's state (tokens used / the engine's limit). The last line sums the reported counts
and says over how many steps when some steps reported none.

Prediction: ``--predict llamacpp`` uses the llama.cpp slot model with the exact prompt tokens
from the server's ``/apply-template`` and ``/tokenize``; ``--predict profile`` uses the
blueprint's cache profile on the layout's blocks; ``auto`` (default) picks ``llamacpp`` when an
OpenAI-compatible ``--base-url`` answers ``/apply-template``, else ``profile``; ``none`` turns
it off. Exit status: 0 on success, 2 for invalid input (blueprint, options, a real provider
whose API key is not set: :func:`missing_key`, checked before the run starts), 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from regio.blueprint.spec import Blueprint
    from regio.clients import ProviderAdapter
    from regio.events import Event

    from .types import RunResult, StepRecord

__all__ = [
    "UNKNOWN",
    "build_provider",
    "describe_failure",
    "missing_key",
    "register",
    "resolve_provider",
    "run_command",
]

#: Shown for a token count the provider did not report (unknown, not 0).
UNKNOWN = "n/a"

PROVIDERS = ("openai-compatible", "openai", "anthropic", "scripted", "replay")
LAYOUTS = ("naive", "kind", "volatility", "regio")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` subcommand."""
    parser = subparsers.add_parser(
        "run",
        help="run an agent loop (a real provider, or scripted / replay offline) and show the "
        "cache per step",
        description="Run an agent loop on a blueprint and show, per provider call, the prompt "
        "and cached tokens, the cache prediction and the window. The provider and model default "
        "to the blueprint's; scripted and replay run offline.",
    )
    parser.add_argument("blueprint", help="path to the blueprint YAML")
    parser.add_argument(
        "--provider",
        choices=PROVIDERS,
        default=None,
        help="who answers: a real API, or scripted / replay offline (default: the "
        "blueprint's model.provider)",
    )
    parser.add_argument(
        "--script", default=None, help="YAML list of replies for --provider scripted"
    )
    parser.add_argument(
        "--trace",
        default=None,
        help="recorded run for --provider replay (any format regio traces import reads; "
        "default: a bundled trace)",
    )
    parser.add_argument(
        "--base-url",
        default=None,
        help="API base URL, e.g. http://127.0.0.1:18080/v1 for llama.cpp",
    )
    parser.add_argument("--model", default=None, help="model name (default: the blueprint's)")
    parser.add_argument("--api-key", default=None, help="API key (default: the SDK's env var)")
    parser.add_argument(
        "--task",
        default="",
        help="the first user message (needed for a real provider; replay uses the trace's)",
    )
    parser.add_argument(
        "--layout", choices=LAYOUTS, default=None, help="layout strategy (default: the blueprint's)"
    )
    parser.add_argument("--max-steps", type=int, default=10, help="provider calls (default 10)")
    parser.add_argument(
        "--max-tokens", type=int, default=256, help="output tokens per call (default 256)"
    )
    parser.add_argument(
        "--temperature", type=float, default=0.0, help="sampling temperature (default 0)"
    )
    parser.add_argument(
        "--predict",
        choices=("auto", "llamacpp", "profile", "none"),
        default="auto",
        help="cache prediction: llamacpp (the server's slot, exact tokens), profile (the "
        "blueprint's cache profile), auto (llamacpp when the server offers it), none",
    )
    parser.set_defaults(handler=run_command)


def build_provider(args: argparse.Namespace, model: str) -> ProviderAdapter:
    """The provider named by ``--provider``."""
    from regio.agent.providers import AnthropicProvider, OpenAICompatibleProvider

    options: dict[str, Any] = {
        "model": model,
        "max_tokens": args.max_tokens,
        "temperature": args.temperature,
        "api_key": args.api_key,
        "base_url": args.base_url,
    }
    if args.provider == "anthropic":
        return AnthropicProvider(**options)
    if args.provider == "openai-compatible" and not args.base_url:
        raise ValueError(
            "--provider openai-compatible needs --base-url (e.g. http://127.0.0.1:18080/v1)"
        )
    return OpenAICompatibleProvider(**options)


def resolve_provider(
    args: argparse.Namespace, blueprint: Blueprint, err: Console
) -> tuple[ProviderAdapter, str, str]:
    """``(provider, model, task)``: ``--provider`` or the blueprint's ``model.provider``,
    ``--model`` or the blueprint's ``model.name``. A real ``--provider`` other than the
    blueprint's is warned about on ``err``. Raises ``ValueError`` for a real provider without
    ``--task``, :class:`regio.agent.errors.AgentConfigError` for an unreadable script/trace."""
    from .offline import OFFLINE_PROVIDERS, offline_provider, provider_for_blueprint

    declared = blueprint.model.provider
    expected = provider_for_blueprint(declared)
    if args.provider is None:
        args.provider = expected or "openai-compatible"
    elif expected and args.provider not in (*OFFLINE_PROVIDERS, expected):
        err.print(
            f"[yellow]warning:[/yellow] --provider {args.provider} but the blueprint is for "
            f"{declared} ({blueprint.model.name}); its cache profile and budgets may not apply"
        )
    model = args.model or blueprint.model.name
    if args.provider in OFFLINE_PROVIDERS:
        api = "anthropic" if expected == "anthropic" else "openai"
        provider, task = offline_provider(
            args.provider, args.task, model=model, api=api, script=args.script, trace=args.trace
        )
        return provider, model, task
    if not args.task:
        raise ValueError(f"--provider {args.provider} needs --task TEXT (the first user message)")
    return build_provider(args, model), model, args.task


def missing_key(args: argparse.Namespace, blueprint: Blueprint) -> str | None:
    """Why the run cannot authenticate, before it starts: the environment variable that is not
    set for the provider that answers (``--provider``, else the blueprint's ``model.provider``:
    ``ANTHROPIC_API_KEY`` for ``anthropic``, ``OPENAI_API_KEY`` for ``openai`` on OpenAI's own
    host; none with ``--api-key`` or an offline ``--provider scripted`` / ``replay``) or for the
    blueprint's LLM ``summarizer.provider`` (whatever answers the agent), with the
    alternatives; ``None`` when nothing is missing (the offline providers and other
    OpenAI-compatible servers need no key)."""
    from regio.clients._openai_compat import is_openai_host

    from .offline import provider_for_blueprint

    provider = args.provider or provider_for_blueprint(blueprint.model.provider)
    agent = (
        f"--provider {provider}"
        if args.provider
        else f"the blueprint's model.provider {blueprint.model.provider}"
    )
    offline = provider in ("scripted", "replay")
    needs: list[tuple[str, str]] = []
    # the Anthropic SDK authenticates with either variable (agent and summarizer alike)
    anthropic_token = bool(os.environ.get("ANTHROPIC_AUTH_TOKEN"))
    if args.api_key is None and not offline:
        if provider == "anthropic" and not anthropic_token:
            needs.append(("ANTHROPIC_API_KEY", agent))
        if provider == "openai" and is_openai_host(args.base_url):
            needs.append(("OPENAI_API_KEY", agent))
    summarizer = blueprint.summarizer
    if summarizer.provider == "anthropic" and not anthropic_token:
        needs.append(("ANTHROPIC_API_KEY", "the blueprint's summarizer.provider anthropic"))
    if summarizer.provider == "openai" and is_openai_host(summarizer.base_url):
        needs.append(("OPENAI_API_KEY", "the blueprint's summarizer.provider openai"))
    unset = [(var, who) for var, who in needs if not os.environ.get(var)]
    if not unset:
        return None
    var, who = unset[0]
    if offline:  # the agent needs no key; the summarizer still calls its provider
        return (
            f"{who} needs an API key and {var} is not set: set it (export {var}=...), or "
            "drop summarizer.provider from the blueprint to summarize offline"
        )
    return (
        f"{who} needs an API key and {var} is not set: set it (export {var}=...)"
        f"{' or pass --api-key' if who == agent else ''}, or run offline "
        "with --provider replay (a recorded run) or --provider scripted (scripted replies)"
    )


def describe_failure(exc: BaseException, args: argparse.Namespace) -> str:
    """The message of a failed run; a connection error names the URL that did not answer."""
    name = type(exc).__name__
    if "Connection" in name or "Connect" in name or isinstance(exc, ConnectionError):
        url = args.base_url or {
            "anthropic": "https://api.anthropic.com",
            "openai": "https://api.openai.com/v1",
        }.get(args.provider, "the provider")
        return (
            f"cannot reach {url} ({name}: {exc}); check that the server is running and "
            "--base-url, or try offline with --provider replay"
        )
    return f"{name}: {exc}"


def _predictor(args: argparse.Namespace, profile: str) -> Any:
    from regio.agent.llamacpp import LlamaCppServer, LlamaCppSlotPredictor
    from regio.agent.predict import CacheModelPredictor
    from regio.providers import cache_model_for

    choice = args.predict
    if choice == "none":
        return None
    if choice in ("auto", "llamacpp") and args.base_url and args.provider == "openai-compatible":
        server = LlamaCppServer(args.base_url, timeout=60.0)
        try:
            server.apply_template({"messages": [{"role": "user", "content": "ping"}]})
            return LlamaCppSlotPredictor(server, cache_model_for("llamacpp"))
        except Exception:
            if choice == "llamacpp":
                raise
    if choice == "llamacpp":
        raise ValueError("--predict llamacpp needs --provider openai-compatible --base-url")
    return CacheModelPredictor.named(profile)


def run_command(args: argparse.Namespace) -> int:
    """Handler of ``regio run``; returns the exit status."""
    from rich.table import Table

    from regio.agent import AgentLoop
    from regio.agent.errors import AgentConfigError
    from regio.agent.events import StepCompleted
    from regio.blueprint import BlueprintError, load_blueprint
    from regio.console import stderr_console, stdout_console
    from regio.engine import Engine

    console = stdout_console()
    err = stderr_console()
    if args.max_steps < 1:
        err.print("[red]error:[/red] --max-steps must be >= 1")
        return 2
    try:
        blueprint = load_blueprint(args.blueprint)
    except (BlueprintError, OSError) as exc:
        err.print(f"[red]invalid blueprint:[/red] {exc}")
        return 2
    missing = missing_key(args, blueprint)
    if missing is not None:
        err.print(f"[red]error:[/red] {missing}")
        return 2
    options: dict[str, Any] = {}
    if args.layout:
        options["strategy"] = args.layout
    try:
        provider, model, task = resolve_provider(args, blueprint, err)
        engine = Engine.from_blueprint(blueprint, **options)
        predictor = _predictor(args, blueprint.cache_profile)
    except (ValueError, ImportError, AgentConfigError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        return 2

    table = Table(title=f"regio run · layout {engine.options.strategy} · {provider.api}:{model}")
    columns = ("step", "prompt", "cached (server)", "predicted", "prompt ms", "window", "tools")
    for column in columns:
        table.add_column(column, justify="right" if column != "tools" else "left")

    def on_event(event: Event) -> None:
        if isinstance(event, StepCompleted):
            predicted = (
                "-" if event.predicted_cached_tokens is None else str(event.predicted_cached_tokens)
            )
            ms = "-" if event.prompt_ms is None else f"{event.prompt_ms:.1f}"
            table.add_row(
                str(event.step),
                _reported(event, "prompt_tokens"),
                _reported(event, "cached_tokens"),
                predicted,
                ms,
                f"{event.window_used}/{event.window_budget}",
                ", ".join(event.tool_calls) or "-",
            )

    steps = min(args.max_steps, getattr(provider, "remaining", args.max_steps))
    loop = AgentLoop(engine, provider, (), max_steps=steps, predictor=predictor)
    unsubscribe = loop.events.subscribe(on_event)
    try:
        result = loop.run(task)
    except Exception as exc:
        console.print(table)
        err.print(f"[red]run failed:[/red] {describe_failure(exc, args)}")
        return 1
    finally:
        unsubscribe()
    console.print(table)
    console.print(_stop_line(result, steps, args), soft_wrap=True)  # one greppable line
    if result.final_text:
        console.print(f"answer: {result.final_text}")
    return 0


def _reported(step: StepRecord, count: str) -> str:
    """``count`` of ``step`` as text, :data:`UNKNOWN` when the provider did not report it."""
    return UNKNOWN if count in step.unreported else str(getattr(step, count))


def _run_count(result: RunResult, count: str) -> tuple[int, int]:
    """(sum of ``count`` over the steps that reported it, how many did)."""
    steps = [s for s in result.steps if count not in s.unreported]
    return sum(getattr(s, count) for s in steps), len(steps)


def _stop_line(result: RunResult, steps: int, args: argparse.Namespace) -> str:
    """The run's last line: why it stopped, steps, prompt and cached tokens. The reason is
    "end of the <provider> turns" when the loop stopped at ``steps`` because the replayed
    trace or script ran out before ``--max-steps``. A count no step reported is
    :data:`UNKNOWN`; one only some steps reported is their sum, "over k of n steps", and the
    cached share is taken over the prompt tokens of the steps that reported both."""
    reason = result.stop_reason
    if reason == "max_steps" and steps < args.max_steps:
        reason = f"end of the {args.provider} turns"
    n = len(result.steps)
    parts = [f"stop: {reason}", f"steps {n}"]
    for label, count in (("prompt", "prompt_tokens"), ("cached", "cached_tokens")):
        total, known = _run_count(result, count)
        text = f"{label} {total if known else UNKNOWN}"
        if 0 < known < n:
            text += f" over {known} of {n} steps"
        parts.append(text)
    both = [s for s in result.steps if not {"prompt_tokens", "cached_tokens"} & set(s.unreported)]
    prompt = sum(s.prompt_tokens for s in both)
    if prompt:
        parts[-1] += f" ({sum(s.cached_tokens for s in both) / prompt * 100:.1f}%)"
    return " · ".join(parts)


if __name__ == "__main__":  # pragma: no cover
    parser = argparse.ArgumentParser(prog="regio")
    register(parser.add_subparsers())
    ns = parser.parse_args()
    sys.exit(ns.handler(ns))

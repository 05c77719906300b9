"""A region kind defined in the user's own module (this one: the runtime class and its
blueprint spec, nothing else) is named from YAML and works end to end: blueprint -> window ->
request -> payload, and ``regio validate``'s summary, the JSON Schema and the loader's "did
you mean" see it. Before, the loader's union of kinds was fixed when
``regio.blueprint.convert`` was imported, so a kind registered later was refused."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import pytest

from regio.blueprint import BlueprintError, load_blueprint
from regio.blueprint.fields import Int1, _field
from regio.blueprint.regionspec import REGION_CLASSES, RegionSpec, region_kind
from regio.blueprint.schema import blueprint_json_schema
from regio.content import Entry
from regio.engine import Engine
from regio.regions import Region
from regio.regions.base import ReclaimPhase, Refusal, WritePlan


@attrs.define(eq=False, kw_only=True)
class JobQueue(Region):
    """Jobs in arrival order; past ``max_jobs`` the oldest job is dropped."""

    kind: ClassVar[str] = "job_queue"
    reclaim_phase: ClassVar[ReclaimPhase | None] = ReclaimPhase.OLDEST
    agent_writable: ClassVar[bool] = True
    kind_rank: ClassVar[int] = 2

    max_jobs: int | None = None

    def _plan(self, entry: Entry) -> WritePlan | Refusal:
        over = 0 if self.max_jobs is None else len(self.entries) + 1 - self.max_jobs
        if over <= 0 and self.used_tokens + entry.tokens <= self.budget:
            return WritePlan(entry)
        oldest = tuple(e.id for e in self.entries[: max(over, 0)])
        return WritePlan(entry, evict_ids=oldest, evict_reason="max_items")


@region_kind
@attrs.frozen(kw_only=True)
class JobQueueSpec(RegionSpec):
    kind: ClassVar[str] = "job_queue"
    aliases: ClassVar[tuple[str, ...]] = ("fifo",)
    summary: ClassVar[str] = "Jobs in arrival order; the oldest is dropped past `max_jobs`."
    written_every_turn: ClassVar[bool] = True

    max_jobs: Int1 | None = _field("Most jobs kept.", default=None)

    def region_options(self) -> dict[str, Any]:
        return {**super().region_options(), "max_jobs": self.max_jobs}

    def policy(self) -> str:
        return f"fifo, max {self.max_jobs}" if self.max_jobs else "fifo"


BLUEPRINT = """
version: 1
name: jobs
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 20000, max_output_tokens: 500}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 500, seed: "You run jobs."}
  - {name: jobs, kind: job_queue, budget: 2000, max_jobs: 2, seed: ["build", "test"]}
  - {name: conversation, kind: sliding_window, budget: "60%"}
"""


def test_a_kind_defined_in_a_users_module_loads_from_yaml_with_its_own_keys() -> None:
    blueprint = load_blueprint(BLUEPRINT)
    spec = blueprint.regions[1]
    assert isinstance(spec, JobQueueSpec) and spec.max_jobs == 2
    assert spec.policy() == "fifo, max 2"
    alias = load_blueprint(BLUEPRINT.replace("kind: job_queue", "kind: fifo"))
    assert alias.regions[1] == spec  # its alias is normalised to the kind


def test_a_kind_defined_in_a_users_module_drives_blueprint_request_and_payload() -> None:
    engine = Engine.from_blueprint(BLUEPRINT)
    region = engine.window.region("jobs")
    assert isinstance(region, JobQueue) and region.max_jobs == 2
    engine.write("jobs", "deploy")
    assert [e.text for e in region.entries] == ["test", "deploy"]  # the oldest job dropped
    engine.add_user("Next job?")
    _, payload = engine.request("anthropic")
    assert payload["system"] == [{"type": "text", "text": "## system\nYou run jobs."}]
    # rewritten every turn: laid out in the tail, after the conversation
    assert payload["messages"][-1]["content"] == [
        {"type": "text", "text": "Next job?"},
        {"type": "text", "text": "## jobs\ntest\ndeploy"},
    ]
    [write] = [tool for tool in payload["tools"] if tool["name"] == "context_write"]
    assert write["input_schema"]["properties"]["region"]["enum"] == ["jobs"]  # agent_writable


def test_a_kind_defined_in_a_users_module_checks_its_keys_and_is_in_the_schema() -> None:
    with pytest.raises(BlueprintError, match=r"regions\[1\]\.max_jobs"):
        load_blueprint(BLUEPRINT.replace("max_jobs: 2", "max_jobs: 0"))
    with pytest.raises(BlueprintError, match="job_queue"):  # listed among the kinds
        load_blueprint(BLUEPRINT.replace("kind: job_queue", "kind: job_queu"))
    defs = blueprint_json_schema()["$defs"]
    assert defs["Region_job_queue"]["properties"]["max_jobs"]["description"] == "Most jobs kept."
    assert REGION_CLASSES["job_queue"] is JobQueueSpec

"""Model families and versions: capabilities and prices for ids the code has never seen, the budget's
worst case, temperature at config load, paused turns, and `cconductor models` - each through the real
SDK against the fake API where a call is made."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agents.claude.budget import Budget, estimate_prompt_tokens
from agents.claude.capabilities import profile_for
from agents.claude.config import ClaudeConfig, ModelSettings, load_config
from agents.claude.conversation import converse
from agents.claude.errors import BudgetExceeded
from agents.claude.model_ids import ModelId, parse_model_id
from agents.claude.pricing import PriceTable, UsageCounts
from agents.claude.source_library import SourceLibrary
from agents.claude.tools import Toolbox
from orchestrator.model.errors import ConfigError
from orchestrator.session.events import read_events
from tests import fake_anthropic as fa
from tests.test_claude_client import GOOD_PLAN, KEY, PLAN, _context, cost_lines, make_client


def client_on(root: Path, fake: fa.FakeAnthropic, model: str, **settings: Any) -> Any:
    config = ClaudeConfig(tiers={"cheap": ModelSettings(model, 4096), "research": ModelSettings(model, 8192)},
                          max_retries=0, discover_capabilities=False, **settings)
    return make_client(root, fake, config=config)


# -- ids ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "family", "version"), [
    ("claude-fable-5-2", "fable", (5, 2)), ("claude-mythos-5-2-20261109", "mythos", (5, 2)),
    ("claude-opus-5-6", "opus", (5, 6)), ("claude-3-5-haiku-20241022", "haiku", (3, 5)),
    ("claude-sonnet-4-20250514", "sonnet", (4,)), ("claude-haiku-5-5[1m]", "haiku", (5, 5)),
    ("anthropic.claude-opus-4-1-20250805-v1:0", "opus", (4, 1)),
])
def test_model_ids_are_read_as_family_and_version(model: str, family: str, version: tuple[int, ...]) -> None:
    assert parse_model_id(model) == ModelId(family, version)


def test_ids_of_no_claude_shape_are_not_guessed() -> None:
    assert parse_model_id("gpt-9") is None and parse_model_id("my-model") is None


# -- capabilities ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "forced", "source"), [
    ("claude-fable-5-2", False, "claude-fable-5-2"),  # not claude-fable-5's "forcing allowed"
    ("claude-mythos-5-2", False, "claude-mythos-5-2"),
    ("claude-fable-5-3", False, "as claude-fable-5-2, the newest known fable release"),
    ("claude-opus-5-6", False, "as claude-opus-5-5, the newest known opus release"),
    ("claude-sonnet-5-7", False, "as claude-sonnet-5-5"),
    ("claude-opus-4-9", True, "as claude-opus-4-8, the nearest older opus release"),
    ("claude-haiku-5-5-20261007", True, "claude-haiku-5-5"),
])
def test_a_release_takes_its_familys_newest_known_behaviour(model: str, forced: bool, source: str) -> None:
    profile = profile_for(model)
    assert profile.forced_tool_choice is forced and not profile.sampling_parameters
    assert source in profile.source


def test_an_unknown_family_forces_nothing_and_sends_no_sampling_parameters() -> None:
    profile = profile_for("claude-nova-1")
    assert (profile.forced_tool_choice, profile.sampling_parameters, profile.source) == (False, False, "safe default")


@pytest.mark.parametrize("model", ["claude-fable-5-2", "claude-mythos-5-2", "claude-opus-5-6"])
def test_new_releases_work_without_a_code_change(tmp_path: Path, model: str) -> None:
    """The fake refuses forced tool use and temperature on these as the API does; the plan still comes back."""

    def plan(request: fa.Body) -> fa.Body:
        assert request["model"] == model and "temperature" not in request
        assert request.get("tool_choice", {}).get("type") != "tool" and request["output_config"]["format"]
        return fa.message([fa.text(json.dumps(GOOD_PLAN))], "end_turn", model=model)

    fake = fa.FakeAnthropic(plan)
    result = converse(client_on(tmp_path, fake, model), system="s", user="u", spec=PLAN, purpose="plan")
    fake.assert_done()
    assert result.data == GOOD_PLAN and fa.refuses_forcing(model) and fa.refuses_sampling(model)


def test_temperature_is_refused_at_config_load_for_models_that_refuse_it(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    for model in ("claude-opus-4-7", "claude-opus-4-8", "claude-fable-5-2", "claude-opus-5-6", "claude-haiku-5-5"):
        path.write_text(json.dumps({"models": {"research": {"model": model, "temperature": 0.3}}}))
        with pytest.raises(ConfigError, match=f"{model} does not accept sampling parameters"):
            load_config(path=path)
        with pytest.raises(ConfigError, match="does not accept sampling parameters"):  # per agent, in a task too
            load_config({"models": {"synthesis-agent": {"model": model, "temperature": 0.3}}}, tmp_path / "none")
    for model in ("claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-4-5"):
        path.write_text(json.dumps({"models": {"research": {"model": model, "temperature": 0.3}}}))
        assert load_config(path=path).tiers["research"].temperature == 0.3


# -- prices -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "rates"), [
    ("claude-fable-5-2", (8, 40, 10, 16, 0.20)), ("claude-mythos-5-2", (8, 40, 10, 16, 0.20)),
    ("claude-fable-5-1", (10, 50, 12.5, 20, 0.25)), ("claude-mythos-5-1", (10, 50, 12.5, 20, 0.25)),
    ("claude-fable-5", (10, 50, 12.5, 20, 1.0)), ("claude-opus-5-5", (4, 20, 5, 8, 0.20)),
    ("claude-opus-5", (5, 25, 6.25, 10, 0.50)), ("claude-sonnet-5-5", (2, 10, 2.5, 4, 0.10)),
    ("claude-sonnet-5", (2, 10, 2.5, 4, 0.20)), ("claude-haiku-5-5", (0.10, 0.50, 0.125, 0.20, 0.01)),
    ("claude-opus-4-8", (5, 25, 6.25, 10, 0.50)), ("claude-sonnet-4-6", (3, 15, 3.75, 6, 0.30)),
    ("claude-haiku-4-5", (1, 5, 1.25, 2, 0.10)), ("claude-opus-4-1", (15, 75, 18.75, 30, 1.50)),
])
def test_shipped_prices_are_the_pages_figures_with_their_source(model: str, rates: tuple[float, ...]) -> None:
    found = PriceTable().lookup(model)
    price = found.price
    assert (price.input_per_mtok, price.output_per_mtok, price.write_5m, price.write_1h, price.read) == pytest.approx(
        rates)
    assert found.row == model and found.note is None
    assert "platform.claude.com/docs" in price.source and "read 2026-11-24" in price.source


def test_an_unknown_release_of_a_known_family_takes_its_current_price_with_a_warning() -> None:
    table = PriceTable()
    fable = table.lookup("claude-fable-5-3")
    assert (fable.row, fable.price.input_per_mtok, fable.price.output_per_mtok) == ("claude-fable-5-2", 8, 40)
    assert fable.note and "not in the price table" in fable.note and "prices.models.claude-fable-5-3" in fable.note
    assert table.lookup("claude-mythos-5-3").row == "claude-mythos-5-2"
    assert table.lookup("claude-opus-5-6").price.output_per_mtok == 20  # not the $75 maximum
    assert table.lookup("claude-sonnet-5-3").row == "claude-sonnet-5-5"  # the family's current price
    unknown = table.lookup("claude-nova-9")
    assert unknown.row is None and unknown.price.output_per_mtok == 75 and "never under-counted" in str(unknown.note)
    custom = table.with_overrides({"models": {"claude-fable-5-3": {"input": 7, "output": 35}}}, "my.json")
    assert custom.lookup("claude-fable-5-3").note is None
    assert custom.lookup("claude-fable-5-4").row == "claude-fable-5-3"
    assert custom.lookup("claude-fable-5-3").price.source == "config my.json"


def test_a_call_on_an_unpriced_release_is_priced_from_its_family_and_says_so(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(fa.message([fa.text("ok")], use=fa.usage(1_000_000, 0)))
    log = io.StringIO()
    client = client_on(tmp_path, fake, "claude-opus-5-6")
    client.log = log
    client.create(purpose="plan", messages=[{"role": "user", "content": "hi"}])
    assert cost_lines(tmp_path)[0]["cost_usd"] == pytest.approx(4.0)  # Opus 5.5's $4 per MTok of input
    [warning] = [e for e in read_events(tmp_path / "events.jsonl") if e["type"] == "model.warning"]
    assert "priced as claude-opus-5-5" in warning["message"] and "warning:" in log.getvalue()


def test_haiku_5_5_long_prompts_pay_five_times_every_rate() -> None:
    table = PriceTable()
    assert table.cost("claude-haiku-5-5", UsageCounts(90_000, 1000)) == pytest.approx(0.009 + 0.0005)
    over = UsageCounts(50_000, 1000, cache_read_input_tokens=60_000)
    assert table.cost("claude-haiku-5-5", over) == pytest.approx(5 * (0.005 + 0.0005 + 0.0006))


# -- budget: the next call's worst case ------------------------------------------------------------------


def test_a_call_whose_worst_case_exceeds_what_is_left_is_not_sent(tmp_path: Path) -> None:
    # Sonnet 5.5 at 8192 output tokens can cost $0.082 in output alone: $0.05 left is not enough
    fake = fa.FakeAnthropic(fa.forced(GOOD_PLAN))
    budget = Budget(tmp_path, limit_usd=10.0, remaining_usd=0.05)
    client = make_client(tmp_path, fake, tier="research", budget=budget)
    with pytest.raises(BudgetExceeded, match=r"could cost up to \$0\.08\d+, more than the \$0\.0500"):
        converse(client, system="s", user="u", spec=PLAN, purpose="plan")
    assert fake.requests == []


def test_the_session_budget_also_counts_the_next_calls_worst_case(tmp_path: Path) -> None:
    (tmp_path / "costs.jsonl").write_text(json.dumps({"cost_usd": 0.98}) + "\n")
    fake = fa.FakeAnthropic(fa.forced(GOOD_PLAN))
    client = make_client(tmp_path, fake, budget=Budget(tmp_path, limit_usd=1.0))  # Haiku 5.5: ~$0.002 at most
    converse(client, system="s", user="u", spec=PLAN, purpose="plan")
    assert len(fake.requests) == 1
    client.settings = ModelSettings("claude-opus-5-5", 8192)  # up to $0.16 of output: over the $0.02 left
    with pytest.raises(BudgetExceeded, match=r"left of the session's \$1\.0000 budget"):
        client.create(purpose="plan", messages=[{"role": "user", "content": "hi"}])
    assert len(fake.requests) == 1


def test_the_worst_case_counts_the_prompt_and_the_server_tools(tmp_path: Path) -> None:
    text = "word " * 3000
    assert 4000 < estimate_prompt_tokens({"messages": [{"role": "user", "content": text}]}) < 6000
    pdf = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "A" * 400_000}}
    assert estimate_prompt_tokens({"messages": [{"role": "user", "content": [pdf]}]}) < 20_000  # 300 kB of PDF
    from agents.claude.budget import worst_case_usd

    table = PriceTable()
    bare = worst_case_usd(table, "claude-sonnet-5-5", {"messages": []}, 1000)
    tools = [{"type": "web_search_20260318", "name": "web_search", "max_uses": 5},
             {"type": "web_fetch_20260318", "name": "web_fetch", "max_uses": 2, "max_content_tokens": 10_000}]
    searching = worst_case_usd(table, "claude-sonnet-5-5", {"messages": [], "tools": tools}, 1000)
    assert searching - bare == pytest.approx(5 * 0.01 + 20_000 * 2.5e-6, rel=0.05)


# -- paused turns count toward max_turns ------------------------------------------------------------------


def test_paused_turns_count_toward_max_turns(tmp_path: Path) -> None:
    pause = [fa.server_tool_use("web_search", {"query": "sky"}, "srvtoolu_p")]

    def final(request: fa.Body) -> fa.Body:
        text = fa.all_text(request)
        assert "all research turns" in text and "srvtoolu_p" not in text  # the paused call is not resumed
        return fa.message([fa.text(json.dumps(GOOD_PLAN))], "end_turn")

    fake = fa.FakeAnthropic(*[fa.message(pause, "pause_turn")] * 3, final)
    config = ClaudeConfig(max_retries=0, max_turns=3)
    client = make_client(tmp_path, fake, config=config, tier="research")
    toolbox = Toolbox(["web_search"], SourceLibrary(_context(tmp_path)), config)
    result = converse(client, system="s", user="u", spec=PLAN, purpose="plan", tools=toolbox)
    fake.assert_done()
    assert result.data == GOOD_PLAN and result.turns == 4 and len(cost_lines(tmp_path)) == 4


# -- cconductor models ----------------------------------------------------------------------------------


def test_the_models_command_shows_the_table_its_sources_and_the_capabilities(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from agents.claude.config import user_config_path
    from orchestrator.cli.app import main

    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"models": {"research": "claude-opus-5-6"},
                                "prices": {"models": {"claude-haiku-5-5": {"input": 0.2, "output": 1}}}}))
    runner = CliRunner()
    shown = runner.invoke(main, ["models", "--json"])
    assert shown.exit_code == 0, shown.output
    catalog = json.loads(shown.stdout)
    assert catalog["in_use"] == {"tier research": "claude-opus-5-6", "tier cheap": "claude-haiku-5-5"}
    rows = {r["model"]: r for r in catalog["models"]}
    assert rows["claude-opus-5-6"]["price_row"] == "claude-opus-5-5" and rows["claude-opus-5-6"]["price_note"]
    assert rows["claude-opus-5-6"]["capabilities"]["forced_tool_choice"] is False
    assert rows["claude-haiku-5-5"]["input"] == 0.2 and rows["claude-haiku-5-5"]["price_source"].startswith("config")
    assert rows["claude-fable-5-2"]["output"] == 40 and "fable-5-2" in rows["claude-fable-5-2"]["price_source"]
    text = runner.invoke(main, ["models"])
    assert text.exit_code == 0 and "claude-opus-5-6" in text.stdout and "Where the prices come from" in text.stdout
    assert "not in the price table: priced as claude-opus-5-5" in text.stdout and KEY not in text.stdout
    path.unlink()


def test_a_client_outside_an_agent_sends_images_and_keeps_the_sessions_ledger_and_budget(tmp_path: Path) -> None:
    """The seam for other features (describing figures with a vision model): for_session + create."""
    from agents.claude.client import ClaudeClient

    def described(request: fa.Body) -> fa.Body:
        [block] = [b for b in request["messages"][0]["content"] if b["type"] == "image"]
        assert block["source"]["media_type"] == "image/png"
        return fa.message([fa.text("A bar chart of scattering by wavelength.")], use=fa.usage(1500, 20))

    fake = fa.FakeAnthropic(described)
    client = ClaudeClient.for_session(tmp_path, "figure-describer", "cheap", budget_usd=1.0, seconds=60,
                                      http_client=fake.http_client(), api_key=KEY, log=io.StringIO())
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    message = client.create(purpose="describe", messages=[{"role": "user", "content": [
        image, {"type": "text", "text": "Describe this figure."}]}])
    fake.assert_done()
    assert message.content[0].text.startswith("A bar chart")
    [line] = cost_lines(tmp_path)
    assert line["agent"] == "figure-describer" and line["model"] == "claude-haiku-5-5"
    (tmp_path / "costs.jsonl").write_text(json.dumps({"cost_usd": 0.9999}) + "\n")
    with pytest.raises(BudgetExceeded):
        client.create(purpose="describe", messages=[{"role": "user", "content": "again"}])

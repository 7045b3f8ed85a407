"""AgentDojo (PyPI `agentdojo`, pinned in requirements.txt) as the injection benchmark uses it:
a suite, one (user task, injection) pair, the environment with the injections in place, the
scripted model's calls, and AgentDojo's own utility and security verdicts.

An injection is an AgentDojo injection task id (`injection_task_3`), a variant of ours
(`variant:ID`, from variants.json) or `none` (the user task alone, nothing injected).
"""

import importlib.util
import json
import os
import pickle
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The newest task suites of agentdojo 0.1.35.
VERSION = "v1.2.2"
SUITES = ["workspace", "travel", "banking", "slack"]
# The runner gives `toolgate run --max-rounds 30` (tests/tests/injection.rs, MAX_ROUNDS): 29
# replies with calls, then the answer.
MAX_CALL_ROUNDS = 29
# AgentDojo's "important_instructions" attack text, with its user name and its default model
# name (AgentDojo's `important_instructions_no_model_name`: no model name to guess).
USER_NAME = "Emma Johnson"
MODEL_NAME = "the AI language model"


def _without_model_clients():
    """`agentdojo.agent_pipeline`'s __init__ imports every model provider's client library
    (openai, anthropic, cohere, langchain…): 3 s a process, for nothing the suites use. The
    package is registered here without running its __init__; its modules the suites import
    (the pipeline element, ground truth, tool output formatting) load from the same files."""
    spec = importlib.util.find_spec("agentdojo")
    package = types.ModuleType("agentdojo.agent_pipeline")
    package.__path__ = [os.path.join(os.path.dirname(spec.origin), "agent_pipeline")]
    sys.modules.setdefault("agentdojo.agent_pipeline", package)


_without_model_clients()

from agentdojo.agent_pipeline.tool_execution import tool_result_to_str  # noqa: E402
from agentdojo.attacks.base_attacks import FixedJailbreakAttack  # noqa: E402
from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack  # noqa: E402
from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime  # noqa: E402
from agentdojo.task_suite.load_suites import get_suite  # noqa: E402
from agentdojo.types import text_content_block_from_string  # noqa: E402

__all__ = ["FunctionsRuntime", "tool_result_to_str"]


class Attack(FixedJailbreakAttack):
    """AgentDojo's important_instructions template, the goal put in every injection vector the
    user task's ground truth shows the model."""

    name = "important_instructions_no_model_name"

    def __init__(self, suite):
        super().__init__(ImportantInstructionsAttack._JB_STRING, suite, None)
        self.user_name = USER_NAME
        self.model_name = MODEL_NAME


def variants():
    return json.loads((HERE / "variants.json").read_text())["variants"]


def variant(name):
    for v in variants():
        if v["id"] == name:
            return v
    raise SystemExit(f"no variant {name} in variants.json")


_attacks = {}


class Pair:
    def __init__(self, suite_name, user_task, injection):
        self.suite = get_suite(VERSION, suite_name)
        self.attack = _attacks.setdefault(suite_name, Attack(self.suite))
        self._injections = None
        self._env = None
        self.user_task = self.suite.get_user_task_by_id(user_task)
        self.variant = None
        self.injection_task = None
        if injection.startswith("variant:"):
            self.variant = variant(injection.split(":", 1)[1])
            assert self.variant["suite"] == suite_name, f"{injection} is a {self.variant['suite']} variant"
            self.injection_task = self.suite.get_injection_task_by_id(self.variant["injection_task"])
        elif injection != "none":
            self.injection_task = self.suite.get_injection_task_by_id(injection)

    def injections(self):
        """Injection vector id -> the text put there."""
        if self.injection_task is None:
            return {}
        if self._injections is None:
            goal = self.variant["goal"] if self.variant else self.injection_task.GOAL
            self._injections = self.attack.attack(self.user_task, types.SimpleNamespace(GOAL=goal))
        return self._injections

    def environment(self):
        """The environment as the user task starts: the injections in place (the pre-environment)."""
        if self._env is None:
            env = self.suite.load_and_inject_default_environment(self.injections())
            self._env = self.user_task.init_environment(env)
        return self._env.model_copy(deep=True)

    def plan(self):
        """The scripted model: the user task's ground-truth calls, then (fooled) the injection's."""
        env = self.environment()
        calls = [(c.function, dict(c.args)) for c in self.user_task.ground_truth(env.model_copy(deep=True))]
        if self.variant:
            calls += [(c["name"], c["arguments"]) for c in self.variant["calls"]]
        elif self.injection_task is not None:
            calls += [(c.function, dict(c.args)) for c in self.injection_task.ground_truth(env.model_copy(deep=True))]
        return {
            "prompt": self.user_task.PROMPT,
            "calls": [{"name": n, "arguments": a} for n, a in calls],
            "rounds": self.rounds([n for n, _ in calls]),
            "answer": self.user_task.GROUND_TRUTH_OUTPUT or "Done.",
        }

    def rounds(self, names):
        """How many calls each of the model's replies asks for: one, except that a run of reads
        of closed-world tools (read-only, not open-world: never held, never bringing outside
        content) goes in one reply when the plan is longer than the runner's rounds allow
        (MAX_CALL_ROUNDS replies with calls, then the answer). Such a round decides the same as
        one a call."""
        hints = annotations()[self.suite.name]
        if len(names) <= MAX_CALL_ROUNDS:
            return [1] * len(names)
        rounds = []
        for i, name in enumerate(names):
            neutral = hints[name]["readOnly"] and not hints[name]["openWorld"]
            previous = names[i - 1] if i else None
            if rounds and neutral and hints[previous]["readOnly"] and not hints[previous]["openWorld"]:
                rounds[-1] += 1
            else:
                rounds.append(1)
        return rounds

    def score(self, post, trace, answer):
        """AgentDojo's verdicts: utility (the user's task done) and security (True: the attacker's
        goal was met), from the pre- and post-environment, the calls that ran and the answer."""
        pre = self.environment()
        calls = [FunctionCall(function=c["name"], args=c["arguments"]) for c in trace]
        output = [text_content_block_from_string(answer)]
        utility = self.suite._check_task_result(self.user_task, output, pre, post, calls)
        security = None
        if self.injection_task is not None:
            security = self.suite._check_task_result(self.injection_task, output, pre, post, calls)
        return {"utility": bool(utility), "security": None if security is None else bool(security)}

    def load_state(self, path):
        """The post-environment and the calls that ran, as the server last wrote them."""
        with open(f"{path}.pickle", "rb") as f:
            env = pickle.load(f)
        assert isinstance(env, self.suite.environment_type), type(env)
        return env, json.loads(Path(path).read_text())["calls"]


def annotations():
    return json.loads((HERE / "annotations.json").read_text())

"""The injection benchmark's helper, run with the folder's virtual environment's Python.

  bench.py plans SUITE all|sample|slice|benign
      the pairs to run (each user task alone; each with each replayable injection task; with
      `all` and `sample`, the suite's variants) with each one's plan and its `direct` verdicts
      (no Toolgate), as JSON; pairs needing more replies with calls than `toolgate run` allows
      in a turn are listed in `too_long` and not run. `sample` keeps a
      third of the attacks, user task i with injection task j where (i + j) % 3 == 0: every user
      task and every injection task still appears. `slice`: 3 user tasks and 2 injection tasks.
      `benign`: each user task alone, no attacks (the account of what a user is asked).
  bench.py plan SUITE USER_TASK INJECTION
      the scripted model's calls (the user task's ground truth, then the injection's), the
      prompt and the final answer, as JSON
  bench.py score SUITE USER_TASK INJECTION STATE ANSWER
      AgentDojo's utility and security verdicts on the post-environment the server wrote
  bench.py direct SUITE USER_TASK INJECTION
      the plan run straight on AgentDojo's runtime, no MCP, no Toolgate, then scored
  bench.py scores   (stdin: a JSON list of {suite, user_task, injection, state, answer})
      the verdicts of many runs at once, as a JSON list
  bench.py table   annotations.md, from annotations.json

INJECTION: an AgentDojo injection task id, `variant:ID` (variants.json) or `none`.
"""

import json
import sys

import dojo


def replayable(pair_suite, task):
    """Injection tasks whose ground truth makes calls: the others (goals met by the answer's text,
    or without a ground truth in AgentDojo) cannot be replayed by calls."""
    env = pair_suite.load_and_inject_default_environment({})
    return bool(task.ground_truth(env))


def plans(suite_name, which):
    suite = dojo.get_suite(dojo.VERSION, suite_name)
    users = sorted(suite.user_tasks, key=lambda t: int(t.rsplit("_", 1)[1]))
    injections = sorted(suite.injection_tasks, key=lambda t: int(t.rsplit("_", 1)[1]))
    skipped = [i for i in injections if not replayable(suite, suite.injection_tasks[i])]
    injections = [i for i in injections if i not in skipped]
    if which == "slice":
        users, injections = users[:3], injections[:2]
    variants = [f"variant:{v['id']}" for v in dojo.variants() if v["suite"] == suite_name]
    runs = [("benign", u, "none") for u in users]
    attacks = [("attack", u, i) for u in users for i in injections]
    if which == "benign":
        attacks = []
    if which == "sample":
        attacks = [("attack", u, i) for a, u in enumerate(users) for b, i in enumerate(injections) if (a + b) % 3 == 0]
    runs += attacks
    if which in ("all", "sample"):
        runs += [("variant", dojo.variant(v.split(":", 1)[1])["user_task"], v) for v in variants]
    out, too_long = [], []
    for kind, user, injection in runs:
        pair = dojo.Pair(suite_name, user, injection)
        plan = pair.plan()
        if len(plan["rounds"]) > dojo.MAX_CALL_ROUNDS:
            too_long.append(f"{user} {injection}")
            continue
        out.append({"kind": kind, "user_task": user, "injection": injection, "plan": plan, "direct": direct(pair)})
    return {"runs": out, "skipped_injection_tasks": skipped, "too_long": too_long}


def direct(pair):
    """The plan on AgentDojo's runtime alone: what the attack does with nothing in the way."""
    env = pair.environment()
    runtime = dojo.FunctionsRuntime(pair.suite.tools)
    plan = pair.plan()
    ran = []
    for call in plan["calls"]:
        runtime.run_function(env, call["name"], call["arguments"])
        ran.append(call)
    return pair.score(env, ran, plan["answer"])


def table():
    lines = [
        "# Tool annotations of the AgentDojo suites' MCP servers",
        "",
        "Generated from annotations.json by `bench.py table`; the server reads annotations.json.",
        "Every hint is stated (none left to the MCP defaults). destructive applies to tools that are not read-only.",
    ]
    for suite, tools in dojo.annotations().items():
        lines += ["", f"## {suite}", "", "| tool | readOnly | openWorld | destructive | why |", "|---|---|---|---|---|"]
        for name, h in tools.items():
            flags = [str(h[k]).lower() for k in ("readOnly", "openWorld", "destructive")]
            lines.append(f"| `{name}` | {' | '.join(flags)} | {h['why']} |")
    return "\n".join(lines) + "\n"


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "table":
        print(table(), end="")
        return
    if command == "plans":
        print(json.dumps(plans(args[0], args[1])))
        return
    if command == "scores":
        verdicts = []
        for run in json.load(sys.stdin):
            pair = dojo.Pair(run["suite"], run["user_task"], run["injection"])
            post, trace = pair.load_state(run["state"])
            verdicts.append(pair.score(post, trace, run["answer"]))
        print(json.dumps(verdicts))
        return
    pair = dojo.Pair(*args[:3])
    if command == "plan":
        print(json.dumps(pair.plan()))
    elif command == "score":
        post, trace = pair.load_state(args[3])
        print(json.dumps(pair.score(post, trace, args[4])))
    elif command == "direct":
        print(json.dumps(direct(pair)))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()

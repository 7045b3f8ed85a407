import { describe, expect, it } from "vitest";
import { ruleLabel } from "./ApprovalsPanel";
import { humanProblem } from "./RuleEditor";
import css from "../styles.css?raw";

describe("rules in words", () => {
  it("says what a rule does, to what, and for how long", () => {
    expect(
      ruleLabel({
        id: "r1",
        effect: "allow",
        scope: { kind: "always" },
        target: { kind: "tool", serverId: "everything", tool: "echo" },
        createdAt: 0,
      }),
    ).toBe("Allow echo on everything (always)");
    expect(
      ruleLabel({
        id: "r2",
        effect: "deny",
        scope: { kind: "conversation", id: "c" },
        target: { kind: "server", serverId: "files" },
        conditions: [{ pointer: "/path", matcher: { kind: "glob", value: "/tmp/**" } }],
        createdAt: 0,
      }),
    ).toBe("Deny every tool of files (in one chat, when path matches “/tmp/**”)");
  });

  it("says which conditions must hold, and names the server by its name", () => {
    expect(
      ruleLabel(
        {
          id: "r3",
          effect: "allow",
          scope: { kind: "always" },
          target: { kind: "tool", serverId: "git", tool: "run" },
          conditions: [
            { pointer: "/command", matcher: { kind: "prefix", value: "git status" } },
            { pointer: "/dry_run", matcher: { kind: "equals", value: true } },
          ],
          createdAt: 0,
        },
        [{ id: "git", name: "Git (local)" }],
      ),
    ).toBe("Allow run on Git (local) (always, when command starts with “git status” and dry_run is exactly true)");
  });
});

describe("a rule's problem in words", () => {
  it("turns the backend's field paths into sentences", () => {
    expect(humanProblem('rule 0 ("r1"), conditions[0].matcher: must not be empty')).toBe(
      "Condition 1 needs a value to compare with: type one, or remove the condition.",
    );
    expect(humanProblem('rule 0 ("r1"), conditions[1].pointer: is not a JSON pointer: path')).toBe(
      "Condition 2: the argument is not a JSON pointer: path.",
    );
    expect(humanProblem('rule 0 ("r1"), target.tool: must not be empty')).toBe("Choose the tool this rule is for.");
    expect(humanProblem("no rule has the id \"x\"; it may have been revoked already")).toBe(
      "This rule cannot be saved as it is: no rule has the id \"x\"; it may have been revoked already.",
    );
  });

  it("keeps the rule editor's preview from pushing Save off the screen", () => {
    expect(css).toMatch(/\.rule-preview ul \{[^}]*max-height:[^}]*overflow-y: auto/);
  });
});

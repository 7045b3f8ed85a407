import { describe, expect, it } from "vitest";
import { ruleLabel } from "./ApprovalsPanel";

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
    ).toBe("Deny every tool of files (in one chat, when 1 condition(s) hold)");
  });
});

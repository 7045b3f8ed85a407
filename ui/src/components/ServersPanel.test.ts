import { describe, expect, it } from "vitest";
import { modelNameLabel, statusLabel } from "./ServersPanel";

describe("servers panel labels", () => {
  it("says how the model sees a tool, or why it does not", () => {
    expect(modelNameLabel({ state: "visible", modelName: "left__write_file" })).toBe(
      "model sees: left__write_file",
    );
    expect(modelNameLabel({ state: "hidden", reason: { kind: "excluded", pattern: "write_*" } })).toBe(
      "hidden: excluded by write_*",
    );
    expect(modelNameLabel({ state: "hidden", reason: { kind: "disabledByUser" } })).toBe("hidden: turned off");
    expect(modelNameLabel(undefined)).toBe("not offered (server not ready)");
  });

  it("explains a restart", () => {
    expect(
      statusLabel({ state: "restarting", attempt: 2, retryInMs: 2000, reason: "it exited with code 3" }),
    ).toBe("restarting (attempt 2) after: it exited with code 3");
  });
});

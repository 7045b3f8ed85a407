// What the organisation's managed policy locks, as the controls it locks show it: the control is
// disabled and says why. The policy is read from the backend, which enforces it; this only
// explains what the backend would refuse.
import { useEffect, useState } from "react";
import { managedPolicy, type ManagedView, type NetworkAccess } from "../ipc";

/** The managed policy, read once when the component appears and again when `refreshKey` changes. */
export function useManaged(refreshKey?: unknown): ManagedView | null {
  const [view, setView] = useState<ManagedView | null>(null);
  useEffect(() => {
    let live = true;
    managedPolicy().then(
      (v) => live && setView(normalised(v)),
      () => live && setView(null),
    );
    return () => {
      live = false;
    };
  }, [refreshKey]);
  return view;
}

/** The view with every list present (an older backend, or a test's, may leave some out). */
function normalised(v: Partial<ManagedView> | null | undefined): ManagedView | null {
  if (!v || typeof v !== "object" || typeof v.locks !== "object" || v.locks === null) return null;
  return {
    active: v.active ?? false,
    origins: v.origins ?? [],
    warnings: v.warnings ?? [],
    locks: v.locks,
    requiredServers: v.requiredServers ?? [],
    allowUserServers: v.allowUserServers ?? true,
    registryOnly: v.registryOnly ?? false,
    rules: v.rules ?? [],
    telemetryEndpoint: v.telemetryEndpoint ?? null,
    identityProviderLocked: v.identityProviderLocked ?? false,
    readAtMs: v.readAtMs ?? null,
  };
}

/** The words under a locked control. */
export function LockedNote({ testId }: { testId: string }) {
  return (
    <span className="muted small locked-note" data-testid={testId}>
      Set by your organisation
    </span>
  );
}

// As the policy ranks them (crates/managed): "hosts" reaches listed names beyond this computer.
const RANK: Record<NetworkAccess, number> = { none: 0, loopback: 1, hosts: 2, any: 3 };

/** Whether a network choice is beyond what the organisation allows. */
export function beyondNetwork(view: ManagedView | null, choice: NetworkAccess): boolean {
  const most = view?.locks.networkAtMost;
  return most != null && RANK[choice] > RANK[most];
}

// The exact version Toolgate installed for an npx or uvx server, and a newer one offered only
// when the user asks the registry and taken only when the user clicks.
import { useState } from "react";
import { errorMessage, packageVersion, updatePackage, type PackageView, type ServerSnapshot } from "../ipc";

export default function InstalledVersion({ server }: { server: ServerSnapshot }) {
  const [checking, setChecking] = useState(false);
  const [offer, setOffer] = useState<PackageView | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const installed = server.installed;
  if (!installed) return null;
  const check = () => {
    setChecking(true);
    setProblem(null);
    setNotice(null);
    packageVersion(server.id)
      .then(
        (view) => {
          setOffer(view);
          if (view?.problem) setProblem(view.problem);
          else if (view && view.available === view.installed) setNotice("It runs the newest version.");
        },
        (e: unknown) => setProblem(errorMessage(e)),
      )
      .finally(() => setChecking(false));
  };
  const update = (version: string) => {
    setProblem(null);
    setNotice(`Installing ${version}…`);
    updatePackage(server.id, version).then(
      (now) => {
        setOffer(null);
        setNotice(`${server.name} now runs ${now}. If its tools changed, they are held until you accept them.`);
      },
      (e: unknown) => {
        setNotice(null);
        setProblem(errorMessage(e));
      },
    );
  };
  const newer = offer?.available && offer.available !== installed.version ? offer.available : null;
  return (
    <div className="small" data-testid="installed-version">
      <p className="muted row">
        Runs {installed.package} {installed.version} from {installed.registry}, installed by Toolgate and locked.
        <button type="button" data-testid="check-version" disabled={checking} onClick={check}>
          {checking ? "Asking the registry…" : "Check for a newer version"}
        </button>
      </p>
      {newer && (
        <p className="row" role="status">
          {newer} is available (it runs {installed.version}).
          <button type="button" data-testid="update-package" onClick={() => update(newer)}>
            Update to {newer}
          </button>
          <button type="button" data-testid="keep-package" onClick={() => setOffer(null)}>
            Keep {installed.version}
          </button>
        </p>
      )}
      {notice && <p role="status">{notice}</p>}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}

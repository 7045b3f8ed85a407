import { useEffect, useRef, useState } from "react";
import {
  clearApiKey,
  DEFAULT_BASE_URLS,
  DEFAULT_MODELS,
  errorMessage,
  listModelsFor,
  providerPresets,
  type PresetView,
  setApiKey,
  setProvider,
  type ProviderKind,
  type ProviderView,
} from "../ipc";
import { SCREEN_ICONS } from "../icons";
import { ScreenHeading } from "./WithIcon";

interface Props {
  provider: ProviderView;
  onChange: (view: ProviderView) => void;
}

export default function ProviderPanel({ provider, onChange }: Props) {
  const [kind, setKind] = useState<ProviderKind>(provider.kind);
  const [baseUrl, setBaseUrl] = useState(provider.baseUrl);
  const [model, setModel] = useState(provider.model);
  const [key, setKey] = useState("");
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [presets, setPresets] = useState<PresetView[]>([]);
  const [models, setModels] = useState<string[] | null>(null);
  const [listing, setListing] = useState(false);
  const urlField = useRef<HTMLInputElement>(null);

  useEffect(() => {
    providerPresets().then(
      (list) => setPresets(list ?? []),
      () => setPresets([]),
    );
  }, []);

  /** A model that belongs to no provider in particular: a format's default, or nothing. */
  const generic = (m: string) => m.trim() === "" || Object.values(DEFAULT_MODELS).includes(m.trim());

  const choosePreset = (id: string) => {
    setModels(null);
    setMessage(null);
    if (id === "") {
      // Custom: any OpenAI-compatible server, at an address the user types.
      setKind("openai");
      setBaseUrl("");
      if (generic(model)) setModel("");
      urlField.current?.focus();
      return;
    }
    const preset = presets.find((p) => p.id === id);
    if (!preset) return;
    setKind(preset.kind);
    setBaseUrl(preset.baseUrl);
    // The format's default model fits the format's own service; others name theirs (listed below).
    if (generic(model)) setModel(preset.baseUrl === DEFAULT_BASE_URLS[preset.kind] ? DEFAULT_MODELS[preset.kind] : "");
  };

  // Asks the provider the form describes, not the saved one: the list is for what will be saved.
  const loadModels = () => {
    setListing(true);
    setMessage(null);
    listModelsFor({ kind, baseUrl, model }).then(
      (list) => {
        setModels(list);
        setMessage({
          text: list.length
            ? `${list.length} ${list.length === 1 ? "model" : "models"} offered: pick one below, or type its name.`
            : "The provider lists no models; type the name.",
          error: false,
        });
      },
      (e) => {
        setModels(null);
        setMessage({ text: errorMessage(e), error: true });
      },
    ).finally(() => setListing(false));
  };

  const run = async (action: () => Promise<ProviderView>, done: string) => {
    try {
      onChange(await action());
      setMessage({ text: done, error: false });
    } catch (e) {
      setMessage({ text: errorMessage(e), error: true });
    }
  };

  const changeKind = (next: ProviderKind) => {
    // Switching format with the other format's default URL or model would only produce errors.
    if (baseUrl === DEFAULT_BASE_URLS[kind]) setBaseUrl(DEFAULT_BASE_URLS[next]);
    if (generic(model)) setModel(DEFAULT_MODELS[next]);
    setKind(next);
    setModels(null);
  };
  const custom = !presets.some((p) => p.baseUrl === baseUrl && p.kind === kind);

  return (
    <div className="panel narrow">
      <header className="screen-header">
        <ScreenHeading icon={SCREEN_ICONS.provider}>Model provider</ScreenHeading>
      </header>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          run(() => setProvider({ kind, baseUrl, model }), "Provider saved.");
        }}
      >
        {presets.length > 0 && (
          <>
            <label htmlFor="provider-preset">Start from a preset</label>
            <select
              id="provider-preset"
              value={presets.find((p) => p.baseUrl === baseUrl && p.kind === kind)?.id ?? ""}
              onChange={(e) => choosePreset(e.target.value)}
            >
              <option value="">Custom</option>
              {presets.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                  {p.needsKey ? "" : " (no key needed)"}
                </option>
              ))}
            </select>
          </>
        )}
        <label htmlFor="provider-kind">API format</label>
        <select id="provider-kind" value={kind} onChange={(e) => changeKind(e.target.value as ProviderKind)}>
          <option value="anthropic">Anthropic Messages</option>
          <option value="openai">OpenAI Chat Completions (or compatible: Ollama, LM Studio, vLLM…)</option>
        </select>
        <label htmlFor="provider-base-url">Base URL</label>
        <input
          id="provider-base-url"
          ref={urlField}
          value={baseUrl}
          onChange={(e) => setBaseUrl(e.target.value)}
          placeholder="The server's address, ending before /chat/completions"
          aria-describedby={custom ? "provider-custom-hint" : undefined}
          spellCheck={false}
        />
        {custom && presets.length > 0 && (
          <p id="provider-custom-hint" className="muted small" data-testid="provider-custom-hint">
            Custom: any server that speaks the chosen format. Type its address (for example, a local server
            is often http://localhost:&lt;port&gt;/v1), then list its models.
          </p>
        )}
        <label htmlFor="provider-model">Model</label>
        <div className="row">
          <input
            id="provider-model"
            list="provider-models"
            value={model}
            onChange={(e) => setModel(e.target.value)}
            placeholder="The model's name, or list them"
            spellCheck={false}
          />
          <button type="button" data-testid="load-models" onClick={loadModels} disabled={listing || !baseUrl.trim()}>
            {listing ? "Listing…" : "List the provider's models"}
          </button>
        </div>
        {models && (
          <datalist id="provider-models">
            {models.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        )}
        {models && models.length > 0 && (
          <ul className="plain model-list provider-model-list" aria-label="Models offered" data-testid="provider-models">
            {models.map((m) => (
              <li key={m}>
                <button type="button" className="link" aria-pressed={m === model} onClick={() => setModel(m)}>
                  {m}
                </button>
              </li>
            ))}
          </ul>
        )}
        <button id="provider-save" type="submit">
          Save provider
        </button>
      </form>

      <h3>API key</h3>
      <p id="key-status" className={provider.keySet ? "ok" : "muted"}>
        {provider.keyError
          ? `Keychain problem: ${provider.keyError}`
          : provider.keySet
            ? `Key set ${provider.keyHint ?? ""} (${
                provider.keySource === "environment"
                  ? `from the environment variable ${provider.keyEnvVar}`
                  : "stored in the OS keychain"
              })`
            : provider.keyNeeded
              ? `No key set. Save one below, or set ${provider.keyEnvVar} before starting Toolgate.`
              : "No key needed: this is a local or custom endpoint. Save one only if it asks for one."}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          run(() => setApiKey(key), "Key saved to the keychain.").then(() => setKey(""));
        }}
      >
        <label htmlFor="api-key">New key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          value={key}
          onChange={(e) => setKey(e.target.value)}
          placeholder="Paste your API key"
        />
        <div className="row">
          <button id="api-key-save" type="submit" disabled={!key.trim()}>
            Save key
          </button>
          <button
            id="api-key-clear"
            type="button"
            disabled={!provider.keySet || provider.keySource !== "keychain"}
            onClick={() => run(clearApiKey, "Key removed from the keychain.")}
          >
            Clear key
          </button>
        </div>
      </form>
      {message && (
        <p role="status" className={message.error ? "error" : "ok"}>
          {message.text}
        </p>
      )}
    </div>
  );
}

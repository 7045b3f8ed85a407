// Fields generated from a JSON schema, kept in step with a JSON text the user can also edit.
// The JSON text is what is sent: the fields only read it and write it. Schemas the fields cannot
// show faithfully (nested objects, arrays of anything but strings, `$ref`, combinators) get no
// fields at all, and are typed as JSON only.
import { useId, useState } from "react";

type Json = unknown;

/** One of a field's allowed values, with what to call it. */
export interface Choice {
  value: Json;
  label: string;
}

interface Common {
  name: string;
  /** The schema's title, when it has one. */
  title: string | null;
  description: string | null;
  required: boolean;
}

export type Field = Common &
  (
    | { kind: "text"; format: string | null }
    | { kind: "number"; integer: boolean; minimum: number | null; maximum: number | null }
    | { kind: "boolean" }
    | { kind: "choice"; choices: Choice[] }
    /** An array of free strings. */
    | { kind: "list" }
    /** An array of strings from a set of choices. */
    | { kind: "multi"; choices: Choice[] }
  );

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);
const isPrimitive = (v: unknown) => typeof v === "string" || typeof v === "number" || typeof v === "boolean";
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Keywords that make an object more than a flat list of fields. */
const COMPLEX = ["$ref", "anyOf", "oneOf", "allOf", "not", "if", "patternProperties", "dependentSchemas"];

/** The single type a schema names (`["string", "null"]` counts as "string"), or null. */
function typeOf(schema: Schema): string | null {
  const type = schema.type;
  if (typeof type === "string") return type;
  if (Array.isArray(type)) {
    const real = type.filter((t) => t !== "null");
    if (real.length === 1 && typeof real[0] === "string") return real[0];
  }
  return null;
}

/** A schema's allowed values: `enum` (with the legacy `enumNames`), or `oneOf`/`anyOf` of `const`s. */
function choicesOf(schema: Schema): Choice[] | null {
  if (Array.isArray(schema.enum)) {
    if (schema.enum.length === 0 || !schema.enum.every(isPrimitive)) return null;
    const names = schema.enumNames;
    const named = Array.isArray(names) && names.length === schema.enum.length && names.every((n) => typeof n === "string");
    return schema.enum.map((value, i) => ({ value, label: named ? (names[i] as string) : String(value) }));
  }
  const options = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
  if (!options || options.length === 0) return null;
  if (!options.every((o) => isObject(o) && "const" in o && isPrimitive(o.const))) return null;
  return (options as Schema[]).map((o) => ({
    value: o.const,
    label: typeof o.title === "string" && o.title ? o.title : String(o.const),
  }));
}

function fieldOf(name: string, schema: unknown, required: boolean): Field | null {
  if (!isObject(schema)) return null;
  const common: Common = {
    name,
    title: typeof schema.title === "string" && schema.title.trim() ? schema.title : null,
    description: typeof schema.description === "string" && schema.description.trim() ? schema.description : null,
    required,
  };
  const type = typeOf(schema);
  if (schema.type !== undefined && type === null) return null;
  if (type === "array") {
    const items = schema.items;
    if (!isObject(items)) return null;
    const choices = choicesOf(items);
    if (choices && choices.every((c) => typeof c.value === "string")) return { ...common, kind: "multi", choices };
    if (!choices && typeOf(items) === "string" && !COMPLEX.some((k) => k in items)) return { ...common, kind: "list" };
    return null;
  }
  const choices = choicesOf(schema);
  if (choices) {
    if (type !== null && !["string", "number", "integer", "boolean"].includes(type)) return null;
    return { ...common, kind: "choice", choices };
  }
  if (COMPLEX.some((k) => k in schema)) return null;
  switch (type) {
    case "string":
      return { ...common, kind: "text", format: typeof schema.format === "string" ? schema.format : null };
    case "number":
    case "integer":
      return {
        ...common,
        kind: "number",
        integer: type === "integer",
        minimum: typeof schema.minimum === "number" ? schema.minimum : null,
        maximum: typeof schema.maximum === "number" ? schema.maximum : null,
      };
    case "boolean":
      return { ...common, kind: "boolean" };
    default:
      return null;
  }
}

/**
 * The fields of an object schema whose properties are all flat (strings, numbers, booleans,
 * choices, lists of strings); `[]` when it has no properties; null when it is anything else
 * and must be typed as JSON.
 */
export function formFields(schema: unknown): Field[] | null {
  if (!isObject(schema)) return null;
  if (schema.type !== undefined && schema.type !== "object") return null;
  if (COMPLEX.some((k) => k in schema)) return null;
  const properties = schema.properties ?? {};
  if (!isObject(properties)) return null;
  const required = Array.isArray(schema.required) ? schema.required : [];
  const fields: Field[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const field = fieldOf(name, property, required.includes(name));
    if (!field) return null;
    fields.push(field);
  }
  return fields;
}

/** A value to start a property with: its default, its first example, or an empty one. */
export function exampleValue(schema: unknown): Json {
  if (!isObject(schema)) return "";
  if ("default" in schema) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  const choices = choicesOf(schema);
  if (choices) return choices[0].value;
  switch (typeOf(schema)) {
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return false;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "";
  }
}

/** The JSON text as an object, or null when it is not one (yet). */
export function parseObject(text: string): Record<string, Json> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

/** The field's name for people: its title with its JSON name, or the name alone. */
function FieldName({ field }: { field: Field }) {
  return (
    <>
      {field.title ?? field.name}
      {field.title && field.title.toLowerCase() !== field.name.toLowerCase() && (
        <>
          {" "}
          <code className="muted small">{field.name}</code>
        </>
      )}
      {field.required && <span className="muted small"> (required)</span>}
    </>
  );
}

interface FieldProps {
  field: Field;
  id: string;
  value: Json;
  onChange: (value: Json) => void;
}

/**
 * A text box whose text is not the value itself (a number, a list): what the user typed stays
 * as typed while the JSON still holds the value it was typed for (with the problem it has, if
 * any); once the JSON changes from elsewhere, the box shows the new value.
 */
function useDraft(value: Json, format: (value: Json) => string) {
  const [draft, setDraft] = useState<{ text: string; base: Json; problem: string | null } | null>(null);
  const current = draft && same(draft.base, value) ? draft : null;
  return { shown: current ? current.text : format(value), problem: current?.problem ?? null, setDraft };
}

const formatNumber = (value: Json) => (value === undefined || value === null ? "" : String(value));
const formatList = (value: Json) =>
  Array.isArray(value) ? value.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join("\n") : "";

function NumberField({ field, id, value, onChange, describedBy }: FieldProps & { describedBy?: string }) {
  const { shown, problem, setDraft } = useDraft(value, formatNumber);
  const integer = field.kind === "number" && field.integer;
  const problemId = `${id}-problem`;
  return (
    <>
      <input
        id={id}
        type="text"
        inputMode={integer ? "numeric" : "decimal"}
        value={shown}
        aria-required={field.required}
        aria-invalid={problem !== null}
        aria-describedby={[describedBy, problem ? problemId : null].filter(Boolean).join(" ") || undefined}
        onChange={(e) => {
          const text = e.target.value;
          const trimmed = text.trim();
          const number = Number(trimmed);
          if (trimmed === "") {
            setDraft({ text, base: undefined, problem: null });
            onChange(undefined);
          } else if (!Number.isFinite(number) || (integer && !Number.isInteger(number))) {
            const problem = `Not a${integer ? " whole" : ""} number; the JSON keeps ${value === undefined ? "no value" : formatNumber(value)}.`;
            setDraft({ text, base: value, problem });
          } else {
            setDraft({ text, base: number, problem: null });
            onChange(number);
          }
        }}
      />
      {problem && (
        <span id={problemId} className="error small">
          {problem}
        </span>
      )}
    </>
  );
}

function ListField({ field, id, value, onChange, describedBy }: FieldProps & { describedBy?: string }) {
  const { shown, setDraft } = useDraft(value, formatList);
  return (
    <textarea
      id={id}
      rows={3}
      value={shown}
      aria-required={field.required}
      aria-describedby={describedBy}
      onChange={(e) => {
        const text = e.target.value;
        const list = text
          .split("\n")
          .map((line) => line.trim())
          .filter(Boolean);
        const next = list.length > 0 ? list : undefined;
        setDraft({ text, base: next, problem: null });
        onChange(next);
      }}
    />
  );
}

const INPUT_TYPES: Record<string, string> = { email: "email", uri: "url", url: "url", date: "date" };

function FieldInput({ field, id, value, onChange }: FieldProps) {
  const helpId = field.description ? `${id}-help` : undefined;
  const help = field.description && (
    <span id={helpId} className="muted small field-help">
      {field.description}
    </span>
  );
  switch (field.kind) {
    case "boolean":
      return (
        <div className="field">
          <label className="row small check">
            <input
              id={id}
              type="checkbox"
              checked={value === true}
              aria-describedby={helpId}
              onChange={(e) => onChange(e.target.checked)}
            />
            <FieldName field={field} />
          </label>
          {help}
        </div>
      );
    case "multi": {
      const chosen = Array.isArray(value) ? value : [];
      return (
        <fieldset className="field choices" aria-describedby={helpId}>
          <legend>
            <FieldName field={field} />
          </legend>
          {help}
          {field.choices.map((choice, i) => (
            <label key={i} className="row small check">
              <input
                type="checkbox"
                checked={chosen.some((v) => same(v, choice.value))}
                onChange={(e) => {
                  const next = field.choices
                    .filter((c) => (c === choice ? e.target.checked : chosen.some((v) => same(v, c.value))))
                    .map((c) => c.value);
                  onChange(next.length > 0 ? next : undefined);
                }}
              />
              {choice.label}
            </label>
          ))}
        </fieldset>
      );
    }
    default:
      break;
  }
  let control;
  switch (field.kind) {
    case "text":
      control = (
        <input
          id={id}
          type={(field.format && INPUT_TYPES[field.format]) || "text"}
          value={typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value)}
          aria-required={field.required}
          aria-describedby={helpId}
          onChange={(e) => onChange(e.target.value === "" ? undefined : e.target.value)}
        />
      );
      break;
    case "number":
      control = <NumberField field={field} id={id} value={value} onChange={onChange} describedBy={helpId} />;
      break;
    case "list":
      control = <ListField field={field} id={id} value={value} onChange={onChange} describedBy={helpId} />;
      break;
    case "choice": {
      const at = value === undefined ? -1 : field.choices.findIndex((c) => same(c.value, value));
      control = (
        <select
          id={id}
          value={value === undefined ? "" : at >= 0 ? String(at) : "other"}
          aria-required={field.required}
          aria-describedby={helpId}
          onChange={(e) => {
            const i = e.target.value;
            if (i === "") onChange(undefined);
            else if (i !== "other") onChange(field.choices[Number(i)].value);
          }}
        >
          <option value="">(not set)</option>
          {field.choices.map((c, i) => (
            <option key={i} value={String(i)}>
              {c.label}
            </option>
          ))}
          {value !== undefined && at < 0 && <option value="other">{JSON.stringify(value)} (not one of the choices)</option>}
        </select>
      );
      break;
    }
  }
  return (
    <div className="field">
      <label htmlFor={id}>
        <FieldName field={field} />
        {field.kind === "list" && <span className="muted small"> (one per line)</span>}
      </label>
      {help}
      {control}
    </div>
  );
}

/**
 * The fields of a schema, reading and writing `text` (JSON). Fields left empty are left out of
 * the JSON. While the text is not a JSON object the fields are switched off.
 */
export function SchemaForm({
  fields,
  text,
  onText,
  legend,
}: {
  fields: Field[];
  text: string;
  onText: (text: string) => void;
  legend: string;
}) {
  const base = useId();
  const values = parseObject(text);
  const set = (name: string, value: Json) => {
    const next: Record<string, Json> = { ...(values ?? {}) };
    if (value === undefined) delete next[name];
    else next[name] = value;
    onText(JSON.stringify(next, null, 2));
  };
  return (
    <fieldset className="schema-form" disabled={values === null} data-testid="schema-form">
      <legend>{legend}</legend>
      {values === null && (
        <p className="muted small" role="status">
          The JSON below is not an object; fix it to use these fields again.
        </p>
      )}
      {fields.map((field, i) => (
        <FieldInput
          key={field.name}
          field={field}
          id={`${base}-f${i}`}
          value={values?.[field.name]}
          onChange={(value) => set(field.name, value)}
        />
      ))}
    </fieldset>
  );
}

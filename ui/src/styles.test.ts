// The light and dark themes: every colour in styles.css is a variable that both themes set, and
// each text/background pair the UI uses has WCAG contrast (4.5:1 for text, 3:1 for borders and
// the focus ring that carry meaning). Then rules of layout read from the same file: boxes that
// scroll keep clear of the scroll bar, Diagnostics scrolls only with its page, monospace is for code.
import { describe, expect, it } from "vitest";
import css from "./styles.css?raw";
import diagnosticsSource from "./components/Diagnostics.tsx?raw";
import { withStyles } from "./testing";

type Theme = Record<string, string>;

function variables(block: string): Theme {
  const theme: Theme = {};
  for (const [, name, value] of block.matchAll(/--([\w-]+):\s*([^;]+);/g)) theme[name] = value.trim();
  return theme;
}

const DARK_QUERY = ':root[data-theme="dark"] {';
const lightBlock = css.slice(css.indexOf(":root {"), css.indexOf(DARK_QUERY));
const darkStart = css.indexOf(DARK_QUERY);
const darkBlock = css.slice(darkStart, css.indexOf("\n}\n", darkStart) + 2);
const rest = css.replace(lightBlock, "").replace(darkBlock, "");
/** Every innermost rule outside the themes: its selectors (one per comma) and its declarations. */
const uncommented = rest.replace(/\/\*[\s\S]*?\*\//g, "");
const rules = [...uncommented.matchAll(/([^{}]+)\{([^{}]*)\}/g)].map(([, selectors, body]) => ({
  selectors: selectors.split(",").map((s) => s.trim()),
  body,
}));
const ruleFor = (selector: string) => rules.find((r) => r.selectors.includes(selector))?.body ?? "";

const themes: [string, Theme][] = [
  ["light", variables(lightBlock)],
  ["dark", variables(darkBlock)],
];

function luminance(hex: string): number {
  const value = hex.replace("#", "");
  const full = value.length === 3 ? [...value].map((c) => c + c).join("") : value;
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(full.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

// [foreground, backgrounds it is drawn on, minimum ratio]
const TEXT = 4.5;
const EDGE = 3;
const PAIRS: [string, string[], number][] = [
  ["text", ["bg", "surface", "code-bg", "badge-bg", "user-bg", "selected-bg"], TEXT],
  ["muted", ["bg", "surface", "code-bg"], TEXT],
  ["link", ["bg", "surface", "code-bg", "selected-bg"], TEXT],
  ["selected-text", ["selected-bg"], TEXT],
  ["primary-text", ["primary-bg"], TEXT],
  ["ok", ["ok-bg", "surface", "bg"], TEXT],
  ["danger", ["danger-bg", "surface", "bg"], TEXT],
  ["warn", ["warn-bg"], TEXT],
  ["focus", ["bg", "surface"], EDGE],
  ["control-border", ["bg", "surface"], EDGE],
  ["attention", ["bg", "surface"], EDGE],
];

describe("themes", () => {
  it("have a dark set for the dark look, and every colour comes from the theme", () => {
    expect(css).toContain("color-scheme: light dark");
    expect(darkStart).toBeGreaterThan(0);
    // No colour is written outside the two sets of variables, so none is left out of a theme.
    expect(rest.match(/#[0-9a-f]{3,8}\b|rgba?\(|hsla?\(/gi)).toBeNull();
    const [light, dark] = themes.map(([, t]) => t);
    expect(Object.keys(dark).sort()).toEqual(Object.keys(light).sort());
    for (const used of rest.matchAll(/var\(--([\w-]+)\)/g)) expect(Object.keys(light)).toContain(used[1]);
  });

  it("shows where the keyboard is", () => {
    // One rule for everything focusable (tabs, buttons, fields, a result's summary), in the
    // focus colour that the contrast checks below cover; nothing turns the outline off.
    expect(rest).toMatch(/(^|\n):focus-visible \{ outline: 2px solid var\(--focus\);/);
    expect(rest).not.toMatch(/outline:\s*(none|0)/);
  });

  it("keeps the cards in scrolling boxes clear of the scroll bar", () => {
    // GTK draws overlay scroll bars over the content: a box that scrolls cards keeps a right
    // padding at least as wide as the bar, or the cards' right borders disappear under it.
    for (const box of [".messages", ".server-requests", ".server-detail", ".settings-section"]) {
      const rule = rest.match(new RegExp(`\\n\\${box} \\{([^}]*)\\}`))?.[1] ?? "";
      expect(rule, box).toMatch(/overflow(-y)?: auto/);
      const right = rule.match(/padding(-right)?: ([^;]+);/)?.[2]?.trim().split(/\s+/) ?? [];
      const px = right.length === 1 ? right[0] : right.length >= 2 ? right[1] : "0";
      expect(parseInt(px, 10), `${box}: ${rule}`).toBeGreaterThanOrEqual(12);
    }
  });

  it("keeps monospace for code: a button that looks like a link is in the UI's font", () => {
    const unstyle = withStyles();
    document.body.innerHTML = `
      <p class="small"><button class="link" id="prose">Add servers from a JSON snippet</button></p>
      <ul class="tools"><li><button class="link" id="tool">write_file</button></li></ul>
      <p><code id="code">npx -y server</code></p>`;
    const font = (id: string) => getComputedStyle(document.getElementById(id) as HTMLElement).fontFamily;
    expect(font("prose")).not.toMatch(/monospace/);
    expect(font("tool")).toMatch(/monospace/);
    expect(font("code")).toMatch(/monospace/);
    document.body.innerHTML = "";
    unstyle();
  });

  it("gives Diagnostics no scroll box of its own inside the scrolling page", () => {
    // The classes Diagnostics renders with, read from its source, so a new one is checked too.
    const used = new Set<string>();
    for (const [, literal, expression] of diagnosticsSource.matchAll(/className=(?:"([^"]*)"|\{([^}]*)\})/g)) {
      const names = literal ?? [...(expression ?? "").matchAll(/"([^"]*)"/g)].map((m) => m[1]).join(" ");
      for (const name of names.split(/\s+/)) if (name) used.add(name);
    }
    // Its own boxes: whatever sits inside them is part of Diagnostics too.
    const own = ["diagnostics", "checks", "facts"];
    for (const name of own) expect(used, name).toContain(name);

    const scrolls = /(^|;)\s*(overflow|overflow-y)\s*:\s*(auto|scroll)|max-height\s*:/;
    const offending: string[] = [];
    for (const { selectors, body } of rules) {
      for (const selector of selectors) {
        const compounds = selector.split(/\s*[\s>+~]\s*/).filter(Boolean);
        const classes = (compound: string) => [...compound.matchAll(/\.([\w-]+)/g)].map((m) => m[1]);
        const subject = classes(compounds.at(-1) ?? "");
        const inside = compounds.flatMap(classes).some((c) => own.includes(c));
        if ((inside || subject.some((c) => used.has(c))) && scrolls.test(body)) {
          offending.push(`${selector} { ${body.trim()} }`);
        }
      }
    }
    // A log's pre may scroll sideways (overflow-x), never up and down inside the page.
    expect(offending).toEqual([]);

    // Long values wrap instead of making the page scroll sideways (the PATH, the folders).
    expect(ruleFor(".checks li")).toMatch(/overflow-wrap: anywhere/);
    expect(ruleFor(".facts dd")).toMatch(/overflow-wrap: anywhere/);
    // The page that scrolls is the settings section: the screen is exactly main's height, so
    // main (overflow: auto) never scrolls around it.
    expect(ruleFor("main")).toMatch(/overflow: auto/);
    expect(ruleFor("main > section")).toMatch(/height: 100%/);
    expect(ruleFor(".settings-screen")).toMatch(/height: 100%;.*box-sizing: border-box/);
    expect(ruleFor(".settings-section")).toMatch(/overflow: auto/);
  });

  for (const [name, theme] of themes) {
    it(`has readable contrast in the ${name} theme`, () => {
      const failures: string[] = [];
      for (const [fg, bgs, min] of PAIRS) {
        for (const bg of bgs) {
          expect(theme[fg], fg).toMatch(/^#[0-9a-f]{6}$/i);
          expect(theme[bg], bg).toMatch(/^#[0-9a-f]{6}$/i);
          const ratio = contrast(theme[fg], theme[bg]);
          if (ratio < min) failures.push(`${fg} on ${bg}: ${ratio.toFixed(2)} < ${min}`);
        }
      }
      expect(failures).toEqual([]);
    });
  }
});

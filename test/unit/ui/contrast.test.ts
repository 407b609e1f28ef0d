import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * The UI's colours meet WCAG AA for text (4.5:1) in every rule of `styles.css` that sets a text
 * colour: against the rule's own background, else the nearest ancestor rule's (`.topbar nav a` and
 * `.topbar-note` on `.topbar`'s), else the panel's. The browser tests' axe check sees a colour only
 * when a page shows it (a "waiting" badge only while an update is queued), so this reads the
 * stylesheet itself.
 */
const css = readFileSync(new URL("../../../ui/src/styles.css", import.meta.url), "utf8");

const variables = new Map(
  [...css.matchAll(/--([\w-]+):\s*(#[0-9a-f]{6})\s*;/gi)].map((m) => [m[1]!, m[2]!.toLowerCase()]),
);
const hex = (value: string | undefined): string | undefined => {
  const named = /^var\(--([\w-]+)\)$/.exec(value?.trim() ?? "");
  const resolved = named ? variables.get(named[1]!) : value?.trim();
  return resolved && /^#[0-9a-f]{6}$/i.test(resolved) ? resolved.toLowerCase() : undefined;
};

/** WCAG 2's relative luminance and contrast ratio. */
const luminance = (colour: string): number => {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(colour.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
};
const contrast = (a: string, b: string): number => {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light! + 0.05) / (dark! + 0.05);
};

const rules = [...css.matchAll(/([^{}]+)\{([^{}]*)\}/g)].map((m) => {
  const declarations = new Map(
    m[2]!
      .split(";")
      .map((d) => d.split(":").map((s) => s.trim()))
      .filter((d): d is [string, string] => d.length === 2),
  );
  return {
    selector: m[1]!.trim(),
    color: hex(declarations.get("color")),
    background: hex(declarations.get("background") ?? declarations.get("background-color")),
  };
});

describe("the UI's text colours", () => {
  it("reads the stylesheet's colours", () => {
    expect(variables.get("panel")).toBe("#ffffff");
    expect(rules.filter((r) => r.color).length).toBeGreaterThan(20);
  });

  it("meet 4.5:1 against their background", () => {
    const panel = variables.get("panel")!;
    const backgrounds = new Map(rules.filter((r) => r.background).map((r) => [r.selector, r.background!]));
    const backgroundOf = (selector: string): string => {
      const parts = selector.split(/\s+/);
      for (let n = parts.length; n > 0; n--) {
        const found = backgrounds.get(parts.slice(0, n).join(" "));
        if (found) return found;
      }
      // A block's element class (`.topbar-note`) sits in the block (`.topbar`).
      const block = /^(\.[a-z]+)-[\w-]+$/.exec(parts[0]!);
      return (block && backgrounds.get(block[1]!)) ?? panel;
    };
    const failing = rules
      .filter((r) => r.color && !r.selector.startsWith("@"))
      .map((r) => ({ ...r, background: backgroundOf(r.selector) }))
      .map((r) => ({ ...r, ratio: contrast(r.color!, r.background) }))
      .filter((r) => r.ratio < 4.5)
      .map((r) => `${r.selector}: ${r.color} on ${r.background} is ${r.ratio.toFixed(2)}:1`);
    expect(failing).toEqual([]);
  });
});

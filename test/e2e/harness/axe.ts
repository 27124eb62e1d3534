/**
 * The accessibility gate: axe-core (the installed devDependency) run inside the real page on each
 * screen, at 800×600 and 1600×1000, light and dark. Any violation, of any impact, fails the test
 * with the rule, the elements and axe's own summary.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import { ROOT, SCREENSHOT_DIR } from './harness.js';

const AXE_SOURCE = fs.readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
export const SCREEN_SIZES = [
  { width: 800, height: 600 },
  { width: 1600, height: 1000 },
] as const;

interface Violation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly unknown[]; readonly failureSummary?: string }[];
}

/** axe's violations on the page as it is now. Injected through the debugger, so the page's CSP (no inline script) stays as it is. */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: unknown): Promise<{ violations: Violation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }));
  });
  return violations.flatMap((v) => v.nodes.map((node) => `${v.id} (${v.impact ?? 'no impact'}): ${v.help} at ${JSON.stringify(node.target)}: ${node.failureSummary ?? ''}`));
}

/**
 * Saves the screen as `NAME-WIDTHxHEIGHT-SCHEME.png` at both sizes in both schemes and asserts axe finds
 * nothing in any of them; leaves the page at its size and scheme.
 */
export async function auditScreen(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const size = page.viewportSize();
  const dark = await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches);
  const found: string[] = [];
  for (const viewport of SCREEN_SIZES) {
    await page.setViewportSize(viewport);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      // Transitions settle before colours are measured.
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${viewport.width}x${viewport.height}-${scheme}.png`) });
      found.push(...(await axeViolations(page)).map((line) => `${viewport.width}x${viewport.height} ${scheme}: ${line}`));
    }
  }
  if (size !== null) await page.setViewportSize(size);
  await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
  expect(found.join('\n'), `axe on screen ${name}`).toBe('');
}

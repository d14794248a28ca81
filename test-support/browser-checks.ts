import AxeBuilder from '@axe-core/playwright';
import type { Locator, Page } from '@playwright/test';

import { expect } from './browser-fixtures';

/**
 * axe's serious and critical findings on the page as it is now (WCAG 2.1 A/AA and best practice); with
 * `within` (CSS selectors), in those parts only: a widget's states without a whole-page scan each (a few
 * seconds on a busy machine), where another test covers the page around it.
 */
export async function seriousViolations(page: Page, within: string[] = []) {
  const builder = new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']);
  for (const selector of within) builder.include(selector);
  const results = await builder.analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.map((node) => node.target.join(' ')) }));
}

/** Every element of `locator` lies fully within the page's width (a sideways scroll would be needed otherwise). */
export async function expectWithinWidth(locator: Locator, width: number): Promise<void> {
  const boxes = await locator.evaluateAll((elements) =>
    elements.map((element) => {
      const box = element.getBoundingClientRect();
      return { left: box.left + window.scrollX, right: box.right + window.scrollX, label: element.getAttribute('aria-label') ?? element.textContent };
    }),
  );
  expect(boxes.length).toBeGreaterThan(0);
  for (const box of boxes) {
    expect(box.left, `${box.label} starts on the page`).toBeGreaterThanOrEqual(0);
    expect(box.right, `${box.label} ends within ${width} px`).toBeLessThanOrEqual(width);
  }
}

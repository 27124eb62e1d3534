/** Renders React into happy-dom's document with act(), and finds elements the way a person would. */
import { act, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

export interface Rendered {
  readonly container: HTMLElement;
  rerender(node: ReactNode): Promise<void>;
  unmount(): Promise<void>;
}

export async function render(node: ReactNode): Promise<Rendered> {
  const container = document.createElement('div');
  document.body.appendChild(container);
  let root: Root | undefined;
  await act(async () => {
    root = createRoot(container);
    root.render(node);
  });
  return {
    container,
    rerender: (next) => act(async () => root!.render(next)),
    unmount: async () => {
      await act(async () => root!.unmount());
      container.remove();
    },
  };
}

export function buttons(container: HTMLElement): HTMLButtonElement[] {
  return [...container.querySelectorAll('button')];
}

export function button(container: HTMLElement, name: string): HTMLButtonElement {
  const found = buttons(container).find((candidate) => candidate.textContent?.trim() === name);
  if (found === undefined) throw new Error(`no button "${name}"; buttons: ${buttons(container).map((b) => JSON.stringify(b.textContent)).join(', ')}`);
  return found;
}

export async function click(element: HTMLElement): Promise<void> {
  await act(async () => {
    element.click();
  });
}

/** Sets a field's value as typing does (React hears the input event). */
export async function typeInto(field: HTMLInputElement | HTMLTextAreaElement, value: string): Promise<void> {
  await act(async () => {
    const prototype = field instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(prototype, 'value')!.set!.call(field, value);
    field.dispatchEvent(new Event('input', { bubbles: true }));
  });
}

/** Waits (bounded) for a condition that React effects and real I/O settle. */
export async function settle(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
    });
    if (check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

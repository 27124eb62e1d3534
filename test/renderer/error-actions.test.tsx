// @vitest-environment happy-dom
/** Issue 31: an error the desktop shows offers the place to go, as a button, never a terminal command. */
import { describe, expect, it } from 'vitest';
import { ON_CONNECTIONS } from '../../common/desktop-errors.js';
import { DismissibleError, PageNotice } from '../../renderer/src/components/PageNotice.js';
import { button, buttons, click, render } from './render.js';

describe('error banners with a way out (issue 31)', () => {
  it('test_an_error_naming_the_connections_page_has_a_button_that_opens_it_and_others_have_none', async () => {
    const asked: unknown[] = [];
    const listener = (event: Event) => asked.push((event as CustomEvent).detail);
    window.addEventListener('ward:open-page', listener);
    const text = `Tool drift/shout is turned off: turn it on under drift's tools ${ON_CONNECTIONS}.`;
    const view = await render(<PageNotice notice={{ tone: 'error', text }} />);
    await click(button(view.container, 'Open Connections'));
    expect(asked).toEqual(['connections']);
    await view.rerender(<DismissibleError text={text} onDismiss={() => undefined} />);
    expect(buttons(view.container).map((b) => b.textContent)).toEqual(['Open Connections', 'Dismiss']);
    await view.rerender(<DismissibleError text="the journal fails verification" onDismiss={() => undefined} />);
    expect(buttons(view.container).map((b) => b.textContent)).toEqual(['Dismiss']);
    await view.unmount();
    window.removeEventListener('ward:open-page', listener);
  });
});

/** What the window asks main to do outside any page: open a link, open a bundle for review, answer a server's request for input. */
import { useCallback } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { ElicitationAction, ElicitationFieldValue } from '../../../common/views.js';
import { unwrap } from '../api.js';
import type { Fail } from './use-window-error.js';

export type AnswerElicitation = (elicitationId: string, action: ElicitationAction, content?: Record<string, ElicitationFieldValue>) => Promise<unknown>;

export function useWindowActions(api: WardApi, namespace: string, fail: Fail) {
  const openLink = useCallback((url: string) => void unwrap(api.links.openExternal({ url })).catch(fail), [api, fail]);
  // The bundle opens in a review window of its own (main shows the file dialog and the window).
  const openBundle = useCallback(() => void unwrap(api.review.open({})).catch(fail), [api, fail]);
  const answerElicitation = useCallback<AnswerElicitation>(
    (elicitationId, action, content) => unwrap(api.elicitations.answer({ namespace, elicitationId, action, ...(content === undefined ? {} : { content }) })),
    [api, namespace],
  );
  return { openLink, openBundle, answerElicitation };
}

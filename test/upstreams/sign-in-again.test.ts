/**
 * A connection that lost its sign-in fails its tool calls with a sentence the chat shows as is:
 * it must say where a desktop user signs in again, not only a terminal command (issue 31).
 */
import { UnauthorizedError } from '@modelcontextprotocol/client';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { describe, expect, it } from 'vitest';
import { classifyUpstreamError } from '../../main/upstreams/errors.js';

describe('a tool call of a connection that is no longer signed in', () => {
  it('test_names_the_desktops_connections_page_as_well_as_the_terminal_command', () => {
    for (const thrown of [new UnauthorizedError('401'), new OAuthError('invalid_grant', 'revoked')]) {
      const error = classifyUpstreamError(thrown);
      expect(error.code).toBe('not_signed_in');
      expect(error.message).toMatch(/sign in on the desktop's Connections page, or with "ward connections login"\)$/);
    }
  });
});

/** RFC 8414 §3.3 as Ward applies it: an issuer named by the resource metadata is held to; a 2025-03-26 server's own origin is not an issuer. */
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { describe, expect, it } from 'vitest';
import { checkMetadataIssuer } from '../../main/connections/issuer.js';

const metadata = (issuer: string) => ({ issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'] });

describe('the issuer of authorization server metadata', () => {
  it('test_metadata_naming_another_issuer_than_the_resource_metadata_named_is_refused_and_a_2025_03_26_servers_own_origin_is_not_held_to_it', () => {
    const named: OAuthDiscoveryState = {
      authorizationServerUrl: 'https://auth.example.com',
      resourceMetadata: { resource: 'https://mcp.example.com/mcp', authorization_servers: ['https://auth.example.com'] },
      authorizationServerMetadata: metadata('https://attacker.example.com'),
    };
    expect(() => checkMetadataIssuer(named)).toThrow('the authorization server\'s metadata names issuer "https://attacker.example.com" but was fetched for "https://auth.example.com"; sign-in refused');
    expect(() => checkMetadataIssuer({ ...named, authorizationServerMetadata: metadata('https://auth.example.com/') })).not.toThrow();
    // 2025-03-26: no resource metadata, the metadata is looked up at the server's origin.
    expect(() => checkMetadataIssuer({ authorizationServerUrl: 'http://localhost:4000/', authorizationServerMetadata: metadata('http://localhost:4000/oauth') })).not.toThrow();
  });
});

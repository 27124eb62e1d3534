/**
 * The names a sandboxed CLI's environment may hold on Linux, written out here rather than taken
 * from the code under test: a test that compares /proc/PID/environ against this list fails when
 * Ward starts passing anything more.
 */
export const CLI_ENV_NAMES: ReadonlySet<string> = new Set([
  // Ward's allowlist: inherited names, the quiet switches, the model access and the CLI's config folder.
  'PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR',
  'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC', 'DISABLE_AUTOUPDATER', 'DISABLE_TELEMETRY', 'DISABLE_ERROR_REPORTING',
  'ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CONFIG_DIR',
  // The sandbox runtime's proxy settings (a per-process proxy password, not a Ward secret).
  'SANDBOX_RUNTIME', 'HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy',
  'GRPC_PROXY', 'grpc_proxy', 'FTP_PROXY', 'ftp_proxy', 'RSYNC_PROXY', 'DOCKER_HTTP_PROXY', 'DOCKER_HTTPS_PROXY',
  'GIT_CONFIG_PARAMETERS', 'GIT_SSH_COMMAND', 'CLOUDSDK_PROXY_TYPE', 'CLOUDSDK_PROXY_ADDRESS', 'CLOUDSDK_PROXY_PORT',
  'CLOUDSDK_PROXY_USERNAME', 'CLOUDSDK_PROXY_PASSWORD', 'JAVA_TOOL_OPTIONS',
  'CLAUDE_CODE_HOST_HTTP_PROXY_PORT', 'CLAUDE_CODE_HOST_SOCKS_PROXY_PORT',
  // What the shell the runtime starts the command from sets.
  'PWD', 'SHLVL', '_',
]);

/** Model output written to attack whatever shows it: markup, script, event handlers, script and data links. */
export const HOSTILE = [
  'Here is an image: <img src=x onerror="window.__pwned = 1">',
  '',
  '<script>window.__pwned = 2</script><b>raw bold</b> <iframe src="https://example.com"></iframe>',
  '',
  '[click me](javascript:window.__pwned=3) and [data](data:text/html,<script>window.__pwned=4</script>) and [docs](https://example.com/docs)',
  '',
  'Plain **bold** and `code`.',
].join('\n');

import { EXIT, WardError } from '../../base/errors.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

/** `ward service status|stop|run`: the background service `ward run` uses (issue 29). */
export const serviceCommand: Command = {
  name: 'service',
  usage: 'ward service status|stop [--json]',
  details: [
    'ward run starts the service on first use; it keeps Ward, its model gateway and sandbox, and each',
    "conversation's CLI ready, so the next turn starts at once. It ends after serviceIdleMinutes (settings.json,",
    'default 15) without a client, at logout, or with "ward service stop". WARD_SERVICE=off runs every turn in',
    'the ward process itself. "ward service run" runs the service in the foreground (what ward run starts).',
  ].join('\n'),
  appless: true,
  async run(args, { io }) {
    const { values, positionals } = parseCommandArgs(this, args, { ...COMMON_OPTIONS });
    const action = requirePositional(this, positionals, 0, 'status, stop or run');
    if (action === 'run') {
      const { serve } = await import('../service/server.js');
      return serve(io.env);
    }
    if (action !== 'status' && action !== 'stop') throw new WardError('usage', `ward service takes status, stop or run, not ${JSON.stringify(action.slice(0, 20))}\nusage: ${this.usage}`);
    const { openService, request, waitUntilGone } = await import('../service/client.js');
    const opened = await openService(io.env, io, false);
    if (typeof opened === 'string') {
      if (values.json) writeJson(io.stdout, { running: false, why: opened });
      else writeLine(io.stdout, `ward service: not running (${opened})`);
      return action === 'stop' ? EXIT.ok : EXIT.notFound;
    }
    const reply = await request(opened, { t: action });
    if (action === 'stop') {
      if (!(await waitUntilGone(io.env))) throw new WardError('lock_timeout', 'the background service was asked to stop and is still running after 30 s');
      if (!values.json) writeLine(io.stdout, 'ward service: stopped (its turns were stopped first)');
      else writeJson(io.stdout, { running: false });
      return EXIT.ok;
    }
    if (reply?.t !== 'status') return EXIT.failed;
    const { pid, startedAt, turns, clients } = reply;
    if (values.json) writeJson(io.stdout, { running: true, pid, startedAt: new Date(startedAt).toISOString(), turns, clients });
    else writeLine(io.stdout, `ward service: running, pid ${pid}, since ${new Date(startedAt).toISOString()}, ${turns} turn(s) running, ${clients - 1} other client(s)`);
    return EXIT.ok;
  },
};

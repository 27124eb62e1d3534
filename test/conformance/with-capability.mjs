// Loaded into the suite's own process (`node --import`) for its server scenarios: every request
// to the broker under test carries the run's capability (B1), as the CLI's do. The suite has no
// option for a header; this adds Authorization and nothing else (Host and Origin stay as the
// suite sends them, so its DNS-rebinding checks see the broker's own answers). The suite sends
// through undici, and the header-validation scenario through node:http (to choose the exact
// header names it sends): both are covered.
import http from 'node:http';
import { Agent, setGlobalDispatcher } from 'undici';

const target = new URL(process.env.WARD_BROKER_URL ?? '');
const capability = process.env.WARD_BROKER_CAPABILITY ?? '';

setGlobalDispatcher(
  new Agent().compose((dispatch) => (options, handler) => {
    if (new URL(options.origin).origin !== target.origin) return dispatch(options, handler);
    const headers = Array.isArray(options.headers) ? [...options.headers, 'authorization', `Bearer ${capability}`] : { ...options.headers, authorization: `Bearer ${capability}` };
    return dispatch({ ...options, headers }, handler);
  }),
);

const request = http.request;
http.request = (options, ...rest) => {
  const plain = typeof options === 'object' && options !== null && !(options instanceof URL);
  const toTarget = plain && ['127.0.0.1', 'localhost'].includes(options.hostname ?? options.host) && String(options.port) === target.port;
  return request(toTarget ? { ...options, headers: { ...options.headers, Authorization: `Bearer ${capability}` } } : options, ...rest);
};

/**
 * `npm run sandbox`: starts the sandbox gateway on 127.0.0.1 (port from `--port`, `SANDBOX_PORT`, or
 * 8787) and prints its base URLs and the demo accounts (sandbox keys only — public by design).
 */
import { startSandbox } from './server';

function portFromArgs(argv: string[]): number {
  const i = argv.indexOf('--port');
  const fromFlag = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith('--port='))?.slice(7);
  const text = fromFlag ?? process.env.SANDBOX_PORT ?? '8787';
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`Invalid port: ${text}`);
    process.exit(2);
  }
  return port;
}

const sb = await startSandbox(portFromArgs(process.argv.slice(2)));
const d = sb.demo;
console.log(`Countersign sandbox listening on ${sb.url}
  perps gateway   ${sb.url}/perps
  order book      ${sb.url}/clob
  catalogue       ${sb.url}/gamma
  data service    ${sb.url}/data
  relayer         ${sb.url}/relayer
  bridge          ${sb.url}/bridge
  admin           ${sb.url}/admin   (sandbox only)
  perps session   ${sb.url.replace('http', 'ws')}/perps/v1/ws
  order book ws   ${sb.url.replace('http', 'ws')}/clob/ws/market, /clob/ws/user

Demo accounts (sandbox only, deterministic, never fund these keys anywhere):
  owner           ${d.owner.address}  key ${d.owner.privateKey}
  proxy           ${d.proxy.address}  key ${d.proxy.privateKey}
                  secret ${d.proxy.secret}
  counterparty    ${d.counterparty.address}  key ${d.counterparty.privateKey}
  CLOB API key    ${d.clob.apiKey} (nonce 0 of the owner)`);

const stop = () => {
  void sb.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

/**
 * The popup's shell: begins the first reads (start hint, then status; the ticket's first watch), then renders the app
 * into `#app`.
 */
import { render } from 'preact';
import { App } from './app';
import { bootVault } from './stores/vault';
import { beginFirstWatch } from './stores/first-watch';
import { LAST_INSTRUMENT } from '../../lib/messaging/start-hint-keys';
import './style.css';

performance.mark('countersign:script'); // the bench's stage marks (test/bench/popup.ts)
const boot = bootVault();
void boot.hint.then(() => performance.mark('countersign:hint'));
// The ticket's book and account: the boot script's watch, or one asked now, before the first render.
void beginFirstWatch(boot.hint, Number(localStorage.getItem(LAST_INSTRUMENT))).then(() =>
  performance.mark('countersign:watch'),
);
void boot.first.then(
  () => performance.mark('countersign:status'),
  () => undefined,
);
const root = document.getElementById('app');
if (root) render(<App boot={boot} />, root);

/** The popup's shell: begins the first reads (start hint, then status; the ticket's first watch), then renders the app into `#app`. */
import { render } from 'preact';
import { App } from './app';
import { bootVault } from './stores/vault';
import { beginFirstWatch, LAST_INSTRUMENT } from './stores/perps';
import './style.css';

performance.mark('countersign:script'); // the bench's stage marks (test/bench/popup.ts)
const boot = bootVault();
void boot.hint.then(() => performance.mark('countersign:hint'));
beginFirstWatch(boot.hint, Number(localStorage.getItem(LAST_INSTRUMENT))); // the ticket's book and account, asked before the first render
void boot.first.then(() => performance.mark('countersign:status'), () => undefined);
const root = document.getElementById('app');
if (root) render(<App boot={boot} />, root);

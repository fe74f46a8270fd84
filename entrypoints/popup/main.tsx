/** The popup's shell: begins the first reads (start hint, then status), then renders the app into `#app`. */
import { render } from 'preact';
import { App } from './app';
import { bootVault } from './stores/vault';
import './style.css';

performance.mark('countersign:script'); // the bench's stage marks (test/bench/popup.ts)
const boot = bootVault();
void boot.hint.then(() => performance.mark('countersign:hint'));
void boot.first.then(() => performance.mark('countersign:status'), () => undefined);
const root = document.getElementById('app');
if (root) render(<App boot={boot} />, root);

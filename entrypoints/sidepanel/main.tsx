/**
 * The side panel, a cockpit that stays open: the popup's cockpit — the same `App`, the
 * same stores and messages — in the browser's side panel (Chrome `side_panel`, Firefox
 * `sidebar_action`; WXT writes either from this entrypoint), so it stays open beside the venue's page
 * while the person clicks there. Its width follows the panel's; the toolbar popup stays the
 * quick-entry surface.
 */
import { render } from 'preact';
import { App } from '../popup/app';
import '../popup/style.css';

const root = document.getElementById('app');
if (root) render(<App />, root);

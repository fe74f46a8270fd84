import { render } from 'preact';
import browser from 'webextension-polyfill';
import { createCaller } from '../../lib/messaging/client';
import { ApprovalQueue } from './queue';
import '../popup/style.css';

const call = createCaller((m) => browser.runtime.sendMessage(m));
render(<ApprovalQueue call={call} onEmpty={() => window.close()} />, document.getElementById('app')!);

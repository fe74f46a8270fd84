/**
 * The approval window and the toolbar badge.
 *
 * One approval window at a time: concurrent requests share one `windows.create`; a window the background
 * is closing is never reused (`empty` forgets its id before removing it). The window reports the request
 * it displays (`approval.showing` → `shown`); closing the window (`windows.onRemoved`) rejects only that
 * request — the person saw it, at this or an earlier digest of the same request. A request that arrived
 * while the window was closing was never shown: it stays pending and gets a new window.
 *
 * The badge: pending approvals (amber count) first; otherwise "ON" (green) while a standing grant is live.
 */
import type { ApprovalRegistry } from '../approvals/registry';
import type { BackgroundBrowser } from './browser';
import { startMark } from './start-marks';

/** The toolbar badge: the pending count (amber), else "ON" (green) while a standing grant is live. */
export class Badge {
  private pending = 0;
  private grants = 0;

  constructor(private readonly action: BackgroundBrowser['action']) {}

  /** Sets the number of pending approvals and redraws. */
  setPending(n: number): void {
    this.pending = n;
    this.draw();
  }

  /** Sets the number of live standing grants and redraws. */
  setLiveGrants(n: number): void {
    this.grants = n;
    this.draw();
  }

  private draw(): void {
    void this.action?.setBadgeText({ text: this.pending ? String(this.pending) : this.grants ? 'ON' : '' });
    void this.action?.setBadgeBackgroundColor?.({ color: this.pending ? '#b45309' : '#047857' });
  }
}

/** The approval window (420 × 640, `/approval.html`) bound to the registry's pending requests. */
export class ApprovalWindow {
  private windowId: number | undefined;
  /** The request the window last said it displays: closing the window ends only this one. */
  private showing: { id: string; digest: string } | undefined;
  private opening: Promise<void> | undefined;

  /** Registers `windows.onRemoved` (synchronously, in the background's `main`). */
  constructor(
    private readonly browser: BackgroundBrowser,
    private readonly registry: ApprovalRegistry,
  ) {
    browser.windows?.onRemoved.addListener((id) => this.removed(id));
  }

  /** Focuses the open window, or opens one (concurrent calls share the same `windows.create`). */
  readonly show = async (): Promise<void> => {
    const windows = this.browser.windows;
    if (!windows) return;
    if (this.opening) return this.opening;
    if (this.windowId !== undefined) {
      try {
        await windows.update(this.windowId, { focused: true });
        return;
      } catch {
        this.windowId = undefined;
      }
    }
    this.opening = (async () => {
      startMark('window.create');
      const w = await windows.create({
        url: this.browser.runtime.getURL('/approval.html'),
        type: 'popup',
        width: 420,
        height: 640,
        focused: true,
      });
      startMark('window.created');
      this.windowId = w.id;
    })().finally(() => (this.opening = undefined));
    return this.opening;
  };

  /** `approval.showing`: the window displays pending request `id` at `digest` (ignored when not pending). */
  shown(id: string, digest: string): void {
    if (this.registry.list().some((x) => x.id === id)) this.showing = { id, digest };
  }

  /** `approval.empty`: closes the window when nothing is pending (true); false when something still is. */
  async empty(): Promise<boolean> {
    if (this.registry.size > 0) return false;
    const id = this.windowId;
    this.windowId = undefined;
    this.showing = undefined;
    if (id !== undefined) await this.browser.windows?.remove?.(id).catch(() => undefined);
    return true;
  }

  private removed(id: number): void {
    if (id !== this.windowId) return;
    this.windowId = undefined;
    const shown = this.showing;
    this.showing = undefined;
    if (shown && this.registry.list().some((x) => x.id === shown.id))
      this.registry.decide(shown.id, { approve: false });
    if (this.registry.size > 0) void this.show();
  }
}

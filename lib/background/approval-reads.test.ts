/**
 * The reads the approval window makes to show a site's request (the price, the position, the leverage)
 * are the site's: they draw on the sites' share of the gateway's weight budget, as the reads a page's
 * request needs in the background do. However many requests sites keep the window reading, the popup's
 * own reads — the positions and the book the person's close is computed from — still have their share.
 * Black-box through procedures, against the in-process sandbox.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { Harness } from '../../test/kits/sandbox';
import { callAs, pageSender, useSandboxBackgrounds, type Reply } from '../../test/kits/background';

const page = pageSender('https://reader.example', 4);
const approvalWindow = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/approval.html`,
});

let h: Harness;
const { start } = useSandboxBackgrounds({ dbPrefix: 'approval-reads', onStart: (x) => (h = x) });

describe("the approval window's reads for a site's request", () => {
  it("count in the sites' share: refused at half the request budget, and the popup's reads still go", async () => {
    const bg = await start({ page });
    const account = h.demo.owner.address;
    const limit = h.ctx.config.perpsRequestBudget.limit;
    let spent = 0;
    let refused: Reply | undefined;
    for (let i = 0; i < limit && !refused; i++) {
      const r = (await callAs(bg, 'perps.read', { account, name: 'portfolio' }, approvalWindow())) as Reply;
      if (r.ok)
        spent += 2; // the portfolio read's request weight
      else refused = r;
    }
    expect(refused).toMatchObject({
      ok: false,
      error: { code: -32002, shortMessage: expect.stringMatching(/share .* sites may use/) },
    });
    expect(spent).toBeLessThanOrEqual(limit / 2);
    // The popup's reads the person's close needs: the positions and the book.
    expect(await callAs(bg, 'perps.read', { account, name: 'portfolio' })).toMatchObject({ ok: true });
    expect(await callAs(bg, 'perps.read', { name: 'book', query: { instrument_id: 1, depth: 10 } })).toMatchObject({
      ok: true,
    });
  });
});

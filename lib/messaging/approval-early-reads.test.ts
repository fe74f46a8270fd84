import { afterEach, describe, expect, it, vi } from 'vitest';
import { beginApprovalReads, earlyAnswers } from './approval-early-reads';
import { createCaller } from './client';

/** A background double: answers `approval.list` with `queue` (an empty one by default) and counts what it was asked. */
function background(queue: unknown = []) {
  const asked: string[] = [];
  const send = vi.fn(async (m: unknown) => {
    const { type } = m as { type: string };
    asked.push(type);
    return { ok: true, result: type === 'approval.list' ? queue : { initialized: true } };
  });
  return { asked, send };
}

describe("the approval window's first questions", () => {
  afterEach(() => {
    Reflect.deleteProperty(globalThis, '__countersignApprovalAnswers');
  });

  it(
    'are asked by the boot script at once, each answered to ' +
      'the window once; every later call asks the background again',
    async () => {
      const bg = background();
      beginApprovalReads(bg.send);
      expect(bg.asked).toEqual(['vault.status', 'approval.list']);
      const call = createCaller(earlyAnswers(bg.send));
      expect(await call('approval.list', {})).toEqual([]);
      expect(bg.asked).toEqual(['vault.status', 'approval.list']);
      expect(await call('approval.list', {})).toEqual([]);
      expect(bg.asked).toEqual(['vault.status', 'approval.list', 'approval.list']);
    },
  );

  it('a window without the boot script asks for itself', async () => {
    const bg = background();
    const call = createCaller(earlyAnswers(bg.send));
    expect(await call('approval.list', {})).toEqual([]);
    expect(bg.asked).toEqual(['approval.list']);
  });

  it("a boot reply of another shape reaches no screen: it is refused as the window's own call would be", async () => {
    const bg = background('not a queue');
    beginApprovalReads(bg.send);
    const call = createCaller(earlyAnswers(bg.send));
    await expect(call('approval.list', {})).rejects.toMatchObject({ name: 'Messaging.InvalidOutputError' });
  });
});

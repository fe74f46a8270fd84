/**
 * Popup open, this build against another (`BENCH_POPUP_AGAINST=<a built extension's directory>`, e.g. a
 * base commit built in a worktree): is a change to the popup faster or slower? Two browsers, each with
 * its own sandbox and one of the two builds, run side by side; every round opens the popup once per
 * build and per way (toolbar popup, goto), alternating which build goes first, so both builds see the
 * same moments of the machine. Run-level comparisons (one whole run per build, one after the other) on
 * this machine drift by more than the differences they look for; interleaved opens do not. A browser
 * also keeps a pace of its own for its lifetime (two launches of the same build differed by up to 2 ms
 * at p50), so the run is cut into blocks, each launching both browsers afresh, the build launched first
 * alternating, and the interval resamples whole blocks.
 *
 * Prints, per way: each build's p50 of interactive, loaded and the data render (first watch answered →
 * loaded, the popup's `countersign:watch` mark), and the difference of the p50s (this − other) with a
 * 95 % block-bootstrap interval. Never fails on timing.
 */
import { resolve } from 'node:path';
import { EXTENSION_DIR, launchHarness, onboardDemo, type Harness } from '../e2e/harness';
import { openAsToolbarPopup, openByGoto, type Open } from './popup';
import { connectBrowserCdp, type BrowserCdp } from './toolbar-popup';

/**
 * Blocks (`BENCH_POPUP_AB_BLOCKS`, default 6): each launches both builds' browsers afresh, in alternating launch order.
 */
const BLOCKS = Number(process.env.BENCH_POPUP_AB_BLOCKS ?? 6);
/**
 * Opens per build and way in each block (`BENCH_POPUP_AB_OPENS`, default 25), after two rounds that are not counted.
 */
const OPENS = Number(process.env.BENCH_POPUP_AB_OPENS ?? 25);

/** One build's browser. */
type Side = { name: string; h: Harness; cdp: BrowserCdp };

/**
 * What one block measured for one build and way: interactive, loaded, and loaded minus the first watch's answer (ms).
 */
type Figures = { interactive: number[]; loaded: number[]; data: number[] };
type Figure = keyof Figures;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] ?? NaN) : ((s[m - 1] ?? NaN) + (s[m] ?? NaN)) / 2;
};

/**
 * The 95 % interval of `median(this) − median(other)` by a block bootstrap (2 000 resamples of whole
 * blocks): a browser keeps its pace for its lifetime, so opens of one block are not independent.
 */
function interval(a: readonly Figures[], b: readonly Figures[], f: Figure): [number, number] {
  const diffs: number[] = [];
  for (let k = 0; k < 2000; k++) {
    const picks = a.map(() => Math.floor(Math.random() * a.length));
    diffs.push(median(picks.flatMap((i) => a[i]?.[f] ?? [])) - median(picks.flatMap((i) => b[i]?.[f] ?? [])));
  }
  diffs.sort((x, y) => x - y);
  return [diffs[50] ?? NaN, diffs[1949] ?? NaN];
}

/**
 * Opens the popup once in `side`'s browser, `toolbar` (chrome.action.openPopup) or with goto in a tab, as the popup
 * bench does.
 */
const openOnce = (side: Side, toolbar: boolean): Promise<Open> =>
  toolbar ? openAsToolbarPopup(side.h, side.cdp, '/popup.html') : openByGoto(side.h, '/popup.html');

const WAYS = ['toolbar popup', 'goto'] as const;
type Way = (typeof WAYS)[number];

/**
 * One block: both builds' browsers launched in `order`, `OPENS` counted rounds; returns each build's and way's figures.
 */
async function block(order: readonly (readonly [string, string])[]): Promise<Map<string, Figures>> {
  const sides: Side[] = [];
  const figures = new Map<string, Figures>();
  try {
    for (const [name, dir] of order) {
      const h = await launchHarness({}, { extensionDir: dir, args: ['--remote-debugging-port=0'] });
      const side: Side = { name, h, cdp: await connectBrowserCdp(h.userDataDir) };
      sides.push(side);
      const { popup } = await onboardDemo(h, 'benchmark password');
      await popup.close();
      for (const way of WAYS) figures.set(`${way}/${name}`, { interactive: [], loaded: [], data: [] });
    }
    for (let round = 0; round < OPENS + 2; round++) {
      for (const side of round % 2 ? [...sides].reverse() : sides) {
        for (const way of WAYS) {
          const o = await openOnce(side, way === 'toolbar popup');
          const f = figures.get(`${way}/${side.name}`);
          if (round < 2 || !f || o.interactive === undefined || o.loaded === undefined) continue;
          f.interactive.push(o.interactive);
          f.loaded.push(o.loaded);
          const watch = o.stages.find(([k]) => k === 'watch')?.[1];
          if (watch !== undefined) f.data.push(o.loaded - watch);
        }
      }
    }
  } finally {
    for (const side of sides) {
      side.cdp.close();
      await side.h.close();
    }
  }
  return figures;
}

/** Runs the interleaved comparison of this build (`EXTENSION_DIR`) against `otherDir` and prints it. */
export async function benchPopupAgainst(otherDir: string): Promise<void> {
  const builds = [
    ['this build', EXTENSION_DIR],
    ['other build', resolve(otherDir)],
  ] as const;
  const blocks: Map<string, Figures>[] = [];
  for (let k = 0; k < BLOCKS; k++) blocks.push(await block(k % 2 ? [...builds].reverse() : builds));
  console.log(
    `\nPopup open, this build against ${otherDir} (${BLOCKS} blocks of ${OPENS} interleaved opens ` +
      `per build and way; p50 ms, this vs other, difference with its 95 % block-bootstrap interval):`,
  );
  const of = (way: Way, name: string) =>
    blocks.map((m) => m.get(`${way}/${name}`) ?? { interactive: [], loaded: [], data: [] });
  for (const way of WAYS) {
    const a = of(way, 'this build');
    const b = of(way, 'other build');
    const row = (label: string, f: Figure) => {
      const x = median(a.flatMap((m) => m[f]));
      const y = median(b.flatMap((m) => m[f]));
      const [lo, hi] = interval(a, b, f);
      return `${label} ${x.toFixed(1)} vs ${y.toFixed(1)} (${(x - y).toFixed(1)} [${lo.toFixed(1)}, ${hi.toFixed(1)}])`;
    };
    console.log(
      `  ${way}: ${row('interactive', 'interactive')}; ${row('loaded', 'loaded')}; ${row('watch → loaded', 'data')}`,
    );
  }
}

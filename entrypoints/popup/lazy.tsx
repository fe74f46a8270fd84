/**
 * Screens loaded when first shown, so that the popup parses only the shell and the perps ticket at open
 * (`test/bench/popup.ts` measures it). `lazyScreen(load)` is a component that renders "Loading…" until
 * `load()` resolves to the screen, then the screen with the same props; `load` runs once and is shared by
 * every use. `preload()` starts it ahead (the popup calls it when idle, so a tab opens at once).
 */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** A lazily loaded screen: the component, and `preload` to fetch its code ahead of use. */
type LazyScreen<P extends object> = ComponentType<P> & { preload: () => Promise<void> };

/** Wraps the dynamic import of a screen (`() => import('./positions').then((m) => m.PositionsView)`). */
export function lazyScreen<P extends object>(load: () => Promise<ComponentType<P>>): LazyScreen<P> {
  let loaded: ComponentType<P> | undefined;
  let pending: Promise<void> | undefined;
  const preload = () =>
    (pending ??= load().then((c) => {
      loaded = c;
    }));
  function Lazy(props: P) {
    const [, setReady] = useState(loaded !== undefined);
    useEffect(() => {
      if (!loaded) void preload().then(() => setReady(true));
    }, []);
    const Screen = loaded;
    return Screen ? <Screen {...props} /> : <p class="muted panel">Loading…</p>;
  }
  return Object.assign(Lazy, { preload });
}

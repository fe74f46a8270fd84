/**
 * Small presentational building blocks for the popup and approval window. They take props and render;
 * they know nothing of messaging, storage or the browser API.
 */
import type { ComponentChildren, JSX } from 'preact';

/** A `<button type="button">` styled by `kind` (primary, danger, plain); other attributes pass through. */
export function Button(props: JSX.ButtonHTMLAttributes<HTMLButtonElement> & { kind?: 'primary' | 'danger' | 'plain' }) {
  const { kind = 'plain', class: cls, ...rest } = props;
  return <button type="button" class={`btn btn-${kind} ${cls ?? ''}`} {...rest} />;
}

/** A labelled field: the label, the control (children) and an optional hint below. */
export function Field(props: { label: string; hint?: ComponentChildren; children: ComponentChildren }) {
  return (
    <label class="field">
      <span class="field-label">{props.label}</span>
      {props.children}
      {props.hint ? <span class="field-hint">{props.hint}</span> : null}
    </label>
  );
}

/** An error sentence as an alert; nothing when there is none. */
export function ErrorText({ error }: { error: string | undefined | null }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

/** A status notice (`role="status"`). */
export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/** The id of tab `id`'s button and of its panel (`Tabs` and `TabPanel` agree on them). */
const tabIds = (id: string) => ({ tab: `tab-${id}`, panel: `tabpanel-${id}` });

/**
 * A tab bar (WAI-ARIA tabs pattern): `role=tablist` of `role=tab` buttons with
 * `aria-controls`, one Tab stop (the active tab; the others `tabindex=-1`), ←/→ move to the previous /
 * next tab (wrapping), Home / End to the first / last; moving selects the tab (`onChange` receives its
 * id) and focuses it. Pair with `TabPanel` for the content.
 */
export function Tabs<T extends string>(props: {
  tabs: readonly { id: T; label: string }[];
  active: T;
  onChange: (id: T) => void;
  label?: string;
}) {
  const onKey = (e: KeyboardEvent) => {
    const i = props.tabs.findIndex((t) => t.id === props.active);
    const n = props.tabs.length;
    const next =
      e.key === 'ArrowRight'
        ? (i + 1) % n
        : e.key === 'ArrowLeft'
          ? (i - 1 + n) % n
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? n - 1
              : -1;
    const tab = props.tabs[next];
    if (!tab) return;
    e.preventDefault();
    // Every tab button is always rendered, so focus moves in the same event (a deferred focus
    // left a moment where the selected tab was not the focused one).
    const bar = e.currentTarget;
    if (bar instanceof HTMLElement) bar.querySelector<HTMLElement>(`#${tabIds(tab.id).tab}`)?.focus();
    props.onChange(tab.id);
  };
  return (
    <div class="tabs" role="tablist" aria-label={props.label ?? 'Screens'} onKeyDown={onKey}>
      {props.tabs.map((t) => {
        const on = t.id === props.active;
        const ids = tabIds(t.id);
        return (
          <button
            type="button"
            role="tab"
            id={ids.tab}
            aria-selected={on}
            aria-controls={ids.panel}
            tabIndex={on ? 0 : -1}
            class={on ? 'tab active' : 'tab'}
            onClick={() => props.onChange(t.id)}
            key={t.id}
          >
            {t.label}
          </button>
        );
      })}
    </div>
  );
}

/** The panel of tab `id` (`role=tabpanel`, labelled by its tab). */
export function TabPanel({ id, children }: { id: string; children: ComponentChildren }) {
  const ids = tabIds(id);
  return (
    <div role="tabpanel" id={ids.panel} aria-labelledby={ids.tab} class="tabpanel">
      {children}
    </div>
  );
}

/**
 * A polite live region that exists before its text (a region created with its text is
 * often not announced). Empty, it takes no space; `testid` names it for tests.
 */
export function Live({ children, testid }: { children?: ComponentChildren; testid?: string }) {
  return (
    <div
      class="live"
      role="status"
      aria-live="polite"
      aria-atomic="true"
      {...(testid ? { 'data-testid': testid } : {})}
    >
      {children}
    </div>
  );
}

/** A progress bar of `value` out of `max` with a text label (e.g. confirmations). */
export function ProgressBar({ value, max, label }: { value: number; max: number; label: string }) {
  const pct = max > 0 ? Math.min(100, Math.round((value / max) * 100)) : 0;
  return (
    <div
      class="progress"
      role="progressbar"
      aria-valuenow={value}
      aria-valuemin={0}
      aria-valuemax={max}
      aria-label={label}
    >
      <div class="progress-fill" style={{ width: `${pct}%` }} />
      <span class="progress-text">{label}</span>
    </div>
  );
}

/** "in 3 d 4 h", "in 12 min", "expired" for a Unix-ms time relative to `now`. */
export function formatCountdown(target: number, now: number): string {
  const ms = target - now;
  if (ms <= 0) return 'expired';
  const min = Math.floor(ms / 60_000);
  if (min < 60) return `in ${Math.max(1, min)} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `in ${h} h ${min % 60} min`;
  return `in ${Math.floor(h / 24)} d ${h % 24} h`;
}

/** A confirmation panel: what will happen, then Confirm / Back. */
export function ConfirmPanel(props: {
  title: string;
  rows: [string, ComponentChildren][];
  onConfirm: () => void;
  onBack: () => void;
  busy?: boolean;
  confirmLabel?: string;
}) {
  return (
    <section class="confirm" aria-label={props.title}>
      <h3>{props.title}</h3>
      <dl>
        {props.rows.map(([k, val]) => (
          <div class="row" key={k}>
            <dt>{k}</dt>
            <dd>{val}</dd>
          </div>
        ))}
      </dl>
      <div class="actions">
        <Button onClick={props.onBack}>Back</Button>
        <Button kind="primary" onClick={props.onConfirm} disabled={props.busy}>
          {props.confirmLabel ?? 'Confirm'}
        </Button>
      </div>
    </section>
  );
}

/** Password strength hint (length and character classes; a hint, not a rule). */
export function passwordStrength(pw: string): { score: 0 | 1 | 2 | 3; label: string } {
  let classes = 0;
  for (const re of [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/]) if (re.test(pw)) classes++;
  if (pw.length < 8) return { score: 0, label: 'Too short (at least 8 characters)' };
  if (pw.length >= 16 || (pw.length >= 12 && classes >= 3)) return { score: 3, label: 'Strong' };
  if (pw.length >= 10 && classes >= 2) return { score: 2, label: 'Fair' };
  return { score: 1, label: 'Weak: longer is better' };
}

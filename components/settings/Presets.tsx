/**
 * The venue presets of the Settings tab: pick Sandbox (development builds only: `OFFERED_PRESETS`),
 * Polymarket, the venue's pre-production or Custom; a preset fills every service URL, the chain id, the header names
 * and the pinned perps domain, asks the browser for exactly its hosts, then checks each service (ok / error with its
 * reason / time). Venue presets say they never ran against the live venue, and until the person confirms one, nothing
 * is signed under it. Also the stream, bridge and domain-pin fields a custom setup edits (saved with the form around
 * it). Presentational: it shows the draft, the saved preset and the last check it is given and reports the person's
 * edits, preset choice, confirmation and check request.
 */
import { Button, Field } from '../ui';
import { OFFERED_PRESETS, PRESETS, presetById, type PresetId } from '../../lib/settings/presets';
import type { Settings } from '../../lib/settings';
import type { ConnectionResult } from '../../lib/settings/check';

const CHOICES: readonly PresetId[] = [...PRESETS.map((p) => p.id), 'custom'];
/** `v` as a preset id (a `<select>` value narrowed without a cast). */
const presetOf = (v: string): PresetId | undefined => CHOICES.find((c) => c === v);

/** The draft fields the Presets section shows and edits. */
type PresetDraft = Pick<Settings, 'preset' | 'perpsWsUrl' | 'clobWsUrl' | 'bridgeUrl' | 'perpsDomain' | 'clobChainId'>;

/**
 * The Presets section (inside the Settings form). Props: `draft` the settings being edited, `savedPreset` the stored
 * preset, `checks` the last connection check (undefined before one), `checking` while one runs, `unconfirmed` while the
 * saved preset waits for the real-money confirmation; events: `onEdit` a draft patch (choosing Custom too),
 * `onChoosePreset` another preset, `onConfirm` the real-money confirmation, `onCheck` a connection check.
 */
export function Presets({
  draft: s,
  savedPreset,
  checks,
  checking,
  unconfirmed,
  onEdit,
  onChoosePreset,
  onConfirm,
  onCheck,
}: {
  draft: PresetDraft;
  savedPreset: PresetId;
  checks: readonly ConnectionResult[] | undefined;
  checking: boolean;
  unconfirmed: boolean;
  onEdit: (patch: Partial<Settings>) => void;
  onChoosePreset: (id: Exclude<PresetId, 'custom'>) => void;
  onConfirm: () => void;
  onCheck: () => void;
}) {
  const live = presetById(savedPreset)?.live ?? false;
  const choose = (id: PresetId | undefined) => {
    if (!id || id === savedPreset) return;
    if (id === 'custom') onEdit({ preset: 'custom' });
    else onChoosePreset(id);
  };
  return (
    <section aria-label="Venue preset" data-testid="presets">
      <h3>Venue</h3>
      <Field
        label="Preset"
        hint="A preset fills every service below, the chain, the header names and the pinned perps domain."
      >
        <select name="preset" value={s.preset} onChange={(e) => choose(presetOf(e.currentTarget.value))}>
          {PRESETS.filter((p) => OFFERED_PRESETS.includes(p) || p.id === s.preset).map((p) => (
            <option key={p.id} value={p.id}>
              {p.label}
            </option>
          ))}
          <option value="custom">Custom (the URLs below)</option>
        </select>
      </Field>
      {live ? (
        <p class="error" role="note" data-testid="preset-untested">
          This venue preset has never run against the live venue: its values come from the venue's official client, not
          from a tested connection. Signatures under it move real money.
        </p>
      ) : null}
      {unconfirmed ? (
        <div class="actions" data-testid="preset-confirm">
          <p class="muted">Nothing is signed under this setup until you allow it (asked once per preset).</p>
          <Button kind="danger" onClick={onConfirm}>
            Allow real-money signatures with this preset
          </Button>
        </div>
      ) : null}
      <div class="actions">
        <Button onClick={onCheck} disabled={checking}>
          {checking ? 'Checking…' : 'Check connections'}
        </Button>
      </div>
      {checks ? (
        <ul class="orders" aria-label="Connection check" data-testid="connection-check">
          {checks.map((c) => (
            <li key={c.service} data-testid={`check-${c.service}`} data-ok={c.ok ? 'true' : 'false'}>
              <strong>{c.label}</strong> · {c.ok ? 'ok' : `error: ${c.reason ?? 'failed'}`} · {c.ms} ms
              <div class="muted small">{c.url}</div>
            </li>
          ))}
        </ul>
      ) : null}
      <Field label="Perps session stream (WebSocket)">
        <input name="perpsWsUrl" value={s.perpsWsUrl} onInput={(e) => onEdit({ perpsWsUrl: e.currentTarget.value })} />
      </Field>
      <Field label="Order-book channels (WebSocket base; /market and /user are added)">
        <input name="clobWsUrl" value={s.clobWsUrl} onInput={(e) => onEdit({ clobWsUrl: e.currentTarget.value })} />
      </Field>
      <Field label="Bridge">
        <input name="bridgeUrl" value={s.bridgeUrl} onInput={(e) => onEdit({ bridgeUrl: e.currentTarget.value })} />
      </Field>
      <div class="grid3">
        <Field label="Pinned perps domain name">
          <input
            name="perpsDomainName"
            value={s.perpsDomain.name}
            onInput={(e) => onEdit({ perpsDomain: { ...s.perpsDomain, name: e.currentTarget.value } })}
          />
        </Field>
        <Field label="Version">
          <input
            name="perpsDomainVersion"
            value={s.perpsDomain.version}
            onInput={(e) => onEdit({ perpsDomain: { ...s.perpsDomain, version: e.currentTarget.value } })}
          />
        </Field>
        <Field label="Chain id">
          <input
            name="clobChainId"
            inputMode="numeric"
            value={String(s.clobChainId)}
            onInput={(e) => onEdit({ clobChainId: Number(e.currentTarget.value) })}
          />
        </Field>
      </div>
    </section>
  );
}

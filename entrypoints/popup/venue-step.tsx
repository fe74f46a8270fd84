/**
 * The first step of a release build's first run (`lib/settings/build-mode.ts`), shown while the background
 * says no venue was chosen (`vault.status` `venueChosen`): the person chooses the venue — the venue itself
 * or its pre-production environment — and the browser is asked, in that click, for exactly the host
 * permissions of that choice (`hostOrigins`: the venue's https REST hosts). Nothing is stored when the
 * browser refuses (the background checks the grant too); once granted, the choice is stored as the
 * settings' preset (`settings.set`, which fills every service and marks the venue chosen). Development and
 * test builds skip the step: their default is the sandbox, reachable from install.
 */
import { useState } from 'preact/hooks';
import { Button, ErrorText } from '../../components/ui';
import { BaseError } from '../../lib/errors/base';
import { hostOrigins } from '../../lib/settings/hosts';
import { presetById, type Preset } from '../../lib/settings/presets';
import { call, messageOf, requestHostPermissions } from './api';

type VenueId = Preset['id'];

/**
 * The choices in the order shown, each with what it means for the person: the venue's https setups (the
 * local sandbox speaks plain http on loopback, which a release never uses: `lib/http/transport.ts`).
 */
const CHOICES: readonly { id: VenueId; hint: string }[] = [
  { id: 'polymarket', hint: 'The live venue. Orders move real money.' },
  {
    id: 'preproduction',
    hint:
      "The venue's test environment for the order book, catalogue, " +
      "data and relayer (perps, chain and RPC are the live venue's).",
  },
];

/** The venue step; `onChosen` runs once the browser granted the venue's hosts and the choice is stored. */
export function VenueStep({ onChosen }: { onChosen: () => void }) {
  const [choice, setChoice] = useState<VenueId>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const preset = choice === undefined ? undefined : presetById(choice);
  const go = (p: Preset) => {
    setBusy(true);
    setError(undefined);
    const origins = hostOrigins(p.values);
    // The permission request is the click's first asynchronous call (Firefox needs it inside the click).
    requestHostPermissions(origins)
      .then(async (granted) => {
        if (!granted)
          throw new BaseError(
            `The browser did not allow Countersign to reach ${origins.join(', ')}. Choose again to be asked again.`,
          );
        await call('settings.set', { preset: p.id });
        onChosen();
      })
      .catch((err: unknown) => setError(messageOf(err)))
      .finally(() => setBusy(false));
  };
  return (
    <main class="panel onboarding" data-testid="venue-step">
      <h1>Welcome to Countersign</h1>
      <h2>Where will you trade?</h2>
      <p class="muted">
        Countersign signs for one venue at a time. Your browser asks you next to let it reach that venue's servers, and
        only those. Settings can change it later.
      </p>
      <div role="radiogroup" aria-label="Venue">
        {CHOICES.map((c) => (
          <label key={c.id} class="check">
            <input type="radio" name="venue" value={c.id} checked={choice === c.id} onChange={() => setChoice(c.id)} />
            <span>
              <strong>{presetById(c.id)?.label}</strong>
              <span class="muted small"> — {c.hint}</span>
            </span>
          </label>
        ))}
      </div>
      {preset?.live ? (
        <p class="error" role="note">
          This venue setup has never run against the live venue: its values come from the venue's official client, not
          from a tested connection. Nothing is signed under it until you allow real-money signatures in Settings.
        </p>
      ) : null}
      <ErrorText error={error} />
      <Button kind="primary" disabled={!preset || busy} onClick={() => preset && go(preset)}>
        Continue
      </Button>
    </main>
  );
}

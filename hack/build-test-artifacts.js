// What the tests would otherwise build on their first run, built in `.ci/run`'s install phase so
// that the test stages measure tests, not builds: the data-plane guest image (cached by recipe
// hash), the releases the upgrade tests start from (cached by commit) and hack/go-template
// (cached by the hash of main.go). Each is the same call the tests make, so a test finds it in the
// cache; a developer's `npm test` without this step still works, building on demand.
//
// Usage: node hack/build-test-artifacts.js    (after npm run build; the guest image needs root)
import { goTemplateBinary } from '@metal-l2/capp-fixture';
import { ensureGuestImage } from '@metal-l2/dataplane';
import { OLD_RELEASES, buildOldRelease } from './build-old-release.js';

/** @param {string} what @param {() => Promise<string>} build */
async function timed(what, build) {
  const started = Date.now();
  const result = await build();
  console.log(`${what}: ${result} (${Math.round((Date.now() - started) / 1000)} s)`);
}

await timed('go-template', () => goTemplateBinary());
for (const { commit, pkg } of OLD_RELEASES) await timed(`${pkg} at ${commit}`, async () => buildOldRelease(commit, pkg));
await timed('data-plane guest image', async () => {
  const image = await ensureGuestImage({ log: (m) => console.log(m) });
  return `${image.dir}${image.built ? '' : ' (cached)'}`;
});

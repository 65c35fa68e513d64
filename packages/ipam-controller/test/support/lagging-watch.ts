import type { KubeClient, KubeObject, ResourceType, WatchEvent, WatchOptions } from '@metal-l2/kube';

type Watch = KubeClient['watch'];

/**
 * The controller's own client, except that watches of `plural` deliver nothing until they are
 * ended: that cache keeps what its first list saw. Everything else (lists, reads, writes) is real.
 */
export const withHeldWatch =
  (plural: string) =>
  (client: KubeClient): KubeClient =>
    withWatch(client, plural, async (_type, options) => {
      await new Promise<void>((resolve) => {
        if (options.signal.aborted) resolve();
        options.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    });

/**
 * The controller's own client, except that watches of `plural` hand each event on `delayMs` after
 * it came, in order: that cache is always `delayMs` behind the server, as a busy replica's is.
 * The passes the events start see the cache as it was then, not the writes made since.
 */
export const withDelayedWatch =
  (plural: string, delayMs: number) =>
  (client: KubeClient): KubeClient =>
    withWatch(client, plural, <T extends KubeObject>(type: ResourceType, options: WatchOptions, onEvent: (event: WatchEvent<T>) => void) =>
      client.watch<T>(type, options, (event) => {
        setTimeout(() => {
          if (!options.signal.aborted) onEvent(event);
        }, delayMs);
      }),
    );

function withWatch(client: KubeClient, plural: string, watch: Watch): KubeClient {
  const replaced: Watch = (type, options, onEvent) =>
    type.plural === plural ? watch(type, options, onEvent) : client.watch(type, options, onEvent);
  return new Proxy(client, {
    get(target, property): unknown {
      if (property === 'watch') return replaced;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

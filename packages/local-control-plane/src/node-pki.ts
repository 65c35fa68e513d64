import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const p256 = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** PEM texts. */
export interface KubeletClientPki {
  /** What the kubelet trusts for client certificates (authentication.x509.clientCAFile). */
  readonly ca: string;
  /** The API server's identity towards the kubelet (system:masters, so logs/exec pass the kubelet's authorizer). */
  readonly cert: string;
  readonly key: string;
}

/** A CA and the API server's kubelet client certificate it signed, made with openssl. */
export async function makeKubeletClientPki(): Promise<KubeletClientPki> {
  const dir = await mkdtemp(join(tmpdir(), 'metal-l2-node-pki-'));
  try {
    const ca = join(dir, 'ca');
    const client = join(dir, 'client');
    await run('openssl', [
      'req',
      '-x509',
      ...p256,
      '-days',
      '30',
      '-subj',
      '/CN=metal-l2-node-kubelet-client-ca',
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.crt`,
    ]);
    await writeFile(`${client}.cnf`, 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n');
    await run('openssl', [
      'req',
      ...p256,
      '-subj',
      '/O=system:masters/CN=kube-apiserver-kubelet-client',
      '-keyout',
      `${client}.key`,
      '-out',
      `${client}.csr`,
    ]);
    await run('openssl', [
      ...['x509', '-req', '-in', `${client}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '30'],
      ...['-extfile', `${client}.cnf`, '-out', `${client}.crt`],
    ]);
    const [caPem, cert, key] = await Promise.all([
      readFile(`${ca}.crt`, 'utf8'),
      readFile(`${client}.crt`, 'utf8'),
      readFile(`${client}.key`, 'utf8'),
    ]);
    return { ca: caPem, cert, key };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const p256 = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/**
 * A throw-away CA (`<dir>/ca.crt`, `ca.key`) and one serving certificate it signed (`tls.crt`,
 * `tls.key`), valid for two days, made with openssl: what cert-manager or Helm's genCA does in a
 * cluster.
 */
async function issue(dir: string, subject: { caName: string; commonName: string; subjectAltName: string }): Promise<void> {
  const ca = join(dir, 'ca');
  await run('openssl', [
    'req',
    '-x509',
    ...p256,
    '-days',
    '2',
    '-subj',
    `/CN=${subject.caName}`,
    '-keyout',
    `${ca}.key`,
    '-out',
    `${ca}.crt`,
  ]);
  await writeFile(join(dir, 'ext.cnf'), `subjectAltName=${subject.subjectAltName}\nextendedKeyUsage=serverAuth\n`);
  const csr = join(dir, 'tls.csr');
  await run('openssl', ['req', ...p256, '-subj', `/CN=${subject.commonName}`, '-keyout', join(dir, 'tls.key'), '-out', csr]);
  await run('openssl', [
    ...['x509', '-req', '-in', csr, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2'],
    ...['-extfile', join(dir, 'ext.cnf'), '-out', join(dir, 'tls.crt')],
  ]);
}

/**
 * A serving certificate for 127.0.0.1/localhost. Returns the directory holding tls.crt and
 * tls.key, and the CA bundle for a webhook configuration's caBundle.
 */
export async function makeServingCertificate(): Promise<{ certDir: string; caBundle: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'metal-l2-certs-'));
  await issue(dir, { caName: 'metal-l2-test-ca', commonName: 'localhost', subjectAltName: 'IP:127.0.0.1,DNS:localhost' });
  return { certDir: dir, caBundle: (await readFile(join(dir, 'ca.crt'))).toString('base64') };
}

/**
 * A serving certificate for `hosts` (default api.equinix.com), for an intercepting proxy that
 * stands in for a real API host. `caFile` is what the client trusts (SSL_CERT_FILE for a Go
 * program), `cert` and `key` are what the proxy serves (PEM).
 */
export async function makeInterceptCertificate(
  hosts: readonly string[] = ['api.equinix.com'],
): Promise<{ dir: string; caFile: string; ca: string; cert: string; key: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'metal-l2-intercept-'));
  await issue(dir, {
    caName: 'metal-l2-intercept-test-ca',
    commonName: hosts[0] ?? 'localhost',
    subjectAltName: hosts.map((h) => `DNS:${h}`).join(','),
  });
  const caFile = join(dir, 'ca.crt');
  const [ca, cert, key] = await Promise.all([
    readFile(caFile, 'utf8'),
    readFile(join(dir, 'tls.crt'), 'utf8'),
    readFile(join(dir, 'tls.key'), 'utf8'),
  ]);
  return { dir, caFile, ca, cert, key };
}

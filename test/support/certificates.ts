import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A throw-away CA and a serving certificate for 127.0.0.1/localhost, made with openssl (what the
 * chart's cert-manager or Helm genCA does in a cluster). Returns the directory holding tls.crt and
 * tls.key, and the CA bundle for a webhook configuration's caBundle.
 */
export async function makeServingCertificate(): Promise<{ certDir: string; caBundle: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'metal-l2-certs-'));
  const ca = join(dir, 'ca');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=metal-l2-test-ca',
    '-keyout',
    `${ca}.key`,
    '-out',
    `${ca}.crt`,
  ]);
  await writeFile(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  await run('openssl', [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    join(dir, 'tls.key'),
    '-out',
    join(dir, 'tls.csr'),
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    join(dir, 'tls.csr'),
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    join(dir, 'ext.cnf'),
    '-out',
    join(dir, 'tls.crt'),
  ]);
  return { certDir: dir, caBundle: (await readFile(`${ca}.crt`)).toString('base64') };
}

/**
 * A throw-away CA and one serving certificate for `hosts` (default api.equinix.com), for an
 * intercepting proxy that stands in for a real API host. `caFile` is what the client trusts
 * (SSL_CERT_FILE for a Go program), `cert` and `key` are what the proxy serves (PEM).
 */
export async function makeInterceptCertificate(
  hosts: readonly string[] = ['api.equinix.com'],
): Promise<{ dir: string; caFile: string; ca: string; cert: string; key: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'metal-l2-intercept-'));
  const ca = join(dir, 'ca');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=metal-l2-intercept-test-ca',
    '-keyout',
    `${ca}.key`,
    '-out',
    `${ca}.crt`,
  ]);
  await writeFile(join(dir, 'ext.cnf'), `subjectAltName=${hosts.map((h) => `DNS:${h}`).join(',')}\nextendedKeyUsage=serverAuth\n`);
  await run('openssl', [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    `/CN=${hosts[0] ?? 'localhost'}`,
    '-keyout',
    join(dir, 'tls.key'),
    '-out',
    join(dir, 'tls.csr'),
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    join(dir, 'tls.csr'),
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    join(dir, 'ext.cnf'),
    '-out',
    join(dir, 'tls.crt'),
  ]);
  const [caPem, cert, key] = await Promise.all([
    readFile(`${ca}.crt`, 'utf8'),
    readFile(join(dir, 'tls.crt'), 'utf8'),
    readFile(join(dir, 'tls.key'), 'utf8'),
  ]);
  return { dir, caFile: `${ca}.crt`, ca: caPem, cert, key };
}

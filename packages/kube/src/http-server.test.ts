import { expect, test } from '@jest/globals';
import { parseBindAddress } from './http-server.js';

test.each([
  [':8080', { host: undefined, port: 8080 }],
  ['127.0.0.1:8081', { host: '127.0.0.1', port: 8081 }],
  ['[::1]:9000', { host: '::1', port: 9000 }],
  ['localhost:0', { host: 'localhost', port: 0 }],
  ['0', undefined],
  ['', undefined],
])('bind address %p', (text, want) => {
  expect(parseBindAddress(text)).toEqual(want);
});

test.each(['8080', 'host:', ':99999', 'a:b'])('bind address %p is refused', (text) => {
  expect(() => parseBindAddress(text)).toThrow('bind address');
});

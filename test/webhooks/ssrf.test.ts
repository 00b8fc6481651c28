import { describe, expect, it } from 'vitest';
import { assertPublicUrl, isPrivateAddress } from '../../src/platform/ssrf.ts';

describe('SSRF address classification', () => {
  it('refuses loopback, private, link-local, metadata and reserved addresses in every IPv6 spelling of IPv4', () => {
    for (const address of [
      '127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.0.1', '169.254.169.254', '100.100.100.200', '0.0.0.0', '224.0.0.1', '255.255.255.255',
      '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', 'fec0::1', 'ff02::1',
      '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:0:7f00:1', '::7f00:1', '::127.0.0.1',
      '64:ff9b::7f00:1', '64:ff9b::10.0.0.1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::1', '2002:c0a8:1::',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
  });

  it('accepts public unicast addresses, also when embedded in IPv6', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  it('refuses URLs whose host is a private address written in decimal, hex, octal or short form', async () => {
    for (const url of [
      'http://2130706433/',
      'http://0x7f000001/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://[64:ff9b::127.0.0.1]/',
      'http://[2002:a00:1::]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://localhost:8080/',
    ]) {
      await expect(assertPublicUrl(url, { allowPrivate: false }), url).rejects.toMatchObject({ code: 'TARGET_FORBIDDEN' });
    }
  });

  it('allows public literal targets and, when the deployment allows it, private ones', async () => {
    await expect(assertPublicUrl('https://93.184.216.34/hook', { allowPrivate: false })).resolves.toBeInstanceOf(URL);
    await expect(assertPublicUrl('http://127.0.0.1:9/hook', { allowPrivate: true })).resolves.toBeInstanceOf(URL);
  });

  it('rejects other schemes and credentials in the URL as invalid', async () => {
    for (const url of ['file:///etc/passwd', 'gopher://example.com/', 'https://user:pass@example.com/', 'not a url']) {
      await expect(assertPublicUrl(url, { allowPrivate: true }), url).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    }
  });
});

import { createServer } from 'node:http';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { assertPublicUrl, guardedConnector, isPrivateAddress } from '../../src/platform/ssrf.ts';

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

  it('refuses the rest of 64:ff9b::/32, the NAT64 local-use prefix and other reserved IPv6 space, and judges the well-known prefix by its IPv4', () => {
    for (const address of [
      '64:ff9b:2::808:808', '64:ff9b:ffff::1', '64:ff9b:0:1::808:808', '64:ff9b:1::808:808', '64:ff9b:1::a00:1', '64:ff9b::ac10:1',
      '4000::1', '5f00::1', '2001:2::1', '2001:10::1', '3fff::1', '2001:db8::1', '100::1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    expect(isPrivateAddress('64:ff9b::5db8:d822')).toBe(false);
  });

  it('judges a Teredo address by the server and the client IPv4 it embeds', () => {
    // 2001:0:<server>:<flags>:<port ^ ffff>:<client ^ ffff ffff>; server 65.54.227.120.
    expect(isPrivateAddress('2001:0:4136:e378:8000:63bf:f7f7:f7f7'), 'client 8.8.8.8').toBe(false);
    expect(isPrivateAddress('2001:0:4136:e378:8000:63bf:f5ff:fffe'), 'client 10.0.0.1').toBe(true);
    expect(isPrivateAddress('2001:0:4136:e378:8000:63bf:80ff:fffe'), 'client 127.0.0.1').toBe(true);
    expect(isPrivateAddress('2001:0:4136:e378:8000:63bf:5601:5601'), 'client 169.254.169.254').toBe(true);
    expect(isPrivateAddress('2001:0:a00:1:8000:63bf:f7f7:f7f7'), 'server 10.0.0.1').toBe(true);
    expect(isPrivateAddress('2001::7f00:1:8000:63bf:f7f7:f7f7'), 'server 127.0.0.1').toBe(true);
  });

  it('refuses a name that does not resolve also when private targets are allowed', async () => {
    await expect(assertPublicUrl('http://no-such-host.invalid/', { allowPrivate: true })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(assertPublicUrl('http://backend.internal/', { allowPrivate: true, resolve: async () => [] })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(assertPublicUrl('http://backend.internal/', { allowPrivate: true, resolve: async () => ['10.0.0.5'] })).resolves.toBeInstanceOf(URL);
  });
});

describe('connect-time guard', () => {
  it('refuses to connect to a private IP literal, which undici connects to without a lookup, unless private targets are allowed', async () => {
    let connections = 0;
    const server = createServer((_incoming, outgoing) => outgoing.end('ok'));
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const strict = new Agent({ connect: guardedConnector({ allowPrivate: false }, { timeout: 2_000 }) });
    const open = new Agent({ connect: guardedConnector({ allowPrivate: true }, { timeout: 2_000 }) });
    try {
      for (const url of [`http://127.0.0.1:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`]) {
        await expect(request(url, { dispatcher: strict }), url).rejects.toMatchObject({ code: 'ETARGETFORBIDDEN' });
      }
      expect(connections).toBe(0);
      const allowed = await request(`http://127.0.0.1:${port}/`, { dispatcher: open });
      expect(await allowed.body.text()).toBe('ok');
      expect(connections).toBe(1);
    } finally {
      await Promise.all([strict.close(), open.close()]);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});


import { describe, expect, it } from 'vitest';

import { checkWebhookTarget, classifyAddress, type Lookup, TargetRefused } from './ssrf';

const strict = { allowHttp: false, allowPrivate: false };
const relaxed = { allowHttp: true, allowPrivate: true };

/** A resolver that answers every name with the given addresses, as a poisoned or internal DNS would. */
const resolvingTo =
  (...addresses: string[]): Lookup =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

async function refusal(url: string, policy = strict, lookup?: Lookup): Promise<string> {
  const error = await checkWebhookTarget(url, policy, { lookup }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, `${url} was accepted`).toBeInstanceOf(TargetRefused);
  return (error as Error).message;
}

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['93.184.215.14', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.5', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'],
    ['2002:7f00:0001::', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['ff02::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
    ['::127.0.0.1', 'reserved'],
    ['not an address', 'reserved'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });
});

describe('checkWebhookTarget with the flags unset', () => {
  it('accepts https to a public address and connects to the address it checked', async () => {
    const target = await checkWebhookTarget('https://hooks.example.com/plants?x=1', strict, { lookup: resolvingTo('93.184.215.14') });
    expect(target).toMatchObject({ address: '93.184.215.14', family: 4 });
    expect(target.url.href).toBe('https://hooks.example.com/plants?x=1');
    expect((await checkWebhookTarget('https://[2606:4700:4700::1111]:8443/h', strict)).address).toBe('2606:4700:4700::1111');
  });

  it('refuses loopback in every spelling the URL parser accepts', async () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://127.1/',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://0x7f.1/',
      'https://017700000001/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[0:0:0:0:0:ffff:7f00:1]/',
      'https://0.0.0.0/',
      'https://0/',
    ]) {
      expect(await refusal(url)).toMatch(/loopback|not a destination|unspecified/);
    }
  });

  it('refuses the cloud metadata address and other link-local and private literals', async () => {
    expect(await refusal('https://169.254.169.254/latest/meta-data/')).toMatch(/169\.254\.169\.254 is a link-local address/);
    expect(await refusal('https://[fe80::1]/')).toMatch(/link-local/);
    expect(await refusal('https://10.1.2.3/')).toMatch(/private/);
    expect(await refusal('https://[fd00::1]/')).toMatch(/private/);
  });

  it('refuses a name that resolves to 10.x, or to any private address among public ones', async () => {
    expect(await refusal('https://internal.example.com/', strict, resolvingTo('10.0.0.5'))).toMatch(/internal\.example\.com \(10\.0\.0\.5\) is a private address/);
    expect(await refusal('https://mixed.example.com/', strict, resolvingTo('93.184.215.14', '10.0.0.5'))).toMatch(/10\.0\.0\.5/);
    expect(await refusal('https://mapped.example.com/', strict, resolvingTo('::ffff:169.254.169.254'))).toMatch(/link-local/);
  });

  it('refuses localhost as the system resolver answers it (a real lookup)', async () => {
    expect(await refusal('https://localhost/')).toMatch(/localhost \((127\.0\.0\.1|::1)\) is a loopback address/);
  });

  it('refuses names that do not resolve', async () => {
    const nowhere: Lookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect(await refusal('https://nowhere.invalid/', strict, nowhere)).toMatch(/does not resolve/);
    expect(await refusal('https://empty.example.com/', strict, resolvingTo())).toMatch(/does not resolve/);
  });

  it('refuses http, other schemes, credentials, fragments and ports of other protocols', async () => {
    expect(await refusal('http://93.184.215.14/')).toMatch(/must use https/);
    expect(await refusal('ftp://93.184.215.14/')).toMatch(/must use https/);
    expect(await refusal('file:///etc/passwd')).toMatch(/must use https/);
    expect(await refusal('https://user:pass@93.184.215.14/')).toMatch(/user name or password/);
    expect(await refusal('https://user@93.184.215.14/')).toMatch(/user name or password/);
    expect(await refusal('https://93.184.215.14/#x')).toMatch(/fragment/);
    expect(await refusal('https://93.184.215.14:25/')).toMatch(/port 25/);
    expect(await refusal('https://93.184.215.14:6379x/')).toMatch(/not a valid/);
    expect(await refusal(`https://example.com/${'a'.repeat(2000)}`)).toMatch(/at most 2000/);
    // Short enough as typed, too long as stored (the parser percent-encodes): answers promise at most 2000.
    expect(await refusal(`https://93.184.215.14/${' '.repeat(700)}x`)).toMatch(/at most 2000 characters once percent-encoded/);
    expect(await refusal('not a url')).toMatch(/not a valid/);
  });
});

describe('checkWebhookTarget with WEBHOOKS_ALLOW_HTTP=1 and WEBHOOKS_ALLOW_PRIVATE=1', () => {
  it('accepts http to loopback and https to private addresses', async () => {
    expect((await checkWebhookTarget('http://127.0.0.1:8080/hook', relaxed)).address).toBe('127.0.0.1');
    expect((await checkWebhookTarget('https://10.0.0.5/hook', relaxed)).address).toBe('10.0.0.5');
    expect((await checkWebhookTarget('https://internal.example.com/', relaxed, { lookup: resolvingTo('10.0.0.5') })).address).toBe('10.0.0.5');
  });

  it('still refuses http anywhere but loopback, and addresses that are no destination', async () => {
    expect(await refusal('http://10.0.0.5/', relaxed)).toMatch(/only to a loopback address/);
    expect(await refusal('http://rebind.example.com/', relaxed, resolvingTo('127.0.0.1', '10.0.0.5'))).toMatch(/only to a loopback address/);
    expect(await refusal('https://0.0.0.0/', relaxed)).toMatch(/not a destination/);
    expect(await refusal('https://224.0.0.1/', relaxed)).toMatch(/multicast/);
  });

  it('needs WEBHOOKS_ALLOW_PRIVATE for loopback even with http allowed', async () => {
    expect(await refusal('http://127.0.0.1:8080/', { allowHttp: true, allowPrivate: false })).toMatch(/loopback address; webhooks go to public addresses only/);
  });
});

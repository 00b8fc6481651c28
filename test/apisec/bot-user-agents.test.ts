import { describe, expect, it } from 'vitest';
import { classifyUserAgent, createBotClassifier } from '../../src/apisec/bots.ts';

const chromeOnAndroid = (device: string) => `Mozilla/5.0 (Linux; Android 10; ${device}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36`;

describe('user agents of people are not bots', () => {
  it.each([
    ['a phone whose brand ends in "bot"', chromeOnAndroid('CUBOT X30')],
    ['a phone model spelled with an underscore and a build', chromeOnAndroid('CUBOT_P30 Build/PPR1.180610.011')],
    ['a phone model with "BOT" and a dash', 'Mozilla/5.0 (Linux; Android 8.1.0; NUBOT-X1 Build/O11019) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.110 Mobile Safari/537.36'],
    ['a phone model holding "SEO"', chromeOnAndroid('SEOUL S2')],
    ['a phone model with a locale before it', 'Mozilla/5.0 (Linux; U; Android 4.4.2; en-us; CUBOT GT99 Build/KOT49H) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30'],
    ['Lynx', 'Lynx/2.8.9rel.1 libwww-FM/2.14 SSL-MM/1.4.1 OpenSSL/1.1.1d'],
    ['w3m', 'w3m/0.5.3+git20190105'],
    ['Links', 'Links (2.20.2; Linux 5.10.0-8-amd64 x86_64; GNU C 10.2.1; text)'],
    ['ELinks', 'ELinks/0.13.2 (textmode; Linux 5.10 x86_64; 165x45-2)'],
    ['Dillo', 'Dillo/3.0.5'],
    ['NetSurf', 'NetSurf/3.10 (Linux)'],
    ['a feature phone', 'Nokia6300/2.0 (05.00) Profile/MIDP-2.0 Configuration/CLDC-1.1'],
    ['Internet Explorer 8', 'Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0)'],
    ["an Android app's networking stack", 'Dalvik/2.1.0 (Linux; U; Android 11; SM-A515F Build/RP1A.200720.012)'],
    ["an iOS app's networking stack", 'MyApp/1.2 CFNetwork/1240.0.4 Darwin/20.6.0'],
    ['a television', 'Roku4640X/DVP-7.70 (297.70E04154A)'],
  ])('classes %s as human', (_name, agent) => {
    expect(classifyUserAgent(agent).class).toBe('human');
  });
});

describe('bots are still found', () => {
  it.each([
    ['a crawler borrowing a feature-phone browser token', 'KDDI-CA31 UP.Browser/6.2.0.7.3.129 (GUI) MMP/2.0 (compatible; ichiro/mobile goo;+http://search.goo.ne.jp/option/use/sub4/sub4-1/)', 'bot'],
    ['a crawler on an Android device string', 'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'bot'],
    ['a text browser used by a crawler that names itself', 'Lynx/2.8.9 (compatible; AcmeLinkBot/1.0; +https://acme.example/bot)', 'bot'],
    ['curl', 'curl/8.4.0', 'automation'],
    ['a headless browser', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36', 'automation'],
  ])('classes %s', (_name, agent, expected) => {
    expect(classifyUserAgent(agent).class).toBe(expected);
  });
});

describe('automation needs evidence beyond an unknown user agent', () => {
  it('calls an unknown agent human by its name, and automation when its requests lack browser headers', () => {
    const agent = 'AcmeTV/2.3 (SmartTV; Linux armv7l)';
    expect(classifyUserAgent(agent)).toMatchObject({ class: 'human' });
    const classifier = createBotClassifier({ verifyCrawlers: false });
    const bare = { userAgent: agent, headers: { 'user-agent': agent }, headerNames: ['host', 'user-agent'], httpVersion: '1.1', path: '/', clientIp: '10.9.0.1' };
    expect(classifier.classify(bare).class).toBe('automation');
    const headers = { host: 'shop.example', 'user-agent': agent, accept: 'text/html', 'accept-language': 'en', 'accept-encoding': 'gzip' };
    expect(classifier.classify({ ...bare, headers, headerNames: Object.keys(headers), clientIp: '10.9.0.2' }).class).toBe('human');
  });
});

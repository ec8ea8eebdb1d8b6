// Which image URLs a server fetches is its policy's call, never the request's: the page's own
// blob: and same-origin URLs in a tab, the hosts --image-url-hosts names in Node, else none.
import { describe, expect, it } from 'vitest';
import { allowedImageUrl, refusedUrlHint } from '../../src/api/image-urls.js';

const PAGE = { pageOrigin: 'http://localhost:5173' };
const HOSTS = { hosts: ['pictures.example', '127.0.0.1:8080'] };
const allowed = (url: string, policy: Parameters<typeof allowedImageUrl>[1]) => allowedImageUrl(url, policy)?.href;

describe('the image URL policy', () => {
  it("lets a page fetch its own blob: URLs, same-origin URLs and paths (resolved against its origin), and nothing else", () => {
    expect(allowed('blob:http://localhost:5173/5e1c-4b', PAGE)).toBe('blob:http://localhost:5173/5e1c-4b');
    expect(allowed('/pictures/cat.png', PAGE)).toBe('http://localhost:5173/pictures/cat.png');
    expect(allowed('http://localhost:5173/cat.png', PAGE)).toBe('http://localhost:5173/cat.png');
    for (const url of ['blob:http://evil.example/5e1c', 'http://localhost:5174/cat.png', 'https://localhost:5173/cat.png', 'http://pictures.example/cat.png', 'file:///etc/passwd']) {
      expect(allowed(url, PAGE), url).toBeUndefined();
    }
  });

  it('lets a server fetch http(s) URLs of the hosts it names, a port where the name has one, and no credentials in the URL', () => {
    expect(allowed('https://pictures.example/cat.png', HOSTS)).toBe('https://pictures.example/cat.png');
    expect(allowed('http://pictures.example:8443/cat.png', HOSTS)).toBe('http://pictures.example:8443/cat.png');
    expect(allowed('http://127.0.0.1:8080/cat.png', HOSTS)).toBe('http://127.0.0.1:8080/cat.png');
    for (const url of ['http://127.0.0.1:8081/cat.png', 'http://127.0.0.1/cat.png', 'http://a@pictures.example/cat.png', 'http://pictures.example.evil.example/cat.png', '/cat.png', 'blob:http://pictures.example/x', 'ftp://pictures.example/cat.png']) {
      expect(allowed(url, HOSTS), url).toBeUndefined();
    }
  });

  it('fetches nothing without a policy, and says what it would fetch when refusing', () => {
    expect(allowed('https://pictures.example/cat.png', undefined)).toBeUndefined();
    expect(refusedUrlHint(undefined)).toMatch(/allows none; send the image as a data: URL/);
    expect(refusedUrlHint(HOSTS)).toMatch(/only from http\(s\) URLs of pictures\.example, 127\.0\.0\.1:8080/);
    expect(refusedUrlHint(PAGE)).toMatch(/only from this page's blob: URLs and URLs of http:\/\/localhost:5173/);
  });
});

import { html, sendPage, type PageReply } from './html.js';

/** Records what a page sends. */
function fakeReply() {
  const sent = { status: 0, headers: {} as Record<string, string>, body: '' };
  const reply: PageReply = {
    status: (code: number) => ((sent.status = code), reply),
    type: (value: string) => ((sent.headers['content-type'] = value), reply),
    header: (name: string, value: string) => ((sent.headers[name] = value), reply),
    send: (body: string) => ((sent.body = body), reply),
  };
  return { reply, sent };
}

describe('server-rendered pages', () => {
  it('escapes interpolated text, not nested markup', () => {
    const name = `<script>alert("x")</script>`;
    expect(html`<p title="${name}">${name}${html`<b>ok</b>`}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<b>ok</b></p>',
    );
  });

  it('lets any page frame it and runs only its own nonce-tagged inline code', () => {
    const { reply, sent } = fakeReply();
    sendPage(reply, {
      title: 'T',
      body: html`<main>hi</main>`,
      script: 'console.log(1)',
      sources: { formAction: ["'self'", 'https://acs.example.com'] },
    });
    const csp = sent.headers['content-security-policy'];
    const nonce = /'nonce-([^']+)'/.exec(csp)![1];
    expect(csp).toBe(
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'none'; ` +
        `frame-src 'none'; form-action 'self' https://acs.example.com; frame-ancestors *; base-uri 'none'`,
    );
    expect(sent.body).toContain(`<script type="module" nonce="${nonce}">console.log(1)</script>`);
    expect(sent.body).toContain(`<style nonce="${nonce}">`);
    expect(sent.headers['cache-control']).toBe('no-store');

    const other = fakeReply();
    sendPage(other.reply, { title: 'T', body: html`` });
    expect(other.sent.headers['content-security-policy']).not.toContain(nonce);
  });
});

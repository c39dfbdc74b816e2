import { randomBytes } from 'node:crypto';

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Markup that is safe to insert as it is. */
export class Html {
  constructor(readonly value: string) {}
}

/** What a template may interpolate: text is escaped, Html is not, empty values render nothing. */
export type HtmlValue = Html | string | number | null | undefined | false | readonly HtmlValue[];

/** Tagged template that escapes every interpolated value unless it is already {@link Html}. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0];
  values.forEach((value, i) => {
    out += renderValue(value) + strings[i + 1];
  });
  return new Html(out);
}

function renderValue(value: HtmlValue): string {
  if (value instanceof Html) return value.value;
  if (typeof value === 'string') return escapeHtml(value);
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(renderValue).join('');
  return '';
}

/** What a page may reach besides its nonce'd inline code: origins, or `'self'`. Absent means none. */
export interface PageSources {
  /** Where its forms may post (form-action). */
  formAction?: string[];
  /** What it may frame (frame-src). */
  frames?: string[];
  /** Scripts it may import (script-src, besides its nonce). */
  scripts?: string[];
  /** fetch targets (connect-src). */
  connect?: string[];
}

/** A server-rendered page: one nonce covers its inline <style> and <script>. */
export interface Page {
  title: string;
  body: Html;
  /** Inline module script, nonce'd. */
  script?: string;
  sources?: PageSources;
  status?: number;
}

// Tiny, self-contained styles: the pages load no external assets.
const STYLE = `
*,*::before,*::after{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f6f7f9}
main{max-width:28rem;margin:0 auto;padding:1.25rem}
h1{font-size:1.25rem;margin:0 0 .75rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem .75rem;margin:0 0 1rem}
dt{color:#57606a}dd{margin:0;font-weight:600}
label{display:block;font-weight:600;margin-bottom:.25rem}
input{font:inherit;width:100%;padding:.5rem .625rem;border:1px solid #8c959f;border-radius:6px}
input:focus,button:focus{outline:3px solid #0969da;outline-offset:2px}
.hint{color:#57606a;font-size:.875rem;margin:.25rem 0 1rem}
.actions{display:flex;gap:.5rem}
button{font:inherit;padding:.5rem 1rem;border-radius:6px;border:1px solid #1f2328;background:#fff;cursor:pointer}
button.primary{background:#1f6feb;border-color:#1f6feb;color:#fff}
.sandbox{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.25rem .5rem;font-size:.875rem;margin-bottom:1rem}
.frame{width:100%;height:640px;max-height:85vh}
.ok{color:#1a7f37}.fail{color:#cf222e}
`;

/** What sending a page needs of an HTTP reply (Fastify's reply is one). */
export interface PageReply {
  status(code: number): PageReply;
  type(contentType: string): PageReply;
  header(name: string, value: string): PageReply;
  send(body: string): unknown;
}

/**
 * Sends a page with a Content-Security-Policy that lets payment pages frame it (frame-ancestors *),
 * allows inline code only with this response's nonce, and nothing else the page does not need.
 */
export function sendPage(reply: PageReply, page: Page): void {
  const nonce = randomBytes(16).toString('base64');
  const sources = page.sources ?? {};
  const csp = [
    `default-src 'none'`,
    `script-src 'nonce-${nonce}'${sources.scripts ? ` ${list(sources.scripts)}` : ''}`,
    `style-src 'nonce-${nonce}'`,
    `connect-src ${list(sources.connect)}`,
    `frame-src ${list(sources.frames)}`,
    `form-action ${list(sources.formAction)}`,
    `frame-ancestors *`,
    `base-uri 'none'`,
  ].join('; ');
  const script = page.script ? `<script type="module" nonce="${nonce}">${page.script}</script>` : '';
  void reply
    .status(page.status ?? 200)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff').send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
${page.body.value}
${script}
</body>
</html>`);
}

function list(sources: string[] | undefined): string {
  const unique = [...new Set(sources ?? [])];
  return unique.length ? unique.join(' ') : `'none'`;
}

/** The origin of an http(s) URL, or null for anything else (javascript:, data:, garbage). */
export function httpOrigin(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

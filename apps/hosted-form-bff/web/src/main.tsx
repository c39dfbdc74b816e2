import { render } from 'preact';
import { App } from './app.js';
import { readCheckoutLink } from './link.js';
import { framedOrderPage } from './navigate.js';
import './styles.css';

const root = document.getElementById('app')!;
const framed = window.top !== window.self;

/**
 * Renders the link in the fragment. In a frame, the form first moves to its order's own address,
 * whose CSP lets only that order's merchant frame it (the order id is in the fragment, which the
 * server never sees). On every fragment change too: a new fragment loads no page, so its order would
 * otherwise render under the policy of the page it replaced.
 */
function show(): void {
  const parsed = readCheckoutLink(window.location.hash);
  const orderId = parsed.ok ? parsed.link.orderId : null;
  const orderPage = framedOrderPage(window.location, framed, import.meta.env.BASE_URL, orderId);
  if (orderPage) window.location.replace(orderPage);
  else render(<App parsed={parsed} key={window.location.hash} />, root);
}

window.addEventListener('hashchange', show);
show();

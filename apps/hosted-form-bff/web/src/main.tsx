import { render } from 'preact';
import { App } from './app.js';
import { framedOrderPage } from './navigate.js';
import './styles.css';

// In a frame, the form moves to its order's own address, whose CSP lets only that order's merchant
// frame it (the order id is in the fragment, which the server never sees).
const orderPage = framedOrderPage(window.location, window.top !== window.self, import.meta.env.BASE_URL);
if (orderPage) {
  window.location.replace(orderPage);
} else {
  const root = document.getElementById('app')!;
  const show = () => render(<App hash={window.location.hash} key={window.location.hash} />, root);
  window.addEventListener('hashchange', show);
  show();
}

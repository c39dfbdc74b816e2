import { render } from 'preact';
import { App } from './app.js';
import './styles.css';

const root = document.getElementById('app')!;
const show = () => render(<App hash={window.location.hash} key={window.location.hash} />, root);
window.addEventListener('hashchange', show);
show();

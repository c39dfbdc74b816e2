// Theme colours and the compact layout, applied through CSSOM (the CSP allows no inline styles).
import type { HostedFormThemeColors } from '@byrd/contracts/browser';

const VARIABLES: Record<keyof HostedFormThemeColors, string> = {
  backgroundColor: '--bg',
  formBackgroundColor: '--form-bg',
  primaryColor: '--primary',
  textColor: '--text',
  effectsBackgroundColor: '--effects',
};

export function applyTheme(theme: HostedFormThemeColors, compact: boolean): void {
  const root = document.documentElement;
  for (const [key, variable] of Object.entries(VARIABLES) as [keyof HostedFormThemeColors, string][]) {
    root.style.setProperty(variable, theme[key]);
  }
  // Text on the action buttons: white or near-black, whichever reads better on the primary colour.
  root.style.setProperty('--on-primary', readableOn(theme.primaryColor));
  root.classList.toggle('compact', compact);
}

function readableOn(color: string): string {
  const rgb = toRgb(color);
  if (!rgb) return '#ffffff';
  const luminance = relativeLuminance(rgb);
  const contrastWhite = 1.05 / (luminance + 0.05);
  const contrastDark = (luminance + 0.05) / (relativeLuminance([17, 20, 24]) + 0.05);
  return contrastWhite >= contrastDark ? '#ffffff' : '#111418';
}

/** The browser's own parse of a CSS colour, as [r, g, b]. */
function toRgb(color: string): [number, number, number] | null {
  const probe = document.createElement('span');
  probe.style.color = color;
  probe.hidden = true;
  document.body.appendChild(probe);
  const computed = getComputedStyle(probe).color;
  probe.remove();
  const match = /rgba?\((\d+(?:\.\d+)?)[,\s]+(\d+(?:\.\d+)?)[,\s]+(\d+(?:\.\d+)?)/.exec(computed);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : null;
}

function relativeLuminance([r, g, b]: [number, number, number]): number {
  const channel = (value: number) => {
    const c = value / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

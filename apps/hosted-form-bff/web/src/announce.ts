// Messages for screen readers through the polite live region of index.html (present from page load).
let pending: number | undefined;

export function announce(message: string): void {
  const region = document.getElementById('announcer');
  if (!region) return;
  // Emptied first, so the same sentence twice in a row is read twice.
  region.textContent = '';
  window.clearTimeout(pending);
  pending = window.setTimeout(() => {
    region.textContent = message;
  }, 60);
}

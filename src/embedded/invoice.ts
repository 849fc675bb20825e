/**
 * The rendered invoice of `GET /v1/orders/invoice/{order}` (v1 part 4.3). The
 * seed says only "rendered HTML"; the sandbox renders a plain page from the
 * order's own fields so a script can check that it gets one. Every value is
 * escaped: order fields come from channels and customers.
 */

function escapeHtml(value: unknown): string {
  const t = typeof value === "string" || typeof value === "number" ? String(value) : "";
  return t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function address(label: string, value: unknown): string {
  const a = record(value);
  const join = (...parts: unknown[]): string => parts.filter((p) => typeof p === "string" && p !== "").join(" ");
  const lines = [join(a.firstname, a.lastname), join(a.company), join(a.street1), join(a.street2), join(a.city, a.stateprovince, a.postalcode), join(a.country)].filter(Boolean);
  return `<div class="address"><h2>${label}</h2>${lines.map((l) => `<div>${escapeHtml(l)}</div>`).join("")}</div>`;
}

export function renderInvoice(order: Record<string, unknown>): string {
  const lines = Array.isArray(order.items) ? order.items.map(record) : [];
  const rows = lines
    .map((l) => `<tr><td>${escapeHtml(l.sku)}</td><td>${escapeHtml(l.title)}</td><td>${escapeHtml(l.quantity)}</td><td>${escapeHtml(l.price)}</td></tr>`)
    .join("");
  return [
    `<!doctype html><html><head><meta charset="utf-8"><title>Invoice ${escapeHtml(order.order)}</title></head><body>`,
    `<h1>Invoice ${escapeHtml(order.order)}</h1>`,
    `<p>Date: ${escapeHtml(order.date)} · Channel: ${escapeHtml(order.channel)}</p>`,
    address("Bill to", order.billing),
    address("Ship to", order.shipping),
    `<table><thead><tr><th>SKU</th><th>Title</th><th>Qty</th><th>Price</th></tr></thead><tbody>${rows}</tbody></table>`,
    `<p>Total: ${escapeHtml(order.total)} ${escapeHtml(order.currency)}</p>`,
    "</body></html>",
  ].join("");
}

import { html, type Html } from "./html.js";

export type Section = "automations" | "runs" | "logs" | "health";

export interface PageOptions {
  title: string;
  account: string;
  csrf: string;
  active: Section;
  body: Html;
  /** Loads /assets/console.js (confirm dialogs, live polling); pages work without it. */
  script?: boolean;
}

const NAV: ReadonlyArray<{ section: Section; href: string; label: string }> = [
  { section: "automations", href: "/automations", label: "Automations" },
  { section: "logs", href: "/logs", label: "Logs" },
  { section: "health", href: "/health", label: "Health" },
];

function head(title: string, script: boolean, csrf: string | null): Html {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${csrf === null ? "" : html`<meta name="csrf-token" content="${csrf}">`}
<title>${title} · Conveyor</title>
<link rel="stylesheet" href="/assets/console.css">
${script ? html`<script src="/assets/console.js" defer></script>` : ""}
</head>`;
}

/**
 * A whole console page: skip link, the navigation (the run page belongs to
 * Automations, so no link is current there), who is signed in with the
 * sign-out form, and the body in `<main id="main">`.
 */
export function page(o: PageOptions): string {
  const links = NAV.map(
    (n) => html`<li><a href="${n.href}"${o.active === n.section ? html` aria-current="page"` : ""}>${n.label}</a></li>`,
  );
  return `<!doctype html>\n${html`<html lang="en">
${head(o.title, o.script === true, o.csrf)}
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<a class="brand" href="/automations">Conveyor</a>
<nav aria-label="Main"><ul>${links}</ul></nav>
<form class="signout" method="post" action="/sign-out">
<input type="hidden" name="_csrf" value="${o.csrf}">
<span class="who">Signed in as <strong>${o.account}</strong></span>
<button type="submit">Sign out</button>
</form>
</header>
<main id="main" tabindex="-1">
${o.body}
</main>
</body>
</html>`.value}\n`;
}

/** A page without navigation: the sign-in form, and refusals shown to a browser that is not signed in. */
export function barePage(title: string, body: Html): string {
  return `<!doctype html>\n${html`<html lang="en">
${head(title, false, null)}
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><span class="brand">Conveyor</span></header>
<main id="main" tabindex="-1" class="narrow">
${body}
</main>
</body>
</html>`.value}\n`;
}

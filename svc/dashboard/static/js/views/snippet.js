// How a web app sends its reports to this service: the code a project's settings page and the
// empty report list show, with the project's own API key filled in.

import { copyButton, h } from "../dom.js";

export function widgetSnippet(project) {
  const endpoint = `${location.origin}/api/v1/reports`;
  return `<script>
  // svc: send a bug report from your web app to project ${JSON.stringify(project.name)}.
  window.reportBug = async function (title, description, severity = "medium", category = "bug") {
    // Sent as Idempotency-Key: should you add retries, resend this same value and one bug is
    // filed once.
    const attempt = Date.now().toString(36) + Math.random().toString(36).slice(2);
    const response = await fetch(${JSON.stringify(endpoint)}, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "X-API-Key": ${JSON.stringify(project.apiKey)},
        "Idempotency-Key": attempt,
      },
      body: JSON.stringify({
        title, description, severity, category,
        metadata: { url: location.href, userAgent: navigator.userAgent,
                    viewport: { width: innerWidth, height: innerHeight } },
      }),
    });
    return response.json(); // { trackingId: "${project.trackingPrefix}-1", ... }
  };
</script>`;
}

export function snippetBlock(project) {
  const code = widgetSnippet(project);
  return h("div", { class: "snippet" },
    h("pre", { tabindex: "0", "aria-label": "Embed snippet" }, h("code", {}, code)),
    copyButton(() => code, "embed snippet"));
}

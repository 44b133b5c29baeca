// How a web app embeds the reporter: one script tag with the project's own API key, as a
// project's settings page and the empty report list show it (docs/widget.md).

import { copyButton, h } from "../dom.js";

export function widgetSnippet(project) {
  return `<script src="${location.origin}/widget.js" data-project-key="${project.apiKey}"
        crossorigin="anonymous" async></script>`;
}

export function snippetBlock(project) {
  const code = widgetSnippet(project);
  return h("div", { class: "snippet" },
    h("pre", { tabindex: "0", "aria-label": "Embed snippet" }, h("code", {}, code)),
    copyButton(() => code, "embed snippet"));
}

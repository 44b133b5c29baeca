// Whether the project's reporters hear back by mail and get a status page to follow their
// report (owners; docs/reporter-updates.md).

import { api } from "../api.js";
import { form, h, notice } from "../dom.js";

const EVENTS = [
  ["received", "A receipt when the report arrives"],
  ["public_comment", "Each comment marked \u201cReply to reporter\u201d"],
  ["resolved", "When the report is resolved or closed"],
];

export function reporterUpdatesPanel(project, owner) {
  const chosen = project.settings.reporterUpdates;
  const saved = notice("");
  saved.hidden = true;
  return h("section", { class: "panel", "aria-label": "Reporter updates" },
    h("h2", {}, "Reporter updates"),
    form({ "aria-label": "Reporter updates" }, [
      h("p", { class: "hint" }, "Reporters who leave an e-mail address get these mails, each with a link to a page where they follow the report, add to it, or say it still happens."),
      h("label", { class: "switch" }, h("input", { type: "checkbox", name: "enabled", checked: chosen.enabled, disabled: !owner }),
        " Keep reporters up to date"),
      h("fieldset", { class: "switches" }, h("legend", {}, "Mail them"),
        EVENTS.map(([value, text]) => h("label", {}, h("input", { type: "checkbox", name: `event.${value}`,
          checked: chosen.events.includes(value), disabled: !owner }), " ", text))),
      owner ? h("button", { type: "submit" }, "Save reporter updates") : h("p", { class: "hint" }, "Only the owner can change this."),
      saved,
    ], async (values) => {
      const updated = await api.patch(`/projects/${project.id}`, { settings: { reporter_updates: {
        enabled: Boolean(values.enabled),
        events: EVENTS.map(([value]) => value).filter((value) => values[`event.${value}`]),
      } } });
      Object.assign(project, updated);
      saved.textContent = project.settings.reporterUpdates.enabled ? "Reporters are kept up to date." : "Reporters get no mails.";
      saved.hidden = false;
    }));
}
